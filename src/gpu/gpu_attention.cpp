// The GPU attention backend (see gpu_attention.h): uploads Q, K, V as RGBA32F textures, runs the
// passes of shaders/attention_*.frag, reads weights and output back with glReadPixels.
// Not drawing: nothing here reaches the screen, and the app's GL state is restored after each call.
#include "gpu_attention.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "../core/random.h"

namespace gpu {

namespace {
int texels_for(Eigen::Index floats) { return static_cast<int>((floats + 3) / 4); }  // four floats per RGBA texel

// The most texel reads one row of a target can need, at the largest allowed sizes: the scores
// (Tk/4 texels wide, 5 reads per feature texel: one query, four keys) and the output (dv/4 wide,
// 5 reads per key texel: four weights' texel plus four values) and the softmax passes (Tk/4 reads).
constexpr long long kMaxFetchesPerRow =
    static_cast<long long>(attn::kMaxSequence / 4) * 5 * ((attn::kMaxWidth + 3) / 4) >
            static_cast<long long>((attn::kMaxWidth + 3) / 4) * 5 * (attn::kMaxSequence / 4)
        ? static_cast<long long>(attn::kMaxSequence / 4) * 5 * ((attn::kMaxWidth + 3) / 4)
        : static_cast<long long>((attn::kMaxWidth + 3) / 4) * 5 * (attn::kMaxSequence / 4);
static_assert(kMaxFetchesPerRow <= GpuAttention::kMaxFetchesPerDraw, "one row of any pass fits one draw's budget");

GLint location(GLuint program, const char* name) { return name ? glGetUniformLocation(program, name) : -1; }
}  // namespace

void GpuAttention::create() {
  destroy();
  speed_check_ = SpeedCheck();
  renderer_ = renderer_name();
  software_ = software_renderer(renderer_);
  if (!enable_float_render_targets()) {
    unavailable_reason_ = "this browser's WebGL2 cannot render into float textures (no EXT_color_buffer_float)";
    return;
  }
  std::string error;
  const struct {
    GLuint* program;
    PassUniforms* uniforms;
    const char* file;
    const char *input0, *input1;
  } passes[] = {{&scores_program_, &scores_uniforms_, "attention_scores.frag", "u_query", "u_key"},
                {&row_max_program_, &row_max_uniforms_, "attention_row_max.frag", "u_scores", nullptr},
                {&row_sum_program_, &row_sum_uniforms_, "attention_row_sum.frag", "u_scores", "u_row_max"},
                {&normalise_program_, &normalise_uniforms_, "attention_normalise.frag", "u_scores", "u_row_stats"},
                {&output_program_, &output_uniforms_, "attention_output.frag", "u_weights", "u_value"}};
  for (const auto& pass : passes) {
    *pass.program = build_program("fullscreen.vert", pass.file, &error);
    if (!*pass.program) {
      unavailable_reason_ = error;
      return;
    }
    PassUniforms& u = *pass.uniforms;
    u.input0 = location(*pass.program, pass.input0);
    u.input1 = location(*pass.program, pass.input1);
    u.feature_texels = location(*pass.program, "u_feature_texels");
    u.key_count = location(*pass.program, "u_key_count");
    u.scale = location(*pass.program, "u_scale");
    u.causal = location(*pass.program, "u_causal");
  }
  glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max_texture_size_);
  GLint viewport_limit[2] = {0, 0};
  glGetIntegerv(GL_MAX_VIEWPORT_DIMS, viewport_limit);
  max_texture_size_ = std::min({max_texture_size_, static_cast<int>(viewport_limit[0]), static_cast<int>(viewport_limit[1])});
  glGenVertexArrays(1, &vertex_array_);

  // Some GPUs list float textures yet cannot render into them: try one.
  PassState pass_state;
  if (!allocate_target(scores_, GL_RGBA32F, GL_RGBA, GL_FLOAT, 1, 1)) {
    unavailable_reason_ = "this GPU cannot render into RGBA32F textures";
    return;
  }
  unavailable_reason_.clear();
}

void GpuAttention::check_speed() {
  if (!available() || software_ || speed_check_.measured) return;
  attn::Rng rng(0x5eed5eedu);
  const int T = kSpeedCheckTokens, d = kSpeedCheckWidth;
  const attn::Matrix query = attn::normal_matrix(rng, T, d), key = attn::normal_matrix(rng, T, d),
                     value = attn::normal_matrix(rng, T, d);
  const attn::AttentionOptions options;
  // The best of two calls after a warm-up each: the first draw of a pass also compiles it.
  auto best_ms = [&](auto&& call) {
    call();
    double best = 0;
    for (int rep = 0; rep < 2; ++rep) {
      const auto start = std::chrono::steady_clock::now();
      call();
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      best = rep == 0 ? ms : std::min(best, ms);
    }
    return best;
  };
  try {
    const double gpu_ms = best_ms([&] { attend(query, key, value, options); });
    const double cpu_ms = best_ms([&] { attn::attend_with(attn::Backend::Simd, query, key, value, options); });
    speed_check_ = {true, gpu_ms, cpu_ms};
  } catch (const std::exception&) {  // a GPU that fails here is not trusted with auto's problems
    speed_check_ = SpeedCheck();
  }
}

void GpuAttention::destroy() {
  for (GLuint* program : {&scores_program_, &row_max_program_, &row_sum_program_, &normalise_program_, &output_program_})
    if (*program) glDeleteProgram(*program);
  if (vertex_array_) glDeleteVertexArrays(1, &vertex_array_);
  for (Texture* texture : {&query_, &key_, &value_}) release(*texture);
  for (RenderTarget* target : {&scores_, &row_max_, &row_stats_, &weights_, &output_}) release(*target);
  forget_context();
  unavailable_reason_ = "the GPU backend has been stopped";
}

void GpuAttention::forget_context() {
  scores_program_ = row_max_program_ = row_sum_program_ = normalise_program_ = output_program_ = 0;
  vertex_array_ = 0;
  for (Texture* texture : {&query_, &key_, &value_}) forget(*texture);
  for (RenderTarget* target : {&scores_, &row_max_, &row_stats_, &weights_, &output_}) forget(*target);
  unavailable_reason_ = "the WebGL context is lost (the browser took the GPU away); the CPU backends still work";
}

void GpuAttention::upload(Texture& texture, const attn::Matrix& values) {
  const int width = texels_for(values.cols()), height = static_cast<int>(values.rows());
  staging_.assign(static_cast<std::size_t>(width) * 4 * height, 0.0f);  // zero padding: adds nothing to a dot
  for (int row = 0; row < height; ++row)
    std::memcpy(&staging_[static_cast<std::size_t>(row) * width * 4], values.row(row).data(),
                sizeof(float) * static_cast<std::size_t>(values.cols()));
  glActiveTexture(GL_TEXTURE0);
  allocate_texture(texture, GL_RGBA32F, GL_RGBA, GL_FLOAT, width, height);
  glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, width, height, GL_RGBA, GL_FLOAT, staging_.data());
}

void GpuAttention::allocate(RenderTarget& target, int width, int height) {
  glActiveTexture(GL_TEXTURE0);
  if (!allocate_target(target, GL_RGBA32F, GL_RGBA, GL_FLOAT, width, height))
    throw std::runtime_error("the GPU cannot render into a " + std::to_string(width) + "×" + std::to_string(height) +
                             " float texture");
}

// RGBA + FLOAT is the read-back format every GL ES 3.0 float render target supports.
void GpuAttention::read_back(const RenderTarget& target, int columns, attn::Matrix* values) {
  const int width = target.texture.width, height = target.texture.height;
  staging_.resize(static_cast<std::size_t>(width) * 4 * height);
  glBindFramebuffer(GL_FRAMEBUFFER, target.framebuffer);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_FLOAT, staging_.data());
  values->resize(height, columns);
  for (int row = 0; row < height; ++row)
    std::memcpy(values->row(row).data(), &staging_[static_cast<std::size_t>(row) * width * 4],
                sizeof(float) * static_cast<std::size_t>(columns));
}

void GpuAttention::draw_in_bands(const RenderTarget& target, long long fetches_per_fragment) {
  const int width = target.texture.width, height = target.texture.height;
  const long long per_row = static_cast<long long>(width) * std::max(1ll, fetches_per_fragment);
  const int band = static_cast<int>(std::clamp(fetch_budget_ / per_row, 1ll, static_cast<long long>(height)));
  for (int y = 0; y < height; y += band) {
    const int rows = std::min(band, height - y);
    glViewport(0, y, width, rows);  // gl_FragCoord stays in target coordinates
    draw_full_target();
    glFlush();  // hand each band to the GPU on its own
    ++draw_stats_.draws;
    draw_stats_.max_fetches = std::max(draw_stats_.max_fetches, per_row * rows);
  }
}

attn::AttentionResult GpuAttention::attend(const attn::Matrix& query, const attn::Matrix& key,
                                           const attn::Matrix& value, const attn::AttentionOptions& options) {
  if (context_is_lost()) forget_context();
  if (!available()) throw std::runtime_error(std::string("the \"webgl\" backend is unavailable: ") + unavailable_reason_);
  attn::validate_qkv(query, key, value);
  attn::validate_options(options);
  if (options.mistake != attn::Mistake::None)
    throw std::invalid_argument("the \"webgl\" backend computes correct attention only");
  if (!options.cuts.empty()) throw std::invalid_argument("the \"webgl\" backend does not cut links: use a CPU backend");
  const int query_count = static_cast<int>(query.rows()), key_count = static_cast<int>(key.rows());
  const int key_texels = texels_for(key_count), value_texels = texels_for(value.cols());
  for (const int size : {query_count, key_count, texels_for(query.cols()), value_texels})
    if (size > max_texture_size_)
      throw std::runtime_error("the \"webgl\" backend handles at most " + std::to_string(max_texture_size_) +
                               " rows and " + std::to_string(4 * max_texture_size_) +
                               " columns (this GPU's texture size); use a CPU backend");

  PassState pass_state;
  clear_gl_errors();
  upload(query_, query);
  upload(key_, key);
  upload(value_, value);
  allocate(scores_, key_texels, query_count);
  allocate(row_max_, 1, query_count);
  allocate(row_stats_, 1, query_count);
  allocate(weights_, key_texels, query_count);
  allocate(output_, value_texels, query_count);
  glBindVertexArray(vertex_array_);
  draw_stats_ = DrawStats();
  const int feature_texels = texels_for(query.cols());

  // pass 1: scores S = Q·Kᵀ·scale
  begin_pass(scores_program_, scores_);
  bind_input(scores_uniforms_.input0, 0, query_);
  bind_input(scores_uniforms_.input1, 1, key_);
  glUniform1i(scores_uniforms_.feature_texels, feature_texels);
  glUniform1i(scores_uniforms_.key_count, key_count);
  glUniform1f(scores_uniforms_.scale, attn::score_factor(static_cast<int>(key.cols()), options));
  draw_in_bands(scores_, 5ll * feature_texels);  // per texel of d: one query texel, four key texels

  // passes 2-4: softmax over each row's visible keys: max (so exp cannot overflow), sum, divide
  const auto softmax_pass = [&](GLuint program, const PassUniforms& u, const RenderTarget& target,
                                const Texture* stats, long long fetches_per_fragment) {
    begin_pass(program, target);
    bind_input(u.input0, 0, scores_.texture);
    if (stats) bind_input(u.input1, 1, *stats);
    glUniform1i(u.key_count, key_count);
    glUniform1i(u.causal, options.causal ? 1 : 0);
    draw_in_bands(target, fetches_per_fragment);
  };
  softmax_pass(row_max_program_, row_max_uniforms_, row_max_, nullptr, key_texels);
  softmax_pass(row_sum_program_, row_sum_uniforms_, row_stats_, &row_max_.texture, key_texels + 1);
  softmax_pass(normalise_program_, normalise_uniforms_, weights_, &row_stats_.texture, 2);

  // pass 5: output O = A·V
  begin_pass(output_program_, output_);
  bind_input(output_uniforms_.input0, 0, weights_.texture);
  bind_input(output_uniforms_.input1, 1, value_);
  glUniform1i(output_uniforms_.key_count, key_count);
  glUniform1i(output_uniforms_.causal, options.causal ? 1 : 0);
  draw_in_bands(output_, 5ll * key_texels);  // per key texel: one weights texel, four value texels

  attn::AttentionResult result;
  read_back(weights_, key_count, &result.weights);
  read_back(output_, static_cast<int>(value.cols()), &result.output);
  const GLenum error = glGetError();
  if (context_is_lost()) {
    forget_context();
    throw std::runtime_error(std::string("the \"webgl\" backend is unavailable: ") + unavailable_reason_);
  }
  if (error != GL_NO_ERROR) {
    char code[16];
    std::snprintf(code, sizeof code, "0x%04x", static_cast<unsigned>(error));
    throw std::runtime_error(std::string("the \"webgl\" backend failed with GL error ") + code);
  }
  return result;
}

}  // namespace gpu
