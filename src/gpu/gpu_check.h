// The GPU backend checked against the scalar kernel, the way every fast backend is: random Q, K, V
// of odd shapes, max|Δ| / max|reference| for weights and output, masked weights exactly 0.
// Not a unit test: a table for `attention_explainer --gpu-check` and the page's attn_gpu_check.
#pragma once
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpu_attention.h"

namespace gpu {

constexpr double kCheckTolerance = 1e-4;  // max|Δ| / max|reference|, for weights and for output

struct CheckCase {
  int query_count = 1, key_count = 1, depth = 1, value_depth = 1;  // Tq, Tk, d, dv
  bool causal = false;
  float temperature = 1.0f;
  long long fetch_budget = 0;  // texel reads per draw; 0: GpuAttention::kMaxFetchesPerDraw
};

struct CheckRow {
  CheckCase shape;
  double weights_error = 0, output_error = 0;  // max|Δ| / max|reference|
  long masked_nonzero = 0;                     // hidden keys whose GPU weight is not exactly 0
  double gpu_ms = 0, scalar_ms = 0;            // wall time of one call each (GPU: upload to read-back)
  int draws = 0;                               // draws the GPU call made (all passes)
  long long max_fetches_per_draw = 0;          // the most texel reads of one of them
  long long fetch_budget = 0;                  // the budget they ran under
  std::string failure;                         // why the GPU call threw, or ""
  bool passed() const;
};

// Self-attention with T, d in {1, 3, 17, 64, 65, 300}, cross shapes (Tq != Tk, dv != d), a sharp
// softmax (temperature 0.05) and a flat one (20), each with and without the causal mask; shapes
// drawn under a small fetch budget (many bands per pass); then T = 1024, d = 64.
std::vector<CheckCase> standard_cases();

CheckRow check_case(GpuAttention& gpu, const CheckCase& shape);

// Runs the cases, prints one line per case and a verdict to `out`; true when every case passed.
bool print_check(GpuAttention& gpu, const std::vector<CheckCase>& cases, std::FILE* out);

nlohmann::json row_to_json(const CheckRow& row);

}  // namespace gpu
