// Native kernel benchmark: median milliseconds of one attention_forward call (output only, no
// weights) for each backend and shape, as one JSON object per line on stdout. Not a test.
// usage: attn_bench [--T 64,256] [--d 64] [--causal 0,1] [--backend simd,eigen] [--min-ms 300]
//                   [--scalar-max-gflop 0.3]   (the scalar reference is skipped past this much work)
//        attn_bench --check   (simd against scalar on awkward shapes, 1e-5 relative; exit 1 if not)
//        attn_bench --matmul [--T 16,64,256] [--backend simd,eigen] [--min-ms 300]
//                   (the matrix products of GPT-2 small's forward, C = 768, one line per shape)
//        attn_bench --matmul16 [--T 1,16,64,256] [--models gpt2,smollm2,qwen3] [--min-ms 200]
//                   [--max-gflop 12] [--backend simd]
//                   (16-bit weights: each shape's F32, F16 and BF16 products timed in interleaved
//                   rounds, a table of GFLOP/s and the speed ratio to F32; products over max-gflop skipped)
//        attn_bench --forward [--models smollm2,qwen3,gpt2,bert] [--dtype BF16,F32] [--T 64,256] [--reps 3]
//                   (the whole transformer_forward of a model of that shape with random weights: the
//                   median of reps after a warm-up, the LM head's share, where the time goes (each
//                   product, attention and the rest, timed alone) and the trace's memory)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "../../src/core/attribution.h"
#include "../../src/core/dtype.h"
#include "../../src/core/kernels/kernels.h"
#include "../../src/core/kernels/matmul.h"
#include "../../src/core/transformer.h"

#if defined(__EMSCRIPTEN__)
#include <emscripten.h>
#else
#include <time.h>
#endif

namespace {

std::vector<int> parse_ints(const char* text) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::atoi(item.c_str()));
  return out;
}

std::vector<std::string> parse_words(const char* text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

double now_ms() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

// CPU time of this thread (under node: of the process), in ms: less sensitive than the wall
// clock to other processes on a loaded machine.
double cpu_ms() {
#if defined(__EMSCRIPTEN__)
  return EM_ASM_DOUBLE({
    if (typeof process !== "undefined" && process.cpuUsage) { const u = process.cpuUsage(); return (u.user + u.system) / 1000; }
    return performance.now();
  });
#else
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
#endif
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

struct Timing {
  double wall_ms, cpu_ms, min_cpu_ms;
  int reps;
};

// Medians (wall and CPU) of calls after a warm-up; as many calls as fit in min_ms (5 to 400).
template <class F>
Timing time_calls(F&& call, double min_ms) {
  call();
  const double t0 = now_ms();
  call();
  const double one = std::max(1e-3, now_ms() - t0);
  const int reps = std::max(5, std::min(400, static_cast<int>(min_ms / one)));
  std::vector<double> wall(reps), cpu(reps);
  for (int r = 0; r < reps; ++r) {
    const double start = now_ms(), start_cpu = cpu_ms();
    call();
    cpu[r] = cpu_ms() - start_cpu;
    wall[r] = now_ms() - start;
  }
  return {median(wall), median(cpu), *std::min_element(cpu.begin(), cpu.end()), reps};
}

// max |a - b| / max |b|
double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(a[i] - b[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(b[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

// The SIMD kernel against the scalar reference on shapes around its block sizes (rows per pass,
// keys per block, tile widths), self and cross, causal and not, weights and output.
int check() {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  const int shapes[][4] = {{1, 1, 1, 1},    {7, 9, 3, 5},     {33, 33, 8, 8},   {47, 70, 17, 9},  {64, 64, 64, 64},
                           {65, 129, 31, 33}, {96, 96, 16, 24}, {127, 200, 5, 40}, {200, 127, 72, 7}, {257, 300, 100, 65},
                           {49, 1000, 13, 3}, {300, 64, 520, 17}};
  double worst = 0;
  for (const auto& s : shapes)
    for (int causal : {0, 1}) {
      const int Tq = s[0], Tk = s[1], d = s[2], dv = s[3];
      std::vector<float> q(static_cast<std::size_t>(Tq) * d), k(static_cast<std::size_t>(Tk) * d),
          v(static_cast<std::size_t>(Tk) * dv);
      for (auto* m : {&q, &k, &v})
        for (float& x : *m) x = uniform(rng);
      attn::AttentionProblem p;
      p.query = q.data(), p.key = k.data(), p.value = v.data();
      p.Tq = Tq, p.Tk = Tk, p.d = d, p.dv = dv, p.scale = 1.0f / std::sqrt(static_cast<float>(d)), p.causal = causal;
      std::vector<float> out_ref(static_cast<std::size_t>(Tq) * dv), w_ref(static_cast<std::size_t>(Tq) * Tk);
      std::vector<float> out(out_ref.size()), w(w_ref.size()), out_only(out_ref.size());
      attn::attention_scalar(p, out_ref.data(), w_ref.data());
      attn::attention_simd(p, out.data(), w.data());
      attn::attention_simd(p, out_only.data(), nullptr);
      const double e = std::max({relative_error(out, out_ref), relative_error(w, w_ref), relative_error(out_only, out_ref)});
      bool masked_zero = true;
      for (int i = 0; causal && i < Tq; ++i)
        for (int j = i + 1; j < Tk; ++j) masked_zero = masked_zero && w[static_cast<std::size_t>(i) * Tk + j] == 0.0f;
      std::printf("check Tq=%d Tk=%d d=%d dv=%d causal=%d: rel err %.2e%s\n", Tq, Tk, d, dv, causal, e,
                  masked_zero ? "" : " MASKED WEIGHT NOT 0");
      worst = masked_zero ? std::max(worst, e) : 1.0;
    }
  std::printf("check (%s): worst %.2e -> %s\n", attn::simd_flavour(), worst, worst <= 1e-5 ? "ok" : "FAILED");
  return worst <= 1e-5 ? 0 : 1;
}

// GPT-2 small's matrix products for T tokens (C = 768): c_attn, attn c_proj, mlp c_fc, mlp c_proj
// (x·W, NN), the tied LM head (x·wteᵀ, NT). Bias where the model has one.
struct MatmulShape {
  const char* name;
  int K, N;
  attn::MatmulLayout layout;
  bool bias;
};
const MatmulShape kGpt2Shapes[] = {{"c_attn", 768, 2304, attn::MatmulLayout::NN, true},
                                   {"attn.c_proj", 768, 768, attn::MatmulLayout::NN, true},
                                   {"mlp.c_fc", 768, 3072, attn::MatmulLayout::NN, true},
                                   {"mlp.c_proj", 3072, 768, attn::MatmulLayout::NN, true},
                                   {"lm_head", 768, 50257, attn::MatmulLayout::NT, false}};

int matmul_bench(int argc, char** argv) {
  std::vector<int> Ts{16, 64, 256};
  std::vector<std::string> backends{"simd", "eigen"};
  double min_ms = 300;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--T") Ts = parse_ints(argv[i + 1]);
    else if (flag == "--backend") backends = parse_words(argv[i + 1]);
    else if (flag == "--min-ms") min_ms = std::atof(argv[i + 1]);
    else { std::fprintf(stderr, "unknown flag %s\n", flag.c_str()); return 2; }
  }
  std::fprintf(stderr, "attn_bench --matmul: SIMD flavour %s\n", attn::matmul_simd_flavour());
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (const MatmulShape& s : kGpt2Shapes) {
    std::vector<float> b(static_cast<std::size_t>(s.K) * s.N), bias(s.N);
    for (float& x : b) x = uniform(rng);
    for (float& x : bias) x = uniform(rng);
    for (int T : Ts) {
      std::vector<float> a(static_cast<std::size_t>(T) * s.K), c(static_cast<std::size_t>(T) * s.N);
      for (float& x : a) x = uniform(rng);
      attn::MatmulProblem p;
      p.layout = s.layout, p.a = a.data(), p.b = b.data(), p.bias = s.bias ? bias.data() : nullptr;
      p.M = T, p.K = s.K, p.N = s.N;
      for (const std::string& name : backends) {
        attn::Backend backend;
        if (!attn::parse_backend(name, &backend)) { std::fprintf(stderr, "unknown backend %s\n", name.c_str()); return 2; }
        if (backend == attn::Backend::Scalar && 2.0 * T * s.K * s.N / 1e9 > 0.3) continue;
        // >= 100 ms of warm-up: under a wasm engine the first calls can run baseline code
        for (const double t0 = now_ms(); now_ms() - t0 < 100;) attn::matmul(backend, p, c.data());
        const Timing t = time_calls([&] { attn::matmul(backend, p, c.data()); }, min_ms);
        std::printf("{\"op\":\"matmul\",\"name\":\"%s\",\"M\":%d,\"K\":%d,\"N\":%d,\"layout\":\"%s\",\"bias\":%s,"
                    "\"backend\":\"%s\",\"flavour\":\"%s\",\"ms\":%.5f,\"cpu_ms\":%.5f,\"min_cpu_ms\":%.5f,\"reps\":%d,"
                    "\"gflops\":%.2f}\n", s.name, T, s.K, s.N, s.layout == attn::MatmulLayout::NT ? "NT" : "NN",
                    s.bias ? "true" : "false", name.c_str(), name == "simd" ? attn::matmul_simd_flavour() : name.c_str(),
                    t.wall_ms, t.cpu_ms, t.min_cpu_ms, t.reps, 2.0 * T * s.K * s.N / 1e6 / t.cpu_ms);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

// The forwards' products with the weights in the file's format: x·W (NN, GPT-2's Conv1D) and x·Wᵀ
// (NT, nn.Linear and every LM head over its (vocab, C) embedding). gate_up: gate and up side by side.
struct Matmul16Shape {
  const char* model;
  const char* name;
  int K, N;
  attn::MatmulLayout layout;
  bool bias;
};
const Matmul16Shape kMatmul16Shapes[] = {
    {"gpt2", "c_attn", 768, 2304, attn::MatmulLayout::NN, true},
    {"gpt2", "mlp.c_fc", 768, 3072, attn::MatmulLayout::NN, true},
    {"gpt2", "mlp.c_proj", 3072, 768, attn::MatmulLayout::NN, true},
    {"gpt2", "lm_head", 768, 50257, attn::MatmulLayout::NT, false},
    {"smollm2", "q_proj", 576, 576, attn::MatmulLayout::NT, false},
    {"smollm2", "k_proj", 576, 192, attn::MatmulLayout::NT, false},
    {"smollm2", "gate_up", 576, 3072, attn::MatmulLayout::NT, false},
    {"smollm2", "down_proj", 1536, 576, attn::MatmulLayout::NT, false},
    {"smollm2", "lm_head", 576, 49152, attn::MatmulLayout::NT, false},
    {"qwen3", "q_proj", 1024, 2048, attn::MatmulLayout::NT, false},
    {"qwen3", "k_v", 1024, 1024, attn::MatmulLayout::NT, false},
    {"qwen3", "gate_up", 1024, 6144, attn::MatmulLayout::NT, false},
    {"qwen3", "down_proj", 3072, 1024, attn::MatmulLayout::NT, false},
    {"qwen3", "lm_head", 1024, 151936, attn::MatmulLayout::NT, false},
};

int matmul16_bench(int argc, char** argv) {
  std::vector<int> Ts{1, 16, 64, 256};
  std::vector<std::string> models{"gpt2", "smollm2", "qwen3"};
  std::string backend_name = "simd";
  double min_ms = 200, max_gflop = 12;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--T") Ts = parse_ints(argv[i + 1]);
    else if (flag == "--models") models = parse_words(argv[i + 1]);
    else if (flag == "--backend") backend_name = argv[i + 1];
    else if (flag == "--min-ms") min_ms = std::atof(argv[i + 1]);
    else if (flag == "--max-gflop") max_gflop = std::atof(argv[i + 1]);
    else { std::fprintf(stderr, "unknown flag %s\n", flag.c_str()); return 2; }
  }
  attn::Backend backend;
  if (!attn::parse_backend(backend_name, &backend)) { std::fprintf(stderr, "unknown backend %s\n", backend_name.c_str()); return 2; }
  const attn::Dtype dtypes[] = {attn::Dtype::F32, attn::Dtype::F16, attn::Dtype::BF16};
  std::printf("matmul with 16-bit weights, %s (%s), 1 thread: median CPU ms per call over interleaved rounds\n"
              "(a sample: as many calls as take >= 2 ms; in a page the clock is the wall clock);\n"
              "GFLOP/s = 2·T·K·N / time; vs F32 = F32's time / this time (above 1: faster than F32)\n",
              backend_name.c_str(), backend == attn::Backend::Simd ? attn::matmul_simd_flavour() : backend_name.c_str());
  std::printf("%-8s %-10s %-6s %4s %5s %7s %-5s %9s %8s %7s\n", "model", "shape", "layout", "T", "K", "N", "dtype", "ms", "GFLOP/s",
              "vs F32");
  std::fflush(stdout);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  {
    // Every dtype's code in both layouts, 300 ms each, before any timing: a wasm engine compiles
    // its optimised code in the background, and under node that compiling counts in the process's
    // CPU time (a first run without this showed F16 at 0.3x F32 on the first shapes, not again).
    const int M = 16, K = 512, N = 512;
    std::vector<float> a(static_cast<std::size_t>(M) * K, 0.5f), b(static_cast<std::size_t>(K) * N, 0.25f), c(static_cast<std::size_t>(M) * N);
    std::vector<std::uint16_t> b16(b.size(), 0x3400);  // 0.25 as a half; a small normal bfloat16
    for (attn::Dtype dtype : dtypes)
      for (attn::MatmulLayout layout : {attn::MatmulLayout::NN, attn::MatmulLayout::NT}) {
        attn::MatmulProblem p;
        p.layout = layout, p.a = a.data(), p.M = M, p.K = K, p.N = N, p.b_dtype = dtype;
        if (dtype == attn::Dtype::F32) p.b = b.data();
        else p.b16 = b16.data();
        for (const double t0 = now_ms(); now_ms() - t0 < 300;) attn::matmul(backend, p, c.data());
      }
  }
  double worst_ratio = 1e9;
  for (const Matmul16Shape& s : kMatmul16Shapes) {
    if (std::find(models.begin(), models.end(), s.model) == models.end()) continue;
    const std::size_t kn = static_cast<std::size_t>(s.K) * s.N;
    std::vector<float> b(kn), bias(s.N);
    for (float& x : b) x = uniform(rng);
    for (float& x : bias) x = uniform(rng);
    std::vector<std::uint16_t> b_f16(kn), b_bf16(kn);
    for (std::size_t e = 0; e < kn; ++e) b_f16[e] = attn::float_to_half(b[e]), b_bf16[e] = attn::float_to_bf16(b[e]);
    for (int T : Ts) {
      const double gflop = 2.0 * T * s.K * s.N / 1e9;
      if (gflop > max_gflop) continue;
      std::vector<float> a(static_cast<std::size_t>(T) * s.K), c(static_cast<std::size_t>(T) * s.N);
      for (float& x : a) x = uniform(rng);
      attn::MatmulProblem p[3];
      for (int d = 0; d < 3; ++d) {
        p[d].layout = s.layout, p[d].a = a.data(), p[d].bias = s.bias ? bias.data() : nullptr;
        p[d].M = T, p[d].K = s.K, p[d].N = s.N, p[d].b_dtype = dtypes[d];
      }
      p[0].b = b.data(), p[1].b16 = b_f16.data(), p[2].b16 = b_bf16.data();
      // warm-up: >= 50 ms each (a wasm engine's first calls can run baseline code); it also says
      // how many calls make a sample of >= 2 ms (a page's clock ticks in 0.1 ms: one short call
      // would read 0.1 or 0.2 ms, a ratio of 0.5 from one tick)
      int batch = 1;
      for (const auto& problem : p) {
        int calls = 0;
        const double t0 = now_ms();
        for (; now_ms() - t0 < 50; ++calls) attn::matmul(backend, problem, c.data());
        batch = std::max(batch, static_cast<int>(std::ceil(2.0 * calls / std::max(1e-3, now_ms() - t0))));
      }
      std::vector<double> cpu[3];
      const double start = now_ms();
      for (int round = 0; round < 400 && (round < 5 || now_ms() - start < 3 * min_ms); ++round)
        for (int d = 0; d < 3; ++d) {
          const double t0 = cpu_ms();
          for (int b = 0; b < batch; ++b) attn::matmul(backend, p[d], c.data());
          cpu[d].push_back((cpu_ms() - t0) / batch);
        }
      const double f32_ms = median(cpu[0]);
      for (int d = 0; d < 3; ++d) {
        const double ms = median(cpu[d]);
        if (d > 0) worst_ratio = std::min(worst_ratio, f32_ms / ms);
        std::printf("%-8s %-10s %-6s %4d %5d %7d %-5s %9.4f %8.1f %7.2f\n", s.model, s.name,
                    s.layout == attn::MatmulLayout::NT ? "NT" : "NN", T, s.K, s.N, attn::dtype_name(dtypes[d]), ms,
                    gflop / (ms / 1e3), f32_ms / ms);
      }
      std::fflush(stdout);
    }
  }
  std::printf("lowest 16-bit speed / F32 speed: %.2f\n", worst_ratio);
  return 0;
}


// The shapes of the forward benchmark, as their config.json give them (tied heads): decoders, and BERT-base.
struct ForwardShape {
  const char* name;
  int layers, heads, kv_heads, head_dim, d_model, d_ff, vocab;
  bool qk_norm;
  double rope_theta;
  float eps;
};
const ForwardShape kForwardShapes[] = {
    {"smollm2", 30, 9, 3, 64, 576, 1536, 49152, false, 100000.0, 1e-5f},   // SmolLM2-135M (llama)
    {"qwen3", 28, 16, 8, 128, 1024, 3072, 151936, true, 1000000.0, 1e-6f},  // Qwen3-0.6B
    {"gpt2", 12, 12, 12, 64, 768, 3072, 50257, false, 0, 1e-5f},           // GPT-2 small (learned positions)
    {"bert", 12, 12, 12, 64, 768, 3072, 30522, false, 0, 1e-12f},          // BERT-base (an encoder with its masked-LM head)
};

// BERT-base as the loader reads its config.json: post-LayerNorm blocks, the embeddings' norm, 512
// learned positions, 2 token types, the exact GELU, no causal mask, the masked-LM head's transform and bias.
attn::TransformerConfig bert_config(const ForwardShape& s) {
  attn::TransformerConfig c;
  c.family = s.name;
  c.n_layer = s.layers, c.n_head = c.n_kv_head = s.heads, c.head_dim = s.head_dim;
  c.d_model = s.d_model, c.d_ff = s.d_ff, c.vocab_size = s.vocab, c.n_positions = 512, c.n_token_types = 2;
  c.norm = attn::NormKind::LayerNorm, c.norm_eps = s.eps;
  c.layers.assign(static_cast<std::size_t>(s.layers), attn::LayerSpec{});
  c.qkv_bias = c.o_bias = c.mlp_bias = true;
  c.score_scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
  c.activation = attn::Activation::GeluErf;
  c.causal = false, c.post_norm = true, c.embed_norm = true;
  c.has_lm_head = c.head_transform = c.head_bias = true;
  return c;
}

attn::TransformerConfig forward_config(const ForwardShape& s) {
  if (std::string(s.name) == "gpt2") return attn::gpt2_config(s.layers, s.heads, s.d_model, 1024, s.vocab);
  if (std::string(s.name) == "bert") return bert_config(s);
  attn::TransformerConfig c;
  c.family = s.name;
  c.n_layer = s.layers, c.n_head = s.heads, c.n_kv_head = s.kv_heads, c.head_dim = s.head_dim;
  c.d_model = s.d_model, c.d_ff = s.d_ff, c.vocab_size = s.vocab, c.n_positions = 0;
  c.norm = attn::NormKind::RmsNorm, c.norm_eps = s.eps;
  c.positions = attn::PositionKind::Rope;
  attn::LayerSpec spec;
  spec.rope.theta = s.rope_theta;
  c.layers.assign(static_cast<std::size_t>(s.layers), spec);
  c.qk_norm = s.qk_norm;
  c.score_scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
  c.gated_mlp = true, c.activation = attn::Activation::Silu;
  return c;
}

// Uniform(-0.05, 0.05) weights from a cheap generator (600 M normals would take longer than the
// benchmark): the values only need to be ordinary floats (no subnormal, inf or NaN).
void fill_weights(attn::Weights& w, std::uint32_t seed) {
  std::uint32_t s = seed * 2654435761u + 1;
  for (std::int64_t i = 0; i < w.size(); ++i) {
    s = s * 1664525u + 1013904223u;
    const float v = (static_cast<float>(s >> 8) / 16777216.0f - 0.5f) * 0.1f;
    if (w.dtype == attn::Dtype::F32) w.f32[static_cast<std::size_t>(i)] = v;
    else w.u16[static_cast<std::size_t>(i)] = w.dtype == attn::Dtype::BF16 ? attn::float_to_bf16(v) : attn::float_to_half(v);
  }
}

// A model of one of the shapes above with fill_weights' weights and unit norms.
attn::Transformer bench_model(const ForwardShape& s, attn::Dtype dtype) {
  const attn::TransformerConfig c = forward_config(s);
  const bool gpt2 = std::string(s.name) == "gpt2";
  attn::Transformer m(c, dtype, gpt2 ? attn::WeightLayout::InOut : attn::WeightLayout::OutIn);
  std::uint32_t seed = 1;
  fill_weights(m.embed, seed++), fill_weights(m.position_table, seed++);
  fill_weights(m.token_type_table, seed++), fill_weights(m.head_dense, seed++);  // an encoder's (else empty)
  for (attn::TransformerBlock& b : m.blocks) fill_weights(b.qkv, seed++), fill_weights(b.o, seed++), fill_weights(b.up, seed++), fill_weights(b.down, seed++);
  for (attn::TransformerBlock& b : m.blocks)
    for (attn::Vector* v : {&b.attn_norm_w, &b.mlp_norm_w, &b.q_norm_w, &b.k_norm_w}) v->setConstant(1.0f);
  m.final_norm_w.setConstant(1.0f), m.embed_norm_w.setConstant(1.0f), m.head_norm_w.setConstant(1.0f);
  return m;
}

std::uint64_t matrix_bytes(const attn::Matrix& m) { return static_cast<std::uint64_t>(m.size()) * sizeof(float); }

// What a trace holds, in bytes: every layer's matrices and the next tokens.
std::uint64_t trace_bytes(const attn::ModelTrace& t) {
  std::uint64_t n = t.token_ids.size() * sizeof(int);
  for (const attn::Matrix& x : t.streams) n += matrix_bytes(x);
  for (const attn::LayerTrace& l : t.layers) {
    n += l.summaries.size() * sizeof(attn::HeadSummary);
    for (const attn::Matrix& w : l.thumbnails) n += matrix_bytes(w);
  }
  for (const auto& next : t.next) n += next.size() * sizeof(attn::NextToken);
  return n;
}

// Median CPU ms (cpu_ms: the thread's natively, the process's under node, the wall clock in a
// page) of reps calls after one warm-up call.
template <class F>
double median_ms(F&& call, int reps) {
  call();
  std::vector<double> v;
  for (int r = 0; r < reps; ++r) {
    const double t0 = cpu_ms();
    call();
    v.push_back(cpu_ms() - t0);
  }
  return median(v);
}

int forward_bench(int argc, char** argv) {
  std::vector<std::string> models{"smollm2", "qwen3"}, dtypes{"BF16", "F32"};
  std::vector<int> Ts{64, 256};
  int reps = 3;
  bool profile = true;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--T") Ts = parse_ints(argv[i + 1]);
    else if (flag == "--models") models = parse_words(argv[i + 1]);
    else if (flag == "--dtype") dtypes = parse_words(argv[i + 1]);
    else if (flag == "--reps") reps = std::max(1, std::atoi(argv[i + 1]));
    else if (flag == "--profile") profile = std::atoi(argv[i + 1]) != 0;
    else { std::fprintf(stderr, "unknown flag %s\n", flag.c_str()); return 2; }
  }
  std::printf("transformer_forward, random weights, simd (%s), 1 thread: median CPU ms of %d after a warm-up\n"
              "(natively the thread's CPU time, under node the process's, in a page the wall clock);\n"
              "GFLOP = the matrix products' 2·m·n·k (LM head over every position included); head = the LM head's share\n"
              "(the forward minus the forward with top_k 0); trace = what the ModelTrace holds\n",
              attn::matmul_simd_flavour(), reps);
  std::printf("%-8s %-5s %4s %9s %7s %8s %9s %6s %9s %9s\n", "model", "dtype", "T", "ms", "GFLOP", "GFLOP/s", "head ms",
              "head%", "weights", "trace");
  std::fflush(stdout);
  struct ProfileRow {
    std::string what;
    double ms;
  };
  std::vector<std::pair<std::string, std::vector<ProfileRow>>> profiles;
  for (const ForwardShape& s : kForwardShapes) {
    if (std::find(models.begin(), models.end(), s.name) == models.end()) continue;
    for (const std::string& dtype_name : dtypes) {
      attn::Dtype dtype;
      if (dtype_name == "F32") dtype = attn::Dtype::F32;
      else if (dtype_name == "BF16") dtype = attn::Dtype::BF16;
      else if (dtype_name == "F16") dtype = attn::Dtype::F16;
      else { std::fprintf(stderr, "unknown dtype %s\n", dtype_name.c_str()); return 2; }
      const attn::Transformer m = bench_model(s, dtype);
      const attn::TransformerConfig& c = m.config;
      for (int T : Ts) {
        std::vector<int> ids(static_cast<std::size_t>(T));
        for (int i = 0; i < T; ++i) ids[static_cast<std::size_t>(i)] = static_cast<int>((i * 7919LL + 13) % c.vocab_size);
        std::uint64_t trace_b = 0;
        const double ms = median_ms([&] { trace_b = trace_bytes(attn::transformer_forward(m, ids)); }, reps);
        attn::ForwardOptions no_head;
        no_head.top_k = 0;
        const double body_ms = median_ms([&] { attn::transformer_forward(m, ids, no_head); }, reps);
        const double C = c.d_model, t = T, hd = c.head_dim, F = c.d_ff;
        const double qkv_f = 2 * t * C * (c.n_head + 2 * c.n_kv_head) * hd, o_f = 2 * t * c.n_head * hd * C;
        const double up_f = 2 * t * C * F * (c.gated_mlp ? 2 : 1), down_f = 2 * t * C * F, att_f = 4 * t * t * hd * c.n_head;
        const double head_f = 2 * t * C * c.vocab_size + (c.head_transform ? 2 * t * C * C : 0);
        const double flops = c.n_layer * (qkv_f + o_f + up_f + down_f + att_f) + head_f;
        std::printf("%-8s %-5s %4d %9.1f %7.2f %8.1f %9.1f %5.0f%% %8.0fM %8.0fM\n", s.name, dtype_name.c_str(), T, ms, flops / 1e9,
                    flops / 1e6 / ms, ms - body_ms, 100 * (ms - body_ms) / ms, m.weight_bytes() / 1048576.0, trace_b / 1048576.0);
        std::fflush(stdout);
        if (!profile) continue;
        // Where the time goes: each of block 0's products at M = T (times the layers), every head's
        // attention, the LM head as the forward runs it (slices of the vocabulary) and in one product; the rest
        // (norms, RoPE, the trace's copies, the softmax and top-k over the vocabulary) is what is left.
        std::vector<ProfileRow> rows;
        const attn::TransformerBlock& b = m.blocks[0];
        attn::Matrix x = attn::Matrix::Random(T, c.d_model) * 0.5f, out;
        const auto product = [&](const attn::Matrix& in, const attn::Weights& w, attn::Matrix& y) {
          y.resize(in.rows(), w.out());
          attn::MatmulProblem p;
          p.layout = w.transposed ? attn::MatmulLayout::NT : attn::MatmulLayout::NN;
          p.a = in.data();
          if (w.dtype == attn::Dtype::F32) p.b = w.f32.data();
          else p.b16 = w.u16.data(), p.b_dtype = w.dtype;
          p.M = static_cast<int>(in.rows()), p.K = w.in(), p.N = w.out();
          attn::matmul(attn::Backend::Simd, p, y.data());
        };
        const attn::Matrix heads_in = attn::Matrix::Random(T, c.q_width()) * 0.5f, hidden_in = attn::Matrix::Random(T, c.d_ff) * 0.5f;
        const double qkv_ms = c.n_layer * median_ms([&] { product(x, b.qkv, out); }, reps + 2);
        const double o_ms = c.n_layer * median_ms([&] { product(heads_in, b.o, out); }, reps + 2);
        const double up_ms = c.n_layer * median_ms([&] { product(x, b.up, out); }, reps + 2);
        const double down_ms = c.n_layer * median_ms([&] { product(hidden_in, b.down, out); }, reps + 2);
        const int hdi = c.head_dim;
        attn::Matrix q = attn::Matrix::Random(T, hdi), k = attn::Matrix::Random(T, hdi), v = attn::Matrix::Random(T, hdi), o(T, hdi), w(T, T);
        attn::AttentionProblem ap;
        ap.query = q.data(), ap.key = k.data(), ap.value = v.data(), ap.Tq = ap.Tk = T, ap.d = ap.dv = c.head_dim;
        ap.scale = c.score_scale, ap.causal = true;
        const double att_ms = c.n_layer * c.n_head * median_ms([&] { attn::attention_forward(attn::Backend::Simd, ap, o.data(), w.data()); }, reps + 2);
        const attn::Weights& head = m.lm_head.empty() ? m.embed : m.lm_head;
        // the head as the forward reads it (transformer.cpp's predict_next): every row at once against
        // slices of the vocabulary of 2^18 logits (1 MiB) each; and in one product of all T × V
        const int slice = std::clamp((1 << 18) / T, 256, c.vocab_size);
        const double head_forward_ms = median_ms([&] {
          for (int v0 = 0; v0 < c.vocab_size; v0 += slice) {
            const int n = std::min(slice, c.vocab_size - v0);
            out.resize(T, n);
            attn::MatmulProblem p;
            p.layout = attn::MatmulLayout::NT;
            p.a = x.data();
            const std::size_t offset = static_cast<std::size_t>(v0) * static_cast<std::size_t>(c.d_model);
            if (head.dtype == attn::Dtype::F32) p.b = head.f32.data() + offset;
            else p.b16 = head.u16.data() + offset, p.b_dtype = head.dtype;
            p.M = T, p.K = c.d_model, p.N = n;
            attn::matmul(attn::Backend::Simd, p, out.data());
          }
        }, reps);
        const double head_all_ms = median_ms([&] { product(x, head, out); }, reps);
        const double products = qkv_ms + o_ms + up_ms + down_ms;
        rows.push_back({"q/k/v products", qkv_ms});
        rows.push_back({"output products", o_ms});
        rows.push_back({"MLP gate/up products", up_ms});
        rows.push_back({"MLP down products", down_ms});
        rows.push_back({"attention (all heads, weights kept)", att_ms});
        rows.push_back({"rest of the blocks (norms, RoPE, SiLU, trace copies)", body_ms - products - att_ms});
        rows.push_back({"LM head products, " + std::to_string(slice) + " tokens a slice (as the forward)", head_forward_ms});
        rows.push_back({"  (the same, the whole vocabulary in one product)", head_all_ms});
        rows.push_back({"LM head softmax + top-k (head share - products)", (ms - body_ms) - head_forward_ms});
        rows.push_back({"whole forward", ms});
        profiles.push_back({std::string(s.name) + " " + dtype_name + " T=" + std::to_string(T), rows});
      }
    }
  }
  for (const auto& [title, rows] : profiles) {
    std::printf("\nwhere the time goes: %s (each part timed alone, ms; %% of the whole forward)\n", title.c_str());
    const double total = rows.back().ms;
    for (const ProfileRow& r : rows) std::printf("  %-52s %9.1f %5.0f%%\n", r.what.c_str(), r.ms, 100 * r.ms / total);
  }
  return 0;
}

}  // namespace

// The interventions on a GPT-2-small-shaped F32 model: a rerun reuses the layers before the first
// change, so ablating a late head costs a fraction of a forward; the sweeps are one rerun per cell.
int interventions_bench(int argc, char** argv) {
  std::vector<int> Ts{16, 64};
  int reps = 3;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--T") Ts = parse_ints(argv[i + 1]);
    else if (flag == "--reps") reps = std::max(1, std::atoi(argv[i + 1]));
    else { std::fprintf(stderr, "unknown flag %s\n", flag.c_str()); return 2; }
  }
  const attn::Transformer m = bench_model(kForwardShapes[2], attn::Dtype::F32);
  std::printf("interventions, GPT-2 small shape (F32, random weights), simd (%s), 1 thread: median CPU ms of %d\n"
              "(every run without the LM head over all positions: the metric reads one position's logits)\n",
              attn::matmul_simd_flavour(), reps);
  std::printf("%4s %-52s %10s\n", "T", "what", "ms");
  attn::ForwardOptions options;
  options.top_k = 0;
  for (int T : Ts) {
    std::vector<int> ids(static_cast<std::size_t>(T));
    for (int i = 0; i < T; ++i) ids[static_cast<std::size_t>(i)] = static_cast<int>((i * 7919LL + 13) % m.config.vocab_size);
    const attn::ModelTrace base = attn::transformer_forward(m, ids, options);
    const auto row = [&](const std::string& what, double ms) {
      std::printf("%4d %-52s %10.1f\n", T, what.c_str(), ms);
      std::fflush(stdout);
    };
    row("full forward", median_ms([&] { attn::transformer_forward(m, ids, options); }, reps));
    for (int layer : {0, 6, 11}) {
      attn::Intervention edit;
      edit.ablate = {{layer, 3}};
      row("head " + std::to_string(layer) + ".3 ablated: rerun from layer " + std::to_string(layer),
          median_ms([&] { attn::rerun_forward(m, base, edit, options); }, reps));
    }
    const int target = 42, at = T - 1;
    row("direct logit attribution at the last position",
        median_ms([&] { attn::attribute_logit(m, base, at, target); }, reps));
    const double t0 = cpu_ms();
    attn::ablation_sweep(m, base, at, target, attn::AblateKind::Zero);
    row("the single-head ablation sweep (144 heads)", cpu_ms() - t0);
    std::vector<int> other = ids;
    other[static_cast<std::size_t>(T / 2)] = (other[static_cast<std::size_t>(T / 2)] + 1) % m.config.vocab_size;
    const attn::ModelTrace source = attn::transformer_forward(m, other, options);
    const double t1 = cpu_ms();
    attn::head_patch_sweep(m, source, base, at, target);
    row("the head-patching sweep (144 heads)", cpu_ms() - t1);
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--check") return check();
  if (argc >= 2 && std::string(argv[1]) == "--matmul") return matmul_bench(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "--matmul16") return matmul16_bench(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "--forward") return forward_bench(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "--interventions") return interventions_bench(argc, argv);
  std::vector<int> Ts{64, 256, 1024, 2048}, ds{64, 512}, causals{0, 1};
  std::vector<std::string> backends{"simd", "eigen", "scalar"};
  double min_ms = 300;
  double scalar_max_gflop = 0.3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--T") Ts = parse_ints(argv[i + 1]);
    else if (flag == "--d") ds = parse_ints(argv[i + 1]);
    else if (flag == "--causal") causals = parse_ints(argv[i + 1]);
    else if (flag == "--backend") backends = parse_words(argv[i + 1]);
    else if (flag == "--min-ms") min_ms = std::atof(argv[i + 1]);
    else if (flag == "--scalar-max-gflop") scalar_max_gflop = std::atof(argv[i + 1]);
    else { std::fprintf(stderr, "unknown flag %s\n", flag.c_str()); return 2; }
  }
  std::fprintf(stderr, "attn_bench: SIMD flavour %s\n", attn::simd_flavour());
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (int T : Ts)
    for (int d : ds) {
      std::vector<float> q(static_cast<std::size_t>(T) * d), k(q.size()), v(q.size()), out(q.size());
      for (auto* m : {&q, &k, &v})
        for (float& x : *m) x = uniform(rng);
      for (int causal : causals)
        for (const std::string& name : backends) {
          attn::Backend backend;
          if (!attn::parse_backend(name, &backend)) { std::fprintf(stderr, "unknown backend %s\n", name.c_str()); return 2; }
          if (backend == attn::Backend::Scalar && 4.0 * T * T * d / 1e9 > scalar_max_gflop) continue;
          attn::AttentionProblem p;
          p.query = q.data(); p.key = k.data(); p.value = v.data();
          p.Tq = p.Tk = T; p.d = p.dv = d;
          p.scale = 1.0f / std::sqrt(static_cast<float>(d));
          p.causal = causal != 0;
          const Timing t = time_calls([&] { attn::attention_forward(backend, p, out.data(), nullptr); }, min_ms);
          std::printf("{\"T\":%d,\"d\":%d,\"causal\":%s,\"backend\":\"%s\",\"flavour\":\"%s\",\"ms\":%.5f,"
                      "\"cpu_ms\":%.5f,\"min_cpu_ms\":%.5f,\"reps\":%d}\n", T, d, causal ? "true" : "false", name.c_str(),
                      name == "simd" ? attn::simd_flavour() : name.c_str(), t.wall_ms, t.cpu_ms, t.min_cpu_ms, t.reps);
          std::fflush(stdout);
        }
    }
  return 0;
}
