// The scalar reference kernel: the readable truth every other backend is checked against.
// Not fast: plain loops, double accumulation, one query row at a time.
#include <cmath>
#include <limits>
#include <vector>

#include "../softmax.h"
#include "kernels.h"

namespace attn {

// Shapes: query_id (Tq, d), key_jd (Tk, d), value_jv (Tk, dv) -> out_iv (Tq, dv), weight_ij (Tq, Tk).
void attention_scalar(const AttentionProblem& p, float* output, float* weights) {
  std::vector<float> score_j(p.Tk), weight_j(p.Tk);
  for (int i = 0; i < p.Tq; ++i) {
    const float* query_d = p.query + static_cast<std::size_t>(i) * p.d;
    // pass 1: scaled (and capped) scores; hidden keys (the future, or past the window) get -inf so
    // softmax gives them exactly 0
    for (int j = 0; j < p.Tk; ++j) {
      if (p.hidden(i, j)) {
        score_j[j] = -std::numeric_limits<float>::infinity();
        continue;
      }
      const float* key_d = p.key + static_cast<std::size_t>(j) * p.d;
      double dot = 0.0;
      for (int c = 0; c < p.d; ++c) dot += static_cast<double>(query_d[c]) * key_d[c];
      const double scaled = dot * p.scale;
      score_j[j] = static_cast<float>(p.softcap > 0 ? std::tanh(scaled / p.softcap) * p.softcap : scaled);
    }
    // pass 2: softmax over the keys (this row sums to 1)
    softmax_row(score_j.data(), weight_j.data(), static_cast<std::size_t>(p.Tk));
    // pass 3: output = weights · values
    float* out_v = output + static_cast<std::size_t>(i) * p.dv;
    for (int c = 0; c < p.dv; ++c) {
      double acc = 0.0;
      for (int j = 0; j < p.Tk; ++j) acc += static_cast<double>(weight_j[j]) * p.value[static_cast<std::size_t>(j) * p.dv + c];
      out_v[c] = static_cast<float>(acc);
    }
    if (weights)
      for (int j = 0; j < p.Tk; ++j) weights[static_cast<std::size_t>(i) * p.Tk + j] = weight_j[j];
  }
}

}  // namespace attn
