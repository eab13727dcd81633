// Self- and cross-attention with the whole trace a learner needs to see, plus the lesson's
// common mistakes as switchable variants. Not the fast path: see kernels/kernels.h for that.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "kernels/kernels.h"
#include "matrix.h"

namespace attn {

// The numeric domain: the one set of limits every entry point shares (compute() and the CLI,
// setState and the URL, the sliders). Past any of them: std::invalid_argument naming the input.
constexpr int kMaxSequence = 4096;          // rows of Q, K or V (T)
constexpr int kMaxWidth = 1024;             // columns (d, dv, or the width of X)
constexpr float kMaxAbsEntry = 1e6f;        // |entry| of Q, K, V, X and the weight matrices
constexpr float kMinTemperature = 0.05f;    // temperature divides the scores: 1/0.05 = x20 at most
constexpr float kMaxTemperature = 20.0f;
// The largest |score| any accepted problem can have: d·kMaxAbsEntry² / temperature (unscaled,
// so not divided by √d), about 2e16. Far below float's 3.4e38, so every score, every difference
// of two scores and every exp() argument is finite, in every backend; the output is a weighted
// mean of values, so |output| <= kMaxAbsEntry. (A product X·W can pass the limit: Q, K and V are
// checked again after the projection, by name.)
constexpr double kMaxAbsScore =
    static_cast<double>(kMaxWidth) * kMaxAbsEntry * kMaxAbsEntry / kMinTemperature;
static_assert(kMaxAbsScore < 1e30, "every score must stay finite in float, with room for exp()'s argument");
// compute() and the CLI return at most this many numbers (scores + weights + output, Tq·Tk·2 +
// Tq·dv): about 60 MB of JSON. Larger requests are refused before anything big is allocated.
constexpr long long kMaxResultNumbers = 1ll << 22;

// The lesson's common mistakes, each computed the wrong way for real, so its symptom can be seen.
enum class Mistake {
  None,
  ForgetScale,       // scores are not divided by √d: near one-hot rows for large d
  SoftmaxWrongAxis,  // softmax down each column: columns sum to 1, rows do not
  MaskAfterSoftmax,  // softmax over every key, then future weights zeroed: rows sum < 1 and the
                     // future still shaped the normalisation (it leaks)
  MaskWithZero,      // future scores set to 0 instead of −∞: future keys keep a share of weight
  SwapKeysValues,    // match against the values and pass on the keys: content used for matching
};
const char* mistake_name(Mistake m);             // "none", "forget_scale", ...
bool parse_mistake(const std::string& name, Mistake* m);

struct AttentionOptions {
  bool scale = true;          // divide scores by √d (d = width of the keys), or multiply by score_scale
  float score_scale = 0;      // > 0: the model's own factor in place of 1/√d (Gemma's query_pre_attn_scalar^−½)
  float temperature = 1.0f;   // divides the scores too; in [kMinTemperature, kMaxTemperature]
  float softcap = 0;          // > 0: scaled scores become tanh(s / softcap) · softcap before the mask
  bool causal = false;        // hide key j from query i when j > i
  int window = 0;             // > 0: also hide key j when i − j ≥ window (a sliding-window layer)
  // Links cut by hand, (query, key): hidden as the mask hides them, −∞ before the softmax (after any
  // soft-cap). attend() refuses a cut that leaves a query no visible key.
  std::vector<std::pair<int, int>> cuts;
  Mistake mistake = Mistake::None;
};

// Every intermediate of softmax(QKᵀ/√d)·V, all row-major. Shapes for Tq queries, Tk keys:
// query (Tq, d), key (Tk, d), value (Tk, dv), raw/scaled/capped/masked scores and weights (Tq, Tk),
// output (Tq, dv). Masked scores hold −∞ where the mask hides a key (0 under MaskWithZero).
struct AttentionTrace {
  Matrix query, key, value;
  Matrix raw_scores;     // Q·Kᵀ
  Matrix scaled_scores;  // Q·Kᵀ · score_factor
  Matrix capped_scores;  // tanh(scaled / softcap) · softcap; the scaled scores themselves without a cap
  Matrix masked_scores;  // what the softmax actually sees
  Matrix weights;        // the attention matrix A
  Matrix output;         // A·V
  float score_factor = 1.0f;  // 1/(√d · temperature), or 1/temperature without scaling
  AttentionOptions options;
};

// Checks shapes, sizes and values; throws std::invalid_argument naming what is wrong.
// `what` names the matrix in the message ("Q", "K", ...).
void validate_matrix(const Matrix& m, const char* what);
void validate_qkv(const Matrix& query, const Matrix& key, const Matrix& value);
void validate_options(const AttentionOptions& options);
// Whether a requested temperature (a double from JSON or the command line) is in the domain once
// stored as a float: "0.05" is accepted although the double 0.05 lies a hair below 0.05f, and
// 1e300 is refused without the undefined float conversion.
bool temperature_in_domain(double temperature);

// Attention from ready-made Q, K, V (K and V may have another row count than Q: cross-attention).
AttentionTrace attend(const Matrix& query, const Matrix& key, const Matrix& value, const AttentionOptions& options);

// Attention from token vectors: Q = X·Wq, K = X_kv·Wk, V = X_kv·Wv (X_kv = X for self-attention).
AttentionTrace attend_projected(const Matrix& x, const Matrix& x_kv, const Matrix& wq, const Matrix& wk,
                                const Matrix& wv, const AttentionOptions& options);

// Sets scores(i, j) = fill for every key j after query i (j > i).
void apply_causal_mask(Matrix& scores, float fill);
// Whether options' mask (causal, window, cut links) hides key j from query i.
bool mask_hides(const AttentionOptions& options, Eigen::Index i, Eigen::Index j);

// The factor the raw scores are multiplied by, for keys of width d.
float score_factor(int d, const AttentionOptions& options);

// Checks options.cuts against Tq queries and Tk keys: each in range, not already hidden by the mask,
// and none leaving a query without a visible key. `what` names the head in the message.
void validate_cuts(const AttentionOptions& options, int Tq, int Tk, const std::string& what);
// options.cuts as a (Tq, Tk) array for AttentionProblem::cut (empty when there are none).
std::vector<unsigned char> cut_mask(const AttentionOptions& options, int Tq, int Tk);

// Measurable symptoms of a trace, the numbers the mistakes view and the tests read.
struct Symptoms {
  float max_row_sum_error = 0;  // max_i |sum_j A_ij - 1|
  float max_col_sum_error = 0;  // max_j |sum_i A_ij - 1|
  float future_weight = 0;      // largest weight a query gives a key after it (causal only)
  float frac_one_hot = 0;       // share of rows whose largest weight is > 0.99
};
Symptoms diagnose(const AttentionTrace& trace);

// The fast path for the same problem (correct attention only), through a chosen backend.
struct AttentionResult {
  Matrix weights, output;
};
AttentionResult attend_with(Backend backend, const Matrix& query, const Matrix& key, const Matrix& value,
                            const AttentionOptions& options, bool want_weights = true);

}  // namespace attn
