// The few GL building blocks src/gpu's passes share: a guard that puts back the GL state the app
// (ImGui) had, textures and render targets, and programs built from shaders/. Not a renderer.
#pragma once
#include <string>

#include "gl_platform.h"

namespace gpu {

// Saves, on construction, every piece of GL state a pass changes (framebuffers, viewport, program,
// vertex array, textures of units 0-2, blend/scissor/depth/stencil/cull, pixel-store settings)
// and restores it on destruction, so ImGui's next draw finds the state it left. While alive it
// sets what the passes need: no blending, scissor, depth, stencil or culling; tight pixel rows.
class SavedGlState {
 public:
  SavedGlState();
  ~SavedGlState();
  SavedGlState(const SavedGlState&) = delete;
  SavedGlState& operator=(const SavedGlState&) = delete;

 private:
  static constexpr int kUnits = 3;
  GLint draw_framebuffer_ = 0, read_framebuffer_ = 0, viewport_[4] = {0, 0, 0, 0}, program_ = 0, vertex_array_ = 0;
  GLint active_unit_ = 0, unit_textures_[kUnits] = {0, 0, 0};
  GLint unpack_alignment_ = 4, unpack_row_length_ = 0, pack_alignment_ = 4, pack_row_length_ = 0;
  GLboolean blend_ = GL_FALSE, scissor_ = GL_FALSE, depth_ = GL_FALSE, stencil_ = GL_FALSE, cull_ = GL_FALSE;
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
void draw_full_target();

// Drops pending GL errors raised by earlier, unrelated calls, so glGetError then speaks of ours.
void clear_gl_errors();

}  // namespace gpu
