// The GL flavour of src/gpu, decided in this one place: WebGL2 (GL ES 3.0, Emscripten) or desktop
// OpenGL 3.3 core. Not a GL loader: native builds link libGL's 3.3 entry points directly.
#pragma once

#if defined(__EMSCRIPTEN__)
#include <GLES3/gl3.h>
#include <emscripten/em_macros.h>
#define GPU_JS_EXPORT extern "C" EMSCRIPTEN_KEEPALIVE
#else
#define GL_GLEXT_PROTOTYPES
#include <GL/gl.h>
#include <GL/glext.h>
#define GPU_JS_EXPORT extern "C"
#endif

#include <string>

namespace gpu {

// The lines put before every file of shaders/ (they have no #version line): GLSL ES 3.00 with
// highp floats in the browser, GLSL 3.30 core natively.
const char* glsl_header();

// The full path of a file of shaders/: embedded in the wasm under /shaders, read from the source
// tree natively (ATTN_SHADER_DIR).
std::string shader_path(const std::string& file_name);

// The GPU's name as the driver gives it (in a browser the unmasked one when offered), and whether
// it is a software rasteriser (SwiftShader, llvmpipe, ...), which is slower than the CPU kernels.
std::string renderer_name();
bool software_renderer(const std::string& renderer);

// Turns float render targets on: WebGL2 needs EXT_color_buffer_float (again after every context
// restore); GL 3.3 has them in core. False when the browser does not offer them.
bool enable_float_render_targets();

// True while the browser has taken the WebGL context away; never natively.
bool context_is_lost();

// Calls on_lost / on_restored when the browser loses / gives back the canvas's WebGL context
// (and asks it to restore the context). Natively nothing: desktop contexts are not lost.
void watch_context(void (*on_lost)(), void (*on_restored)());

}  // namespace gpu
