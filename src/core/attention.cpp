// The attention trace, the mistakes and input validation (see attention.h).
// Not a kernel: clarity first, every matrix kept.
#include "attention.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "softmax.h"

namespace attn {

namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
std::string shape(const Matrix& m) { return "(" + std::to_string(m.rows()) + ", " + std::to_string(m.cols()) + ")"; }
// 0.05, 20, 1e-40, 1e+06: short and exact enough for a message.
std::string number_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}
}  // namespace

const char* mistake_name(Mistake m) {
  switch (m) {
    case Mistake::None: return "none";
    case Mistake::ForgetScale: return "forget_scale";
    case Mistake::SoftmaxWrongAxis: return "softmax_wrong_axis";
    case Mistake::MaskAfterSoftmax: return "mask_after_softmax";
    case Mistake::MaskWithZero: return "mask_with_zero";
    case Mistake::SwapKeysValues: return "swap_keys_values";
  }
  return "?";
}

bool parse_mistake(const std::string& name, Mistake* m) {
  for (Mistake c : {Mistake::None, Mistake::ForgetScale, Mistake::SoftmaxWrongAxis, Mistake::MaskAfterSoftmax,
                    Mistake::MaskWithZero, Mistake::SwapKeysValues})
    if (name == mistake_name(c)) {
      *m = c;
      return true;
    }
  return false;
}

void validate_matrix(const Matrix& m, const char* what) {
  if (m.rows() == 0 || m.cols() == 0) throw std::invalid_argument(std::string(what) + " is empty");
  if (m.rows() > kMaxSequence)
    throw std::invalid_argument(std::string(what) + " has " + std::to_string(m.rows()) + " rows; the limit is " +
                                std::to_string(kMaxSequence));
  if (m.cols() > kMaxWidth)
    throw std::invalid_argument(std::string(what) + " has " + std::to_string(m.cols()) + " columns; the limit is " +
                                std::to_string(kMaxWidth));
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
      const float v = m(i, j);
      if (!std::isfinite(v))
        throw std::invalid_argument(std::string(what) + "[" + std::to_string(i) + "][" + std::to_string(j) +
                                    "] is not a finite number");
      if (std::fabs(v) > kMaxAbsEntry)
        throw std::invalid_argument(std::string(what) + "[" + std::to_string(i) + "][" + std::to_string(j) +
                                    "] is too large (|value| must be at most " + number_text(kMaxAbsEntry) + ")");
    }
}

void validate_qkv(const Matrix& query, const Matrix& key, const Matrix& value) {
  validate_matrix(query, "Q");
  validate_matrix(key, "K");
  validate_matrix(value, "V");
  if (query.cols() != key.cols())
    throw std::invalid_argument("Q " + shape(query) + " and K " + shape(key) + " must have the same width d");
  if (key.rows() != value.rows())
    throw std::invalid_argument("K " + shape(key) + " and V " + shape(value) +
                                " must have the same number of rows (one value per key)");
}

void validate_options(const AttentionOptions& options) {
  if (!(options.temperature >= kMinTemperature && options.temperature <= kMaxTemperature))  // NaN fails too
    throw std::invalid_argument("temperature must be a number from " + number_text(kMinTemperature) + " to " +
                                number_text(kMaxTemperature) + " (got " + number_text(options.temperature) + ")");
  if (!(options.score_scale >= 0 && options.score_scale <= 1e3)) throw std::invalid_argument("score scale must be from 0 to 1000");
  if (!(options.softcap >= 0 && options.softcap <= 1e6)) throw std::invalid_argument("soft-cap must be from 0 to 1000000");
  if (options.window < 0) throw std::invalid_argument("window must be 0 (none) or a positive number of tokens");
}

bool temperature_in_domain(double temperature) {
  if (!(temperature >= 0.0 && temperature <= 1e30)) return false;  // NaN too
  const float stored = static_cast<float>(temperature);
  return stored >= kMinTemperature && stored <= kMaxTemperature;
}

void apply_causal_mask(Matrix& scores, float fill) {
  for (Eigen::Index i = 0; i < scores.rows(); ++i)
    for (Eigen::Index j = i + 1; j < scores.cols(); ++j) scores(i, j) = fill;
}

namespace {
bool mask_alone_hides(const AttentionOptions& o, Eigen::Index i, Eigen::Index j) {
  return (o.causal && j > i) || (o.window > 0 && i - j >= o.window);
}
}  // namespace

bool mask_hides(const AttentionOptions& o, Eigen::Index i, Eigen::Index j) {
  if (mask_alone_hides(o, i, j)) return true;
  for (const auto& [q, k] : o.cuts)
    if (q == i && k == j) return true;
  return false;
}

void validate_cuts(const AttentionOptions& o, int Tq, int Tk, const std::string& what) {
  const auto link = [](int q, int k) { return std::to_string(q) + "→" + std::to_string(k); };
  std::vector<unsigned char> cut(static_cast<std::size_t>(Tq) * static_cast<std::size_t>(std::max(Tk, 0)), 0);
  for (const auto& [q, k] : o.cuts) {
    if (q < 0 || q >= Tq || k < 0 || k >= Tk)
      throw std::invalid_argument(what + ": the cut link " + link(q, k) + " is outside the text (queries 0 to " +
                                  std::to_string(Tq - 1) + ", keys 0 to " + std::to_string(Tk - 1) + ")");
    if (mask_alone_hides(o, q, k))
      throw std::invalid_argument(what + ": the link " + link(q, k) + " is hidden by the mask already (" +
                                  (o.causal && k > q ? "a later token" : "outside the window") + ")");
    cut[static_cast<std::size_t>(q) * static_cast<std::size_t>(Tk) + static_cast<std::size_t>(k)] = 1;
  }
  for (const auto& [q, k] : o.cuts) {
    bool visible = false;
    for (int j = 0; j < Tk && !visible; ++j)
      visible = !mask_alone_hides(o, q, j) && !cut[static_cast<std::size_t>(q) * static_cast<std::size_t>(Tk) + static_cast<std::size_t>(j)];
    if (!visible)
      throw std::invalid_argument(what + ": cutting " + link(q, k) + " leaves query " + std::to_string(q) +
                                  " no key to look at (a softmax over nothing is undefined): keep one link of its row");
  }
}

std::vector<unsigned char> cut_mask(const AttentionOptions& o, int Tq, int Tk) {
  if (o.cuts.empty()) return {};
  std::vector<unsigned char> cut(static_cast<std::size_t>(Tq) * static_cast<std::size_t>(Tk), 0);
  for (const auto& [q, k] : o.cuts)
    if (q >= 0 && q < Tq && k >= 0 && k < Tk) cut[static_cast<std::size_t>(q) * static_cast<std::size_t>(Tk) + static_cast<std::size_t>(k)] = 1;
  return cut;
}

float score_factor(int d, const AttentionOptions& options) {
  const bool divide = options.scale && options.mistake != Mistake::ForgetScale;
  const float factor = options.score_scale > 0 ? options.score_scale : 1.0f / std::sqrt(static_cast<float>(d));
  return (divide ? factor : 1.0f) / options.temperature;
}

AttentionTrace attend(const Matrix& query, const Matrix& key, const Matrix& value, const AttentionOptions& options) {
  validate_qkv(query, key, value);
  validate_options(options);
  const Mistake mistake = options.mistake;
  if (mistake == Mistake::SwapKeysValues && value.cols() != key.cols())
    throw std::invalid_argument("swapping keys and values needs V as wide as K");

  AttentionTrace t;
  t.options = options;
  t.query = query;
  t.key = key;
  t.value = value;
  // The mistake: match the query against the values, and pass the keys on as content.
  const Matrix& matched = mistake == Mistake::SwapKeysValues ? value : key;
  const Matrix& passed_on = mistake == Mistake::SwapKeysValues ? key : value;
  const Eigen::Index Tq = query.rows(), Tk = key.rows();
  validate_cuts(options, static_cast<int>(Tq), static_cast<int>(Tk), "attention");

  t.raw_scores = query * matched.transpose();
  t.score_factor = score_factor(static_cast<int>(key.cols()), options);
  t.scaled_scores = t.raw_scores * t.score_factor;
  t.capped_scores = options.softcap > 0
                        ? Matrix(((t.scaled_scores / options.softcap).array().tanh() * options.softcap).matrix())
                        : t.scaled_scores;

  // The mask belongs before the softmax, as −∞, so a hidden key gets weight exactly 0.
  t.masked_scores = t.capped_scores;
  const auto mask = [&](Matrix& m, float fill) {
    for (Eigen::Index i = 0; i < m.rows(); ++i)
      for (Eigen::Index j = 0; j < m.cols(); ++j)
        if (mask_hides(options, i, j)) m(i, j) = fill;
  };
  if (mistake != Mistake::MaskAfterSoftmax) mask(t.masked_scores, mistake == Mistake::MaskWithZero ? 0.0f : kNegInf);

  t.weights.resize(Tq, Tk);
  if (mistake == Mistake::SoftmaxWrongAxis) {
    // Normalising each column: one key's weights over all queries sum to 1, rows do not.
    const Matrix columns = t.masked_scores.transpose();
    Matrix normalised(Tk, Tq);
    for (Eigen::Index j = 0; j < Tk; ++j)
      softmax_row(columns.row(j).data(), normalised.row(j).data(), static_cast<std::size_t>(Tq));
    t.weights = normalised.transpose();
  } else {
    for (Eigen::Index i = 0; i < Tq; ++i)
      softmax_row(t.masked_scores.row(i).data(), t.weights.row(i).data(), static_cast<std::size_t>(Tk));
  }
  if (mistake == Mistake::MaskAfterSoftmax) mask(t.weights, 0.0f);

  t.output = t.weights * passed_on;
  return t;
}

AttentionTrace attend_projected(const Matrix& x, const Matrix& x_kv, const Matrix& wq, const Matrix& wk,
                                const Matrix& wv, const AttentionOptions& options) {
  validate_matrix(x, "X");
  validate_matrix(x_kv, "X_kv");
  validate_matrix(wq, "Wq");
  validate_matrix(wk, "Wk");
  validate_matrix(wv, "Wv");
  if (wq.rows() != x.cols())
    throw std::invalid_argument("Wq " + shape(wq) + " must have as many rows as X " + shape(x) + " has columns");
  if (wk.rows() != x_kv.cols() || wv.rows() != x_kv.cols())
    throw std::invalid_argument("Wk " + shape(wk) + " and Wv " + shape(wv) + " must have as many rows as " +
                                "the key/value inputs " + shape(x_kv) + " have columns");
  return attend(x * wq, x_kv * wk, x_kv * wv, options);
}

Symptoms diagnose(const AttentionTrace& t) {
  Symptoms s;
  const Matrix& a = t.weights;
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    s.max_row_sum_error = std::max(s.max_row_sum_error, std::fabs(a.row(i).sum() - 1.0f));
    if (a.row(i).maxCoeff() > 0.99f) s.frac_one_hot += 1.0f;
    if (t.options.causal)
      for (Eigen::Index j = i + 1; j < a.cols(); ++j) s.future_weight = std::max(s.future_weight, a(i, j));
  }
  s.frac_one_hot /= static_cast<float>(a.rows());
  for (Eigen::Index j = 0; j < a.cols(); ++j)
    s.max_col_sum_error = std::max(s.max_col_sum_error, std::fabs(a.col(j).sum() - 1.0f));
  return s;
}

AttentionResult attend_with(Backend backend, const Matrix& query, const Matrix& key, const Matrix& value,
                            const AttentionOptions& options, bool want_weights) {
  validate_qkv(query, key, value);
  validate_options(options);
  if (options.mistake != Mistake::None)
    throw std::invalid_argument("the fast backends compute correct attention only; use attend() for mistakes");
  AttentionProblem p;
  p.query = query.data();
  p.key = key.data();
  p.value = value.data();
  p.Tq = static_cast<int>(query.rows());
  p.Tk = static_cast<int>(key.rows());
  p.d = static_cast<int>(query.cols());
  p.dv = static_cast<int>(value.cols());
  p.scale = score_factor(p.d, options);
  p.causal = options.causal;
  p.window = options.window;
  p.softcap = options.softcap;
  validate_cuts(options, p.Tq, p.Tk, "attention");
  const std::vector<unsigned char> cut = cut_mask(options, p.Tq, p.Tk);
  p.cut = cut.empty() ? nullptr : cut.data();
  AttentionResult r;
  r.output.resize(p.Tq, p.dv);
  if (want_weights) r.weights.resize(p.Tq, p.Tk);
  attention_forward(backend, p, r.output.data(), want_weights ? r.weights.data() : nullptr);
  return r;
}

}  // namespace attn
