// The views' numbers that the core does not store, computed once per input revision (view_numbers.h),
// and those views' getState().view_data. Not the maths of record: scores, weights and outputs are
// the core's trace; not drawing: no ImGui.
#include "view_numbers.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "../api/compute_json.h"
#include "../core/softmax.h"
#include "app_state.h"
#include "check_answers.h"
#include "view_data.h"

namespace attn {

using nlohmann::json;

// [SECTION] The one rule for writing exps on screen

ExpRow display_exps(const float* scores, int count) {
  ExpRow r;
  double largest = -std::numeric_limits<double>::infinity();
  for (int j = 0; j < count; ++j)
    if (std::isfinite(scores[j])) largest = std::max(largest, static_cast<double>(scores[j]));
  r.shift = largest > kPlainExpLimit ? largest : 0.0;
  for (int j = 0; j < count; ++j) {
    r.exps.push_back(std::isfinite(scores[j]) ? std::exp(static_cast<double>(scores[j]) - r.shift) : 0.0);
    r.sum_of_exps += r.exps.back();
  }
  return r;
}

// [SECTION] Derive

namespace {

std::vector<RoundingGap> rounding_gaps(const AttentionTrace& t) {
  std::vector<RoundingGap> gaps;
  const auto round2 = [](double v) { return std::round(v * 100.0) / 100.0; };
  for (int i = 0; i < t.weights.rows(); ++i)
    for (int c = 0; c < t.output.cols(); ++c) {
      double by_hand = 0;
      for (int j = 0; j < t.weights.cols(); ++j) by_hand += round2(t.weights(i, j)) * t.value(j, c);
      if (std::fabs(round2(by_hand) - round2(t.output(i, c))) > 0.005) gaps.push_back({i, c, by_hand, t.output(i, c)});
    }
  return gaps;
}

json rows_json(const Eigen::MatrixXd& m) {
  json out = json::array();
  for (int i = 0; i < m.rows(); ++i) {
    json row = json::array();
    for (int j = 0; j < m.cols(); ++j) row.push_back(m(i, j));
    out.push_back(row);
  }
  return out;
}

}  // namespace

DeriveNumbers derive_numbers(const AttentionTrace& t) {
  DeriveNumbers out;
  const int rows = static_cast<int>(t.scaled_scores.rows()), cols = static_cast<int>(t.scaled_scores.cols());
  out.root_d = std::sqrt(static_cast<double>(t.key.cols()));
  out.exps.resize(rows, cols);
  out.shift = Eigen::VectorXd::Zero(rows);
  out.row_sums = Eigen::VectorXd::Zero(rows);
  for (int i = 0; i < rows; ++i) {
    const std::vector<float> scores(t.scaled_scores.row(i).data(), t.scaled_scores.row(i).data() + cols);
    const ExpRow r = display_exps(scores.data(), cols);
    for (int j = 0; j < cols; ++j) out.exps(i, j) = r.exps[static_cast<std::size_t>(j)];
    out.shift(i) = r.shift;
    out.row_sums(i) = r.sum_of_exps;
  }
  out.stage_answers = {t.raw_scores.cast<double>(), t.scaled_scores.cast<double>(), out.exps, out.row_sums,
                       t.weights.cast<double>(),    t.output.cast<double>()};
  out.rounding_gaps = rounding_gaps(t);
  return out;
}

DeriveCellMark derive_cell_mark(const AppState& state, int stage, int row, int col) {
  DeriveCellMark m;
  const auto it = state.inputs.checks.find(derive_cell_id(stage, row, col));
  if (it == state.inputs.checks.end()) return m;
  m.typed = it->second.answer;
  double typed = 0;
  m.answered = parse_typed_number(m.typed, &typed);
  m.right = m.answered && within_rounding(typed, state.views.derive.stage_answers[static_cast<std::size_t>(stage)](row, col));
  return m;
}

std::vector<Eigen::MatrixXd> derive_stage_answers(const AppState& state) { return state.views.derive.stage_answers; }

json derive_view_data(const AppState& state) {
  const DeriveNumbers& dv = state.views.derive;
  const AttentionTrace& t = state.model.derive;
  json row_sums = json::array(), shift = json::array();
  for (int i = 0; i < dv.row_sums.size(); ++i) {
    row_sums.push_back(dv.row_sums(i));
    shift.push_back(dv.shift(i));
  }
  json stages = json::array();
  for (int s = 0; s < kDeriveCheckStageCount; ++s) {
    const Eigen::MatrixXd& answers = dv.stage_answers[static_cast<std::size_t>(s)];
    json cells = json::array();
    int answered = 0, right = 0;
    for (int i = 0; i < answers.rows(); ++i) {
      json row = json::array();
      for (int j = 0; j < answers.cols(); ++j) {
        const DeriveCellMark m = derive_cell_mark(state, s, i, j);
        answered += m.answered, right += m.right;
        row.push_back(m.typed.empty() ? json(nullptr) : json{{"typed", m.typed}, {"right", m.right}});
      }
      cells.push_back(row);
    }
    stages.push_back({{"stage", kDeriveCheckStages[s].id}, {"answered", answered}, {"right", right},
                      {"total", answers.size()}, {"cells", cells}});
  }
  json gaps = json::array();
  for (const RoundingGap& g : dv.rounding_gaps)
    gaps.push_back({{"token", g.token}, {"column", g.column}, {"by_hand", g.by_hand}, {"output", g.output}});
  return {{"revealed", state.inputs.derive_revealed},
          {"raw_scores", matrix_to_json(t.raw_scores)},
          {"scaled_scores", matrix_to_json(t.scaled_scores)},
          {"exps", rows_json(dv.exps)},
          {"exp_shift", shift},  // per row: 0 for plain exp, else the row max taken off first
          {"row_sums", row_sums},
          {"weights", matrix_to_json(t.weights)},
          {"output", matrix_to_json(t.output)},
          {"predictions", stages},
          {"rounding_gaps", gaps}};
}

// [SECTION] Steps

StepsNumbers steps_numbers(const AttentionTrace& t, int row, float temperature) {
  StepsNumbers n;
  const int keys = static_cast<int>(t.masked_scores.cols());
  for (int j = 0; j < keys; ++j) n.softmax_scores.push_back(t.masked_scores(row, j));
  n.softmax = display_exps(n.softmax_scores.data(), keys);
  n.weights_sum = t.weights.row(row).sum();

  n.keys_by_weight.resize(static_cast<std::size_t>(t.weights.cols()));
  std::iota(n.keys_by_weight.begin(), n.keys_by_weight.end(), 0);
  std::stable_sort(n.keys_by_weight.begin(), n.keys_by_weight.end(),
                   [&](int a, int b) { return t.weights(row, a) > t.weights(row, b); });

  n.sqrt_d = std::sqrt(static_cast<float>(t.key.cols()));
  const double mean = t.raw_scores.mean();
  double squares = 0;
  for (Eigen::Index i = 0; i < t.raw_scores.size(); ++i) squares += std::pow(t.raw_scores.data()[i] - mean, 2);
  n.std_raw = static_cast<float>(std::sqrt(squares / static_cast<double>(t.raw_scores.size())));
  n.std_divided = n.std_raw / n.sqrt_d;
  const int raw_keys = static_cast<int>(t.raw_scores.cols());
  const auto weights_with_factor = [&](float factor) {
    std::vector<float> scores(static_cast<std::size_t>(raw_keys)), weights(static_cast<std::size_t>(raw_keys));
    for (int j = 0; j < raw_keys; ++j)
      scores[static_cast<std::size_t>(j)] = t.options.causal && j > row ? -std::numeric_limits<float>::infinity()
                                                                        : t.raw_scores(row, j) * factor;
    softmax_row(scores.data(), weights.data(), static_cast<std::size_t>(raw_keys));
    return weights;
  };
  n.weights_divided = weights_with_factor(1.0f / (n.sqrt_d * temperature));
  n.weights_undivided = weights_with_factor(1.0f / temperature);
  return n;
}

// [SECTION] Weights

WeightsNumbers weights_numbers(const AttentionTrace& t, bool by_column) {
  WeightsNumbers n;
  for (Eigen::Index i = 0; i < t.weights.rows(); ++i) n.row_sums.push_back(t.weights.row(i).sum());
  n.by_column = by_column;
  const Matrix& seen = t.masked_scores;
  const int lines = static_cast<int>(by_column ? seen.cols() : seen.rows());
  const int along = static_cast<int>(by_column ? seen.rows() : seen.cols());
  const auto at = [&](int line, int k) { return static_cast<double>(by_column ? seen(k, line) : seen(line, k)); };
  n.exps = Eigen::MatrixXd::Zero(seen.rows(), seen.cols());
  n.softmax = Eigen::MatrixXd::Zero(seen.rows(), seen.cols());
  for (int l = 0; l < lines; ++l) {
    double max = -std::numeric_limits<double>::infinity(), sum = 0;
    for (int k = 0; k < along; ++k)
      if (std::isfinite(at(l, k))) max = std::max(max, at(l, k));
    for (int k = 0; k < along; ++k) {
      if (!std::isfinite(at(l, k))) continue;
      const double e = std::exp(at(l, k) - max);
      (by_column ? n.exps(k, l) : n.exps(l, k)) = e;
      sum += e;
    }
    for (int k = 0; k < along; ++k)
      if (std::isfinite(at(l, k))) (by_column ? n.softmax(k, l) : n.softmax(l, k)) = (by_column ? n.exps(k, l) : n.exps(l, k)) / sum;
    n.line_max.push_back(max);
    n.line_sum_of_exps.push_back(sum);
  }
  return n;
}

// [SECTION] Heads

HeadsNumbers heads_numbers(const ModelTrace* forward, const AttentionTrace& t, int row) {
  HeadsNumbers n;
  if (forward && !forward->layers.empty()) {
    n.layers = static_cast<int>(forward->layers.size());
    n.heads = static_cast<int>(forward->layers[0].summaries.size());
    for (const LayerTrace& layer : forward->layers)
      n.summaries.insert(n.summaries.end(), layer.summaries.begin(), layer.summaries.end());
  }
  for (const HeadSummary& s : n.summaries) {
    ++n.pattern_counts[static_cast<int>(s.pattern)];
    n.sinks += s.sink;
  }
  std::vector<int> order(static_cast<std::size_t>(t.weights.cols()));
  std::iota(order.begin(), order.end(), 0);
  const std::size_t shown = std::min<std::size_t>(static_cast<std::size_t>(kShownTopKeys), order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<long>(shown), order.end(),
                    [&](int a, int b) { return t.weights(row, a) > t.weights(row, b); });
  order.resize(shown);
  n.top_keys = order;
  return n;
}

// [SECTION] Flow

StrongestKeys strongest_keys(const AttentionTrace& t, int row) {
  std::vector<int> order(static_cast<std::size_t>(t.weights.cols()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return t.weights(row, a) > t.weights(row, b); });
  const float top = t.weights(row, order[0]);
  StrongestKeys s;
  s.tied = 0;
  for (int j : order) s.tied += std::fabs(t.weights(row, j) - top) <= 1e-6f * std::max(1.0f, top);
  const std::size_t shown = std::min<std::size_t>(order.size(), static_cast<std::size_t>(s.tied > 1 ? s.tied : 3));
  for (std::size_t i = 0; i < shown; ++i) {
    s.keys.push_back(order[i]);
    s.weights.push_back(t.weights(row, order[i]));
  }
  return s;
}

// [SECTION] Library

bool key_hidden_by_mask(const AttentionTrace& trace, int row, int col) {
  if (!std::isfinite(trace.masked_scores(row, col))) return true;
  return trace.options.causal && trace.options.mistake == Mistake::MaskAfterSoftmax && col > row;
}

bool link_cut(const AttentionTrace& trace, int row, int col) {
  const auto& cuts = trace.options.cuts;
  return std::find(cuts.begin(), cuts.end(), std::make_pair(row, col)) != cuts.end();
}

std::vector<std::string> query_labels(const AppState& state) {
  std::vector<std::string> out;
  for (const Token& t : state.model.queries.tokens) out.push_back(t.text);
  return out;
}

std::vector<std::string> key_labels(const AppState& state) {
  std::vector<std::string> out;
  for (const Token& t : state.model.keys.tokens) out.push_back(t.text);
  return out;
}

LibraryReading library_reading(const AttentionTrace& t, int reader, bool best_only, Mistake mistake) {
  // What is passed on: the values, or the keys under the "swap keys and values" mistake.
  const Matrix& contents = mistake == Mistake::SwapKeysValues ? t.key : t.value;
  LibraryReading r;
  r.reader = reader;
  const int books = static_cast<int>(t.weights.cols());
  r.best = -1;
  for (int j = 0; j < books; ++j)
    if (!key_hidden_by_mask(t, reader, j) && (r.best < 0 || t.masked_scores(reader, j) > t.masked_scores(reader, r.best))) r.best = j;
  if (r.best < 0) r.best = 0;  // cannot happen (a query always sees key 0), but never index -1
  for (int j = 0; j < books; ++j) {
    r.attention.push_back(t.weights(reader, j));
    r.read.push_back(best_only ? (j == r.best ? 1.0f : 0.0f) : t.weights(reader, j));
  }
  for (int c = 0; c < static_cast<int>(t.output.cols()); ++c) {
    r.blend.push_back(t.output(reader, c));
    r.best_book.push_back(contents(r.best, c));
  }
  for (Eigen::Index j = 0; j < contents.rows(); ++j) r.value_lengths.push_back(contents.row(j).norm());
  float longest = 0;
  for (int j = 0; j < books; ++j)
    if (!key_hidden_by_mask(t, reader, j)) longest = std::max(longest, r.value_lengths[static_cast<std::size_t>(j)]);
  for (int j = 0; j < books; ++j) {
    const float length = r.value_lengths[static_cast<std::size_t>(j)];
    const float read = r.attention[static_cast<std::size_t>(j)];
    if (key_hidden_by_mask(t, reader, j) || j == r.best || read < 0.05f || length <= 0.0f || length >= 0.5f * longest) continue;
    if (r.thin_book < 0 || read > r.attention[static_cast<std::size_t>(r.thin_book)]) r.thin_book = j;
  }
  return r;
}

// [SECTION] Every view's numbers

ViewNumbers view_numbers(const AppState& state) {
  ViewNumbers v;
  v.derive = derive_numbers(state.model.derive);
  v.steps = steps_numbers(state.model.trace, state.inputs.token, state.inputs.temperature);
  v.heads = heads_numbers(state.model.forward.get(), state.model.trace, state.inputs.token);
  v.flow.strongest = strongest_keys(state.model.trace, state.inputs.token);
  v.flow.rows_sum_to_one = diagnose(state.model.trace).max_row_sum_error < 1e-3f;
  v.library = library_reading(state.model.trace, state.inputs.token, state.inputs.library_best_only, state.inputs.mistake);
  v.weights = weights_numbers(state.model.trace, state.inputs.mistake == Mistake::SoftmaxWrongAxis);
  return v;
}

}  // namespace attn
