// The platform edge (see platform.h). One block per platform, chosen once here.
#include "platform.h"

#include <cstdio>
#include <vector>

#if defined(__EMSCRIPTEN__)
#define PLATFORM_WEB 1
#include <GLES3/gl3.h>
#include <emscripten.h>
#include <emscripten/html5.h>
#else
#define PLATFORM_NATIVE 1
#define GL_GLEXT_PROTOTYPES
#include <GL/gl.h>
extern const unsigned char ui_font_ttf[];  // cmake/embed_file.cmake
extern const std::size_t ui_font_ttf_size;
#endif
#include <GLFW/glfw3.h>
#include <imgui_impl_glfw.h>

#include "../ui/layout.h"
#include "fonts.h"
#include "../ui/panels.h"

namespace platform {

#if defined(PLATFORM_WEB)

namespace {
std::function<bool()> g_frame;

// Emscripten's GLFW hands over raw browser wheel deltas (pixels, opposite sign): rescale to
// ImGui's "lines" before forwarding, or a single notch scrolls a whole page.
void scroll_callback(GLFWwindow* window, double dx, double dy) {
  ImGui_ImplGlfw_ScrollCallback(window, -dx / 100.0, -dy / 100.0);
}

void loop_iteration() { g_frame(); }
}  // namespace

void set_context_hints() {}  // -sMIN/MAX_WEBGL_VERSION=2 decides: WebGL2 (GLSL ES 3.00)

Bytes ui_font() {
  static std::vector<unsigned char> bytes;
  if (bytes.empty())
    if (std::FILE* f = std::fopen("/ui_font.ttf", "rb")) {
      unsigned char chunk[16384];
      for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, f)) > 0;) bytes.insert(bytes.end(), chunk, chunk + n);
      std::fclose(f);
    }
  return bytes.empty() ? Bytes{} : Bytes{bytes.data(), bytes.size()};
}

void request_font_file(const std::string& file) {
  EM_ASM({ if (Module.requestFallbackFont) Module.requestFallbackFont(UTF8ToString($0)); }, file.c_str());
}

void init(GLFWwindow* window) {
  glfwSetScrollCallback(window, scroll_callback);
  sync_canvas_size(window);
}

float device_pixel_ratio() { return static_cast<float>(emscripten_get_device_pixel_ratio()); }

void sync_canvas_size(GLFWwindow* window) {
  // The page keeps the canvas's CSS size up to date (a ResizeObserver in web/explainer.js): asking
  // the DOM every frame would force a layout whenever the page changed (~0.7 ms a frame).
  double css_w = EM_ASM_DOUBLE({ return Module.canvasCssSize ? Module.canvasCssSize[0] : -1; });
  double css_h = EM_ASM_DOUBLE({ return Module.canvasCssSize ? Module.canvasCssSize[1] : -1; });
  if (css_w < 0) emscripten_get_element_css_size("#canvas", &css_w, &css_h);
  const float dpr = device_pixel_ratio();
  const int w = static_cast<int>(css_w * dpr + 0.5), h = static_cast<int>(css_h * dpr + 0.5);
  int cur_w = 0, cur_h = 0;
  glfwGetWindowSize(window, &cur_w, &cur_h);
  if (w > 0 && h > 0 && (w != cur_w || h != cur_h)) {
    // Not glfwSetWindowSize: at screen size it requests fullscreen. Browser.setCanvasSize changes
    // only the backing store; the stylesheet keeps the CSS size.
    EM_ASM({ Browser.setCanvasSize($0, $1); }, w, h);
  }
}

void run_main_loop(GLFWwindow*, const std::function<bool()>& frame) {
  g_frame = frame;
  emscripten_set_main_loop(loop_iteration, 0, true);
}

void run_one_frame() {
  if (g_frame) g_frame();
}

bool keeps_last_picture() { return true; }

void notify_first_frame() {
  EM_ASM({ if (Module.onFirstFrame) Module.onFirstFrame(); });
}

bool save_screenshot(const std::string&, int, int) { return false; }  // the page screenshots itself

void copy_to_clipboard(GLFWwindow*, const char* text) {
  EM_ASM({ if (Module.copyText) Module.copyText(UTF8ToString($0)); }, text);
}

void notify_state_changed(unsigned revision) {
  EM_ASM({ if (Module.onStateChanged) Module.onStateChanged($0); }, revision);
}

void update_layout_screen(GLFWwindow* window) {
  int w = 0, h = 0;
  glfwGetWindowSize(window, &w, &h);  // the backing store: CSS size x DPR
  const float dpr = device_pixel_ratio();
  // A finger: the page's media query says the main pointer is coarse, or web/touch.js saw a touch.
  const bool touch = EM_ASM_INT({
    if (Module.touchInput === undefined)
      Module.touchInput = !!(window.matchMedia && window.matchMedia("(pointer: coarse)").matches);
    return Module.touchInput ? 1 : 0;
  }) != 0;
  attn::ui::set_screen(static_cast<float>(w) / dpr, static_cast<float>(h) / dpr, dpr, touch);
}

void notify_text_field(bool active) {
  EM_ASM({ if (Module.onTextField) Module.onTextField(!!$0); }, active ? 1 : 0);
}

}  // namespace platform

void attn::ui::open_url(const char* url) {
  EM_ASM({ window.open(UTF8ToString($0), "_blank", "noopener"); }, url);
}

void attn::ui::save_text_file(const char* name, const char* mime, const std::string& text) {
  EM_ASM({ if (Module.downloadText) Module.downloadText(UTF8ToString($0), UTF8ToString($1), UTF8ToString($2)); },
         name, mime, text.c_str());
}

bool attn::ui::export_weights_png() {
  return EM_ASM_INT({ return Module.downloadWeightsPng ? (Module.downloadWeightsPng(), 1) : 0; }) != 0;
}

bool attn::ui::copy_permalink() {
  return EM_ASM_INT({ return Module.copyPermalink ? (Module.copyPermalink(), 1) : 0; }) != 0;
}

bool attn::ui::open_handout() {
  return EM_ASM_INT({ return Module.openHandout ? (Module.openHandout(), 1) : 0; }) != 0;
}

// Loading models: web/explainer.js reads or downloads the files and feeds them to js_model_api.cpp.
void attn::ui::request_model_files() {
  EM_ASM({ if (Module.requestModelFiles) Module.requestModelFiles(); });
}

void attn::ui::request_hub_model(const std::string& repo, const std::string& revision, const std::string& token) {
  EM_ASM({ if (Module.requestHubModel) Module.requestHubModel(UTF8ToString($0), UTF8ToString($1), UTF8ToString($2)); },
         repo.c_str(), revision.c_str(), token.c_str());
}

void attn::ui::request_builtin_model(const std::string& name) {
  EM_ASM({ if (Module.requestBuiltinModel) Module.requestBuiltinModel(UTF8ToString($0)); }, name.c_str());
}

void attn::ui::cancel_model_load() {
  EM_ASM({ if (Module.cancelModelLoad) Module.cancelModelLoad(); });
}

void attn::ui::unload_model(const std::string& name) {
  EM_ASM({ if (Module.unloadModel) Module.unloadModel(UTF8ToString($0)); }, name.c_str());
}

void attn::ui::forget_kept_model(const std::string& repo, const std::string& revision) {
  EM_ASM({ if (Module.forgetKeptModel) Module.forgetKeptModel(UTF8ToString($0), UTF8ToString($1)); },
         repo.c_str(), revision.c_str());
}

namespace platform {

#else  // PLATFORM_NATIVE

void set_context_hints() {
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
}

Bytes ui_font() { return {ui_font_ttf, ui_font_ttf_size}; }

void request_font_file(const std::string& file) {
  const std::string path = std::string(ATTN_FONT_DIR) + "/" + file;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f) std::fclose(f);
  fonts::file_arrived(file, f ? path : "");
}

void init(GLFWwindow*) {}
float device_pixel_ratio() { return 1.0f; }
void sync_canvas_size(GLFWwindow*) {}

void run_main_loop(GLFWwindow* window, const std::function<bool()>& frame) {
  while (!glfwWindowShouldClose(window))
    if (!frame()) break;
}

bool keeps_last_picture() { return false; }
void notify_first_frame() {}
void run_one_frame() {}
void copy_to_clipboard(GLFWwindow* window, const char* text) { glfwSetClipboardString(window, text); }
void notify_state_changed(unsigned) {}
void notify_text_field(bool) {}

void update_layout_screen(GLFWwindow* window) {
  int w = 0, h = 0;
  glfwGetWindowSize(window, &w, &h);
  attn::ui::set_screen(static_cast<float>(w), static_cast<float>(h), 1.0f, false);
}

}  // namespace platform

void attn::ui::open_url(const char* url) { std::printf("open in a browser: %s\n", url); }

void attn::ui::save_text_file(const char* name, const char*, const std::string& text) {
  FILE* f = std::fopen(name, "wb");
  const bool ok = f && std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (f) std::fclose(f);
  std::printf(ok ? "wrote %s\n" : "could not write %s\n", name);
}

bool attn::ui::export_weights_png() { return false; }
bool attn::ui::copy_permalink() { return false; }
bool attn::ui::open_handout() { return false; }

// Natively a model is a folder on disk, opened at start-up.
void attn::ui::request_model_files() {
  std::printf("to open a model folder, start the app with --model DIR "
              "(e.g. ./build_wasm.sh native --model path/to/gpt2)\n");
}

void attn::ui::request_hub_model(const std::string& repo, const std::string& revision, const std::string&) {
  std::printf("the desktop app does not download: fetch %s (revision %s) into a folder "
              "(config.json, model.safetensors, tokenizer files), then start it with --model DIR\n",
              repo.c_str(), revision.c_str());
}

void attn::ui::request_builtin_model(const std::string&) {}  // natively the built-in model loads at start
void attn::ui::cancel_model_load() {}  // natively a model loads before the window opens
void attn::ui::unload_model(const std::string& name) {
  std::printf("the desktop app keeps %s until it closes (start it without --model to leave it out)\n", name.c_str());
}
void attn::ui::forget_kept_model(const std::string&, const std::string&) {}  // nothing is kept natively

namespace platform {

bool save_screenshot(const std::string& path, int width, int height) {
  std::vector<unsigned char> rgba(static_cast<std::size_t>(width) * height * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  std::fprintf(f, "P6\n%d %d\n255\n", width, height);
  for (int y = height - 1; y >= 0; --y)  // GL's rows start at the bottom
    for (int x = 0; x < width; ++x) std::fwrite(&rgba[(static_cast<std::size_t>(y) * width + x) * 4], 1, 3, f);
  return std::fclose(f) == 0;
}

#endif

}  // namespace platform
