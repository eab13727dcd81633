// The platform edge: everything that differs between the browser (Emscripten) and a desktop
// window lives behind these few functions. Not UI: panels never include this.
#pragma once
#include <cstddef>
#include <functional>
#include <string>

struct GLFWwindow;

namespace platform {

// The UI font's bytes (a TrueType file), alive for the whole program; data is null if missing.
// Web: the site's ui_font.ttf, put at /ui_font.ttf by web/explainer.js. Native: embedded.
struct Bytes {
  const unsigned char* data = nullptr;
  std::size_t size = 0;
};
Bytes ui_font();

// Asks for a fallback font file (src/app/fonts.h): web: fetched from the site's fonts/ folder into
// the wasm file system, announced later (attn_font_arrived); native: read from the build's assets,
// announced at once. Either way fonts::file_arrived hears of it.
void request_font_file(const std::string& file);

// GL context hints: WebGL2 in the browser, OpenGL 3.3 core natively (the GLSL of shaders/).
void set_context_hints();

// Called once after the window exists: input fixes (wheel, touch) and canvas sizing.
void init(GLFWwindow* window);

// Device pixels per CSS pixel (1 natively). The canvas is rendered at CSS size x this ratio.
float device_pixel_ratio();

// Web: make the canvas's backing store follow its CSS size x DPR. Native: nothing.
void sync_canvas_size(GLFWwindow* window);

// Runs `frame` until the window closes (native) or forever (web: the browser's animation frames).
void run_main_loop(GLFWwindow* window, const std::function<bool()>& frame);

// Web: draws one frame now, outside the browser's animation frames (for soak tests that must
// run thousands of frames quickly). Native: nothing (the loop runs as fast as it can).
void run_one_frame();

// Web: true, a canvas that nothing drew on in a frame keeps showing its last picture (so a frame
// whose picture did not change is not drawn again). Native: false, every frame swaps the buffers.
bool keeps_last_picture();

// Tells the page that the first frame is on screen (resolves attentionExplainer.ready).
void notify_first_frame();

// Puts text on the system clipboard (web: navigator.clipboard, needs a user gesture; native: GLFW).
void copy_to_clipboard(GLFWwindow* window, const char* text);

// Web: tells the page that the inputs changed (attentionExplainer's state-changed listeners,
// localStorage of the checklist, the address bar). Native: nothing.
void notify_state_changed(unsigned revision);

// The screen as the layout sees it (src/ui/layout.h): the window's size in CSS pixels and
// whether the main pointer is a finger (web: a coarse pointer, or a touch seen on the canvas).
// Call once a frame before drawing.
void update_layout_screen(GLFWwindow* window);

// The active text field and the page's hidden <input> (src/app/text_field.cpp, web/touch.js):
// before each frame, the next queued edit goes to ImGui; after it, the page hears when a field
// becomes active or stops being active.
void pump_text_field();
void announce_text_field();
void notify_text_field(bool active);  // web: Module.onTextField(active); native: nothing

// Native only: writes the current framebuffer to a binary PPM (for smoke tests and screenshots).
bool save_screenshot(const std::string& path, int width, int height);

}  // namespace platform
