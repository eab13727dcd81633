// Attention on the GPU: softmax(Q·Kᵀ·scale)·V as five fragment-shader passes over float textures
// (WebGL2 with EXT_color_buffer_float in the browser, OpenGL 3.3 natively), checked against the
// scalar kernel (gpu_check.h). Not the lesson's trace, not the mistakes: weights and output only.
#pragma once
#include <string>
#include <vector>

#include "../core/attention.h"
#include "gl_objects.h"

namespace gpu {

class GpuAttention {
 public:
  // The name compute requests use for this backend ("backend": "webgl"), natively too: the same
  // GLSL ES 3.00 passes run there through OpenGL 3.3.
  static constexpr const char* kBackendName = "webgl";

  // Needs a current GL context. Compiles the passes and checks that float textures can be
  // rendered into; never throws: when something is missing, available() is false and
  // unavailable_reason() says what (the app then keeps computing on the CPU).
  void create();
  // Deletes the GL objects (the context is still alive).
  void destroy();
  // The context was lost and every GL name with it: unavailable until create() runs again.
  void forget_context();

  bool available() const { return unavailable_reason_.empty(); }
  const char* unavailable_reason() const { return unavailable_reason_.c_str(); }
  // The GPU's name, and whether it is a software rasteriser (see gl_platform.h).
  const std::string& renderer() const { return renderer_; }
  bool software() const { return software_; }

  // Weights (Tq, Tk) and output (Tq, dv) for query (Tq, d), key (Tk, d), value (Tk, dv).
  // Masked weights are exactly 0. Throws std::runtime_error when the backend is unavailable,
  // a shape is past this GPU's texture size, or the GPU fails (e.g. the context is lost mid-way).
  attn::AttentionResult attend(const attn::Matrix& query, const attn::Matrix& key, const attn::Matrix& value,
                               const attn::AttentionOptions& options);

 private:
  void upload(Texture& texture, const attn::Matrix& values);
  void read_back(const RenderTarget& target, int columns, attn::Matrix* values);
  void allocate(RenderTarget& target, int width, int height);

  std::string unavailable_reason_ = "the GPU backend has not been started";
  std::string renderer_;
  bool software_ = false;
  int max_texture_size_ = 0;
  GLuint scores_program_ = 0, row_max_program_ = 0, row_sum_program_ = 0, normalise_program_ = 0, output_program_ = 0;
  GLuint vertex_array_ = 0;
  Texture query_, key_, value_;  // inputs, four floats per texel along each row
  RenderTarget scores_, row_max_, row_stats_, weights_, output_;
  std::vector<float> staging_;   // rows padded to whole texels, for uploads and read-backs
};

}  // namespace gpu
