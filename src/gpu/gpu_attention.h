// Attention on the GPU: softmax(Q·Kᵀ·scale)·V as five fragment-shader passes over float textures
// (WebGL2 with EXT_color_buffer_float in the browser, OpenGL 3.3 natively), checked against the
// scalar kernel (gpu_check.h). Not the lesson's trace, not the mistakes: weights and output only.
//
// Bounded work per draw: a pass is drawn in bands of whole rows of its target, each band at most
// kMaxFetchesPerDraw texel reads in all (fragments x the texels each reads), so no single draw runs
// long at any allowed size (4096 x 4096 keys at d = 1024 is ~256 draws for the scores): a browser
// answers a draw that runs for seconds by taking the context away. One row of any target always
// fits the budget (the static_assert below), so a band is never empty.
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
  // The GPU's name, and whether it names a software rasteriser (see gl_platform.h).
  const std::string& renderer() const { return renderer_; }
  bool software() const { return software_; }

  // A name proves nothing (WebKit calls llvmpipe "Apple GPU"): one problem of kSpeedCheckTokens
  // tokens, d = kSpeedCheckWidth, timed once on this GPU (read-back included) and on the SIMD kernel.
  static constexpr int kSpeedCheckTokens = 512;
  static constexpr int kSpeedCheckWidth = 64;
  struct SpeedCheck {
    bool measured = false;  // false: not run (unavailable, or a software name) or the GPU failed
    double gpu_ms = 0, cpu_ms = 0;
  };
  // Runs the check once (needs the context current; after create()); skipped for a software name.
  void check_speed();
  const SpeedCheck& speed_check() const { return speed_check_; }

  // Texel reads one draw may do (fragments x reads per fragment): about 16 ms on a software
  // rasteriser, far less on a GPU.
  static constexpr long long kMaxFetchesPerDraw = 1ll << 24;
  // A smaller budget, for tests (many bands on small shapes); 0 restores kMaxFetchesPerDraw.
  void set_fetch_budget(long long fetches) { fetch_budget_ = fetches > 0 ? fetches : kMaxFetchesPerDraw; }
  long long fetch_budget() const { return fetch_budget_; }
  // What the last attend() drew: number of draws, and the largest texel-read count of one draw.
  struct DrawStats {
    int draws = 0;
    long long max_fetches = 0;
  };
  const DrawStats& last_draw_stats() const { return draw_stats_; }

  // Weights (Tq, Tk) and output (Tq, dv) for query (Tq, d), key (Tk, d), value (Tk, dv).
  // Masked weights are exactly 0. Throws std::runtime_error when the backend is unavailable,
  // a shape is past this GPU's texture size, or the GPU fails (e.g. the context is lost mid-way).
  attn::AttentionResult attend(const attn::Matrix& query, const attn::Matrix& key, const attn::Matrix& value,
                               const attn::AttentionOptions& options);

 private:
  void upload(Texture& texture, const attn::Matrix& values);
  void read_back(const RenderTarget& target, int columns, attn::Matrix* values);
  void allocate(RenderTarget& target, int width, int height);
  // Draws the current pass over `target` in bands of rows, each within the fetch budget.
  void draw_in_bands(const RenderTarget& target, long long fetches_per_fragment);

  // Uniform locations, looked up once per program when it is built (-1: not in that program).
  struct PassUniforms {
    GLint input0 = -1, input1 = -1;  // the pass's two samplers (units 0 and 1)
    GLint feature_texels = -1, key_count = -1, scale = -1, causal = -1;
  };
  PassUniforms scores_uniforms_, row_max_uniforms_, row_sum_uniforms_, normalise_uniforms_, output_uniforms_;
  long long fetch_budget_ = kMaxFetchesPerDraw;
  DrawStats draw_stats_;

  std::string unavailable_reason_ = "the GPU backend has not been started";
  std::string renderer_;
  bool software_ = false;
  SpeedCheck speed_check_;
  int max_texture_size_ = 0;
  GLuint scores_program_ = 0, row_max_program_ = 0, row_sum_program_ = 0, normalise_program_ = 0, output_program_ = 0;
  GLuint vertex_array_ = 0;
  Texture query_, key_, value_;  // inputs, four floats per texel along each row
  RenderTarget scores_, row_max_, row_stats_, weights_, output_;
  std::vector<float> staging_;   // rows padded to whole texels, for uploads and read-backs
};

}  // namespace gpu
