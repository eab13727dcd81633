// The explainer's main(): window, Dear ImGui, the AppState, the frame loop. The same program runs
// in the browser and natively; platform.h hides the difference.
// Native flags (for debugging and smoke tests):
//   --frames N         draw N frames, then exit 0
//   --screenshot FILE  with --frames: write the last frame to FILE (binary PPM)
//   --size WxH         window size (default 1280x800)
//   --state JSON       initial inputs, as setState() takes them, e.g. '{"view":"weights"}'
//   --model DIR        open a model folder (GPT-2, Llama, Mistral, Qwen, Gemma, BERT, DistilBERT, RoBERTa) and show it (as "Load a model…" does)
//   --print-state      with --frames: print getState()'s JSON (view_data included) after the last frame
//   --gpu-check        compare the GPU attention passes with the scalar kernel on odd shapes,
//                      print the table, exit 0 (all agree) or 1
#include <imgui.h>
#include <imgui_impl_glfw.h>

#include <GLFW/glfw3.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../api/compute_json.h"
#include "../gpu/gpu.h"
#include "../gpu/gpu_check.h"
#include "../ui/layout.h"
#include "../ui/panels.h"
#include "fonts.h"
#include "js_api.h"
#include "platform.h"

namespace {

struct Options {
  int frames = -1;
  std::string screenshot;
  int width = 1280, height = 800;
  std::string state_json;
  std::string model_dir;
  bool gpu_check = false;
  bool print_state = false;
};

bool parse_options(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--frames" && has_value) o->frames = std::atoi(argv[++i]);
    else if (a == "--screenshot" && has_value) o->screenshot = argv[++i];
    else if (a == "--state" && has_value) o->state_json = argv[++i];
    else if (a == "--model" && has_value) o->model_dir = argv[++i];
    else if (a == "--gpu-check") o->gpu_check = true;
    else if (a == "--print-state") o->print_state = true;
    else if (a == "--size" && has_value && std::sscanf(argv[++i], "%dx%d", &o->width, &o->height) == 2) continue;
    else {
      std::fprintf(stderr, "error: unknown or incomplete option '%s'\n", a.c_str());
      return false;
    }
  }
  return true;
}

// GPU objects first (they need the context), then ImGui, then the window.
void shut_down(GLFWwindow* window) {
  gpu::stop();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse_options(argc, argv, &options)) return 2;
  if (!glfwInit()) {
    std::fprintf(stderr, "error: could not start GLFW (no display?)\n");
    return 1;
  }
  platform::set_context_hints();
  GLFWwindow* window = glfwCreateWindow(options.width, options.height, "Self-attention explainer", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "error: could not open a window with OpenGL 3.3 / WebGL2\n");
    glfwTerminate();
    return 1;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(1);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // layout is fixed; nothing to remember
  ImGui::GetIO().ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;  // Tab, arrows, Space, Enter
  // Device pixels per CSS pixel, times presentation mode's larger type: the font is rasterised at
  // this size (crisp, never a scaled bitmap) and every style size scaled by it.
  float scale = platform::device_pixel_ratio();
  bool light_theme = false;
  attn::ui::apply_theme(scale, light_theme);
  attn::FontFallbackState first_fonts;  // nothing shown yet: the UI font alone
  if (!fonts::build_atlas(first_fonts, scale)) {
    std::fprintf(stderr, "error: the UI font is missing\n");
    return 1;
  }
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  platform::init(window);
  // Panels copy with ImGui::SetClipboardText; route it to the real clipboard (the page's, on the web).
  ImGui::GetIO().ClipboardUserData = window;
  ImGui::GetIO().SetClipboardTextFn = [](void* user_data, const char* text) {
    platform::copy_to_clipboard(static_cast<GLFWwindow*>(user_data), text);
  };

  // ImGui's renderer and the GPU path need the GL context; compute's "backend": "webgl" reaches
  // the GPU from here on.
  if (!gpu::start()) {
    std::fprintf(stderr, "error: could not build the shaders that draw the interface\n");
    shut_down(window);
    return 1;
  }
  attn::register_backend(gpu::GpuAttention::kBackendName,
                         [](const attn::Matrix& query, const attn::Matrix& key, const attn::Matrix& value,
                            const attn::AttentionOptions& attention_options) {
                           return gpu::attention().attend(query, key, value, attention_options);
                         });
  if (options.gpu_check) {
    const bool agreed = gpu::print_check(gpu::attention(), gpu::standard_cases(), stdout);
    shut_down(window);
    return agreed ? 0 : 1;
  }

  static attn::AppState state = attn::make_initial_state();
#if !defined(__EMSCRIPTEN__)
  // Natively the app computes a loaded model's text itself, incrementally (the page's worker does on the web).
  state.model_run.page_forward = attn::transformer_forward_cached;
#endif
  static attn::ui::UiState ui;  // the panels' UI leftovers (ui_state.h)
#ifdef ATTN_TRAINED_MODEL_DIR
  // The model trained at build time (the default recipe, seed 1), through the same loader as any
  // folder: offered in the model picker from the first frame, not chosen.
  try {
    attn::LoadedModel model = attn::load_model_dir(ATTN_TRAINED_MODEL_DIR);
    model.name = attn::kBuiltInTrainedModel;
    attn::add_model(state, std::move(model));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "warning: the built-in trained model did not load (%s)\n", e.what());
  }
#endif
#if !defined(__EMSCRIPTEN__)  // (a page has no folders: it reads the files the learner gives it, src/app/js_model_api.cpp)
  if (!options.model_dir.empty()) {
    try {
      attn::LoadedModel model = attn::load_model_dir(options.model_dir);
      const std::string name = model.name;
      attn::add_model(state, std::move(model));
      attn::apply_state_json(state, {{"model", name}}, 0.0);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: --model: %s\n", e.what());
      return 2;
    }
  }
#endif
  if (!options.state_json.empty()) {
    try {
      attn::apply_state_json(state, nlohmann::json::parse(options.state_json), 0.0);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: --state: %s\n", e.what());
      return 2;
    }
  }
  js_api::attach(&state);

  int frame_count = 0;
  float font_scale = scale;  // the scale the atlas was built at
  unsigned announced_revision = state.revision;
  int announced_progress = 0;  // sweeps and the train view's probe report their progress to subscribers too
  double announced_at = -1;    // when (ImGui's clock), so growth alone is told at most kProgressEvery apart
  constexpr double kProgressEvery = 0.5;
  std::uint64_t shown_picture = 0;  // the fingerprint of the picture on the canvas
  platform::run_main_loop(window, [&]() -> bool {
    platform::sync_canvas_size(window);
    glfwPollEvents();
    gpu::poll_context_restored();  // a lost WebGL context came back: rebuild the GL objects
    platform::update_layout_screen(window);
    const float new_scale =
        attn::ui::ui_scale(platform::device_pixel_ratio(), state.inputs.present, attn::ui::layout().narrow);
    if (state.inputs.light_theme != light_theme) {
      light_theme = state.inputs.light_theme;
      attn::ui::apply_theme(scale, light_theme);
    }
    // Moved to another screen, zoomed, or presentation mode on or off: re-rasterise the font, rescale.
    // Text in a script the atlas lacks, or its fallback font arrived: build the atlas again.
    const bool new_glyphs = fonts::update(state);
    if (new_scale != scale) {
      scale = new_scale;
      attn::ui::apply_theme(scale, light_theme);
    }
    if (new_glyphs || font_scale != scale) {
      font_scale = scale;
      fonts::build_atlas(state.fonts, scale);
      gpu::rebuild_imgui_font();
    }
    platform::pump_text_field();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    attn::ui::draw_app(state, ui, ImGui::GetTime());
    platform::announce_text_field();
    // what grows between changes: a sweep's cells, the train view's probe (computed again as training runs)
    const int progress = state.heads_sweep.sweep.done + state.patch_sweep.sweep.done + state.train->probe.at_step;
    const double now = ImGui::GetTime();
    if (state.revision != announced_revision || (progress != announced_progress && now - announced_at >= kProgressEvery)) {
      // changed by the learner, a URL or the JS API, or something grew (the last growth is told too: a
      // later frame finds it different still)
      announced_revision = state.revision;
      announced_progress = progress;
      announced_at = now;
      platform::notify_state_changed(announced_revision);
    }
    ImGui::Render();
    int fb_w = 0, fb_h = 0;
    glfwGetFramebufferSize(window, &fb_w, &fb_h);
    const ImVec4 background = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
    // Drawn only when the picture changed (web): an idle page costs its ImGui frame, not a software
    // rasteriser's pass over every pixel and the compositor's (headless Chromium here, CPU seconds of
    // all its processes per 10 s idle: Flow 5.3 -> 1.9, Heads 5.0 -> 2.2, Weights 4.5 -> 2.0).
    const std::uint64_t picture = platform::keeps_last_picture()
        ? gpu::picture_fingerprint(ImGui::GetDrawData(), fb_w, fb_h, ImGui::ColorConvertFloat4ToU32(background))
        : shown_picture + 1;
    if (picture != shown_picture) {
      glViewport(0, 0, fb_w, fb_h);
      glClearColor(background.x, background.y, background.z, 1.0f);
      glClear(GL_COLOR_BUFFER_BIT);
      gpu::render_imgui(ImGui::GetDrawData(), fb_w, fb_h);
      shown_picture = picture;
    }
    ++frame_count;
    if (frame_count == options.frames) {
      const bool saved = options.screenshot.empty() || platform::save_screenshot(options.screenshot, fb_w, fb_h);
      if (!saved) std::fprintf(stderr, "error: could not write %s\n", options.screenshot.c_str());
      if (options.print_state) std::printf("%s\n", attn_get_state());
      glfwSwapBuffers(window);
      return false;
    }
    glfwSwapBuffers(window);
    if (frame_count == 1) platform::notify_first_frame();
    return true;
  });

  shut_down(window);
  if (options.frames > 0) std::printf("drew %d frames\n", frame_count);
  return 0;
}
