// The GL flavour of src/gpu (see gl_platform.h): one block for the browser, one for the desktop.
// Not GL drawing: only what differs between WebGL2 and OpenGL 3.3.
#include "gl_platform.h"

#if defined(__EMSCRIPTEN__)
#include <emscripten.h>
#include <emscripten/html5.h>
#endif

namespace gpu {

#if defined(__EMSCRIPTEN__)

namespace {
void (*g_on_lost)() = nullptr;
void (*g_on_restored)() = nullptr;

EM_BOOL context_lost(int, const void*, void*) {
  if (g_on_lost) g_on_lost();
  return EM_TRUE;  // preventDefault: without it the browser never restores the context
}
EM_BOOL context_restored(int, const void*, void*) {
  if (g_on_restored) g_on_restored();
  return EM_TRUE;
}
}  // namespace

const char* glsl_header() { return "#version 300 es\nprecision highp float;\n"; }
std::string renderer_name() {
  // Firefox names the GPU in RENDERER; Chromium says "WebKit WebGL" there and names it only through
  // WEBGL_debug_renderer_info (which Firefox deprecates with a warning: asked for only when needed).
  char name[256] = "";
  EM_ASM({
    var text = String(GLctx.getParameter(GLctx.RENDERER) || "");
    if (text === "WebKit WebGL" || text === "") {
      var ext = GLctx.getExtension("WEBGL_debug_renderer_info");
      if (ext) text = String(GLctx.getParameter(ext.UNMASKED_RENDERER_WEBGL) || text);
    }
    stringToUTF8(text, $0, $1);
  }, name, sizeof name);
  return name;
}
std::string shader_path(const std::string& file_name) { return "/shaders/" + file_name; }

bool enable_float_render_targets() {
  return emscripten_webgl_enable_extension(emscripten_webgl_get_current_context(), "EXT_color_buffer_float");
}

bool context_is_lost() { return emscripten_is_webgl_context_lost(emscripten_webgl_get_current_context()); }

void watch_context(void (*on_lost)(), void (*on_restored)()) {
  g_on_lost = on_lost;
  g_on_restored = on_restored;
  emscripten_set_webglcontextlost_callback("#canvas", nullptr, EM_FALSE, context_lost);
  emscripten_set_webglcontextrestored_callback("#canvas", nullptr, EM_FALSE, context_restored);
}

#else

const char* glsl_header() { return "#version 330 core\n"; }
std::string renderer_name() {
  const GLubyte* name = glGetString(GL_RENDERER);
  return name ? reinterpret_cast<const char*>(name) : "";
}
std::string shader_path(const std::string& file_name) { return std::string(ATTN_SHADER_DIR) + "/" + file_name; }
bool enable_float_render_targets() { return true; }
bool context_is_lost() { return false; }
void watch_context(void (*)(), void (*)()) {}

#endif

bool software_renderer(const std::string& renderer) {
  for (const char* marker : {"SwiftShader", "llvmpipe", "softpipe", "Software", "Microsoft Basic Render"})
    if (renderer.find(marker) != std::string::npos) return true;
  return false;
}

}  // namespace gpu
