// The few GL building blocks src/gpu's passes share: the GL state of a pass, textures and render
// targets, and programs built from shaders/. Not a renderer.
#pragma once
#include <string>

#include "gl_platform.h"

namespace gpu {

// The GL state of a pass, set without reading anything back (in a browser every glGet is a
// synchronous trip to the GPU process: ~0.3 ms each). On construction it sets what the passes need:
// no blending, scissor, depth, stencil or culling; tight pixel rows. On destruction it binds the
// window's framebuffer again. Nothing else needs restoring: the only other GL user, ImGui's
// renderer (imgui_renderer.h), sets all the state it draws with every frame.
class PassState {
 public:
  PassState();
  ~PassState();
  PassState(const PassState&) = delete;
  PassState& operator=(const PassState&) = delete;
};

// A 2D texture read with texelFetch (nearest, clamped) and its size in texels.
struct Texture {
  GLuint id = 0;
  int width = 0, height = 0;
};

// A texture with a framebuffer that renders into it.
struct RenderTarget {
  Texture texture;
  GLuint framebuffer = 0;
  bool complete = false;  // the GPU can render into it (checked when its size changes)
};

// (Re)allocates `texture` as width × height texels of internal_format when its size differs
// (contents undefined until uploaded or rendered). Leaves it bound to the active unit.
void allocate_texture(Texture& texture, GLenum internal_format, GLenum format, GLenum type, int width, int height);

// Same for a render target; false when the GPU cannot render into that format at that size.
bool allocate_target(RenderTarget& target, GLenum internal_format, GLenum format, GLenum type, int width, int height);

// Deletes the GL objects (the context is alive) / drops their names (the context was lost with them).
void release(Texture& texture);
void release(RenderTarget& target);
void forget(Texture& texture);
void forget(RenderTarget& target);

// Builds a program from two files of shaders/. On failure: 0, and `error` holds the reason with
// the file name and the GL info log (also printed to stderr).
GLuint build_program(const char* vertex_file, const char* fragment_file, std::string* error);

// A pass: begin_pass makes `program` current and renders into all of `target`; then set its
// uniforms and inputs; draw_full_target draws one triangle over the target (a vertex array must be
// bound: core GL needs one even without attributes).
void begin_pass(GLuint program, const RenderTarget& target);
void bind_input(GLuint program, const char* name, int unit, const Texture& texture);
// The same with a location looked up once (the attention passes).
void bind_input(GLint location, int unit, const Texture& texture);
void draw_full_target();

// Drops pending GL errors raised by earlier, unrelated calls, so glGetError then speaks of ours.
void clear_gl_errors();

}  // namespace gpu
