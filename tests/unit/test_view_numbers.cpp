// The views' numbers held by the state (src/state/view_numbers.h): each view's against direct
// computations with the core, the one rule for writing exps, and their recomputation when an input
// changes. No ImGui: the panels only draw these.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "../../src/api/trained_model_bytes.h"
#include "../../src/core/corpus.h"
#include "../../src/core/head_summary.h"
#include "../../src/core/softmax.h"
#include "../../src/state/app_state.h"
#include "../../src/state/view_data.h"
#include "../../src/state/view_numbers.h"
#include "test_helpers.h"

using namespace attn;
using attn::test::rows;

namespace {
constexpr float kInfinity = std::numeric_limits<float>::infinity();
}

TEST_CASE("display_exps: plain exp up to kPlainExpLimit, the row's max taken off above it, 0 for a hidden key") {
  const float plain[] = {20.0f, 0.0f, -kInfinity};
  const ExpRow a = display_exps(plain, 3);
  CHECK(a.shift == 0.0);
  CHECK(a.exps[0] == doctest::Approx(std::exp(20.0)).epsilon(1e-12));
  CHECK(a.exps[1] == 1.0);
  CHECK(a.exps[2] == 0.0);
  CHECK(a.sum_of_exps == doctest::Approx(std::exp(20.0) + 1.0).epsilon(1e-12));

  const float big[] = {-kInfinity, 20.5f, 18.5f};
  const ExpRow b = display_exps(big, 3);
  CHECK(b.shift == doctest::Approx(20.5));
  CHECK(b.exps[0] == 0.0);
  CHECK(b.exps[1] == doctest::Approx(1.0));
  CHECK(b.exps[2] == doctest::Approx(std::exp(-2.0)));  // 0.1353
  CHECK(b.sum_of_exps == doctest::Approx(1.1353).epsilon(1e-4));
}

TEST_CASE("Derive's six stages on the lesson's 3×2 example, by hand") {
  // Q = K = [[1, 0], [0, 1], [1, 1]], V = [[1, 2], [3, 4], [5, 6]]; d = 2, √2 ≈ 1.4142
  const AttentionTrace t = attend(AppInputs::derive_default_qk(), AppInputs::derive_default_qk(),
                                  AppInputs::derive_default_v(), AttentionOptions{});
  const DeriveNumbers n = derive_numbers(t);
  REQUIRE(n.stage_answers.size() == 6);
  CHECK(n.root_d == doctest::Approx(1.41421).epsilon(1e-5));
  // 1: Q·Kᵀ row 2 (token 3) = [1, 1, 2]; 2: ÷ √2 = [0.7071, 0.7071, 1.4142]
  CHECK(n.stage_answers[0](2, 2) == doctest::Approx(2.0));
  CHECK(n.stage_answers[1](2, 2) == doctest::Approx(1.41421).epsilon(1e-5));
  // 3: e^0.7071 ≈ 2.0281, e^0 = 1 (plain exp: no shift for scores this small)
  CHECK(n.shift.isZero());
  CHECK(n.exps(0, 0) == doctest::Approx(2.0281).epsilon(1e-4));
  CHECK(n.exps(0, 1) == doctest::Approx(1.0));
  CHECK(n.exps(2, 2) == doctest::Approx(4.1133).epsilon(1e-4));
  // 4: row sums 2.0281 + 1 + 2.0281 = 5.0562 and 2.0281 + 2.0281 + 4.1133 = 8.1695
  REQUIRE(n.row_sums.size() == 3);
  CHECK(n.row_sums(0) == doctest::Approx(5.0562).epsilon(1e-4));
  CHECK(n.row_sums(2) == doctest::Approx(8.1695).epsilon(1e-4));
  CHECK(n.stage_answers[3].rows() == 3);
  CHECK(n.stage_answers[3].cols() == 1);
  CHECK(n.stage_answers[3](2, 0) == doctest::Approx(8.1695).epsilon(1e-4));
  // 5: each exp ÷ its row sum is the core's weight (0.4011, 0.1978, 0.4011 for token 1)
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) CHECK(n.exps(i, j) / n.row_sums(i) == doctest::Approx(t.weights(i, j)).epsilon(1e-5));
  CHECK(n.stage_answers[4](0, 1) == doctest::Approx(0.1978).epsilon(1e-3));
  // 6: the output is the core's, (3, 2)
  CHECK(n.stage_answers[5].rows() == 3);
  CHECK(n.stage_answers[5].cols() == 2);
  CHECK(n.stage_answers[5](1, 1) == doctest::Approx(t.output(1, 1)));
}

TEST_CASE("Derive: a row with scores above the limit takes its max off first, the weights unchanged") {
  const Matrix qk = rows({{30, 0}, {0, 1}, {1, 1}});  // token 1's score with itself: 900 / √2 ≈ 636
  const AttentionTrace t = attend(qk, qk, AppInputs::derive_default_v(), AttentionOptions{});
  const DeriveNumbers n = derive_numbers(t);
  CHECK(n.shift(0) == doctest::Approx(t.scaled_scores(0, 0)));
  CHECK(n.shift(1) == 0.0);
  CHECK(n.exps(0, 0) == doctest::Approx(1.0));
  CHECK(std::isfinite(n.row_sums(0)));
  for (int j = 0; j < 3; ++j) CHECK(n.exps(0, j) / n.row_sums(0) == doctest::Approx(t.weights(0, j)).epsilon(1e-5));
}

TEST_CASE("Steps: the selected row's exps make the core's weights, its keys by weight, step 6 both ways") {
  const AppState state = make_initial_state();
  const AttentionTrace& t = state.model.trace;
  const int row = state.inputs.token;
  const StepsNumbers& n = state.views.steps;
  const int keys = static_cast<int>(t.weights.cols());
  REQUIRE(static_cast<int>(n.softmax.exps.size()) == keys);
  double weights_sum = 0;
  for (int j = 0; j < keys; ++j) {
    CHECK(n.softmax_scores[static_cast<std::size_t>(j)] == t.masked_scores(row, j));
    CHECK(n.softmax.exps[static_cast<std::size_t>(j)] / n.softmax.sum_of_exps ==
          doctest::Approx(t.weights(row, j)).epsilon(1e-5));
    weights_sum += t.weights(row, j);
  }
  CHECK(n.weights_sum == doctest::Approx(1.0).epsilon(1e-5));  // the rows sum to 1
  CHECK(n.weights_sum == doctest::Approx(weights_sum));
  REQUIRE(static_cast<int>(n.keys_by_weight.size()) == keys);
  for (int k = 1; k < keys; ++k)
    CHECK(t.weights(row, n.keys_by_weight[static_cast<std::size_t>(k - 1)]) >=
          t.weights(row, n.keys_by_weight[static_cast<std::size_t>(k)]));
  // step 6: ÷ √d is the trace's own row (no mask, temperature 1); not ÷ √d is the core's softmax of the raw row
  CHECK(n.sqrt_d == doctest::Approx(std::sqrt(static_cast<float>(t.key.cols()))));
  CHECK(n.std_divided == doctest::Approx(n.std_raw / n.sqrt_d));
  std::vector<float> raw(static_cast<std::size_t>(keys)), undivided(static_cast<std::size_t>(keys));
  for (int j = 0; j < keys; ++j) raw[static_cast<std::size_t>(j)] = t.raw_scores(row, j);
  softmax_row(raw.data(), undivided.data(), raw.size());
  for (int j = 0; j < keys; ++j) {
    CHECK(n.weights_divided[static_cast<std::size_t>(j)] == doctest::Approx(t.weights(row, j)).epsilon(1e-5));
    CHECK(n.weights_undivided[static_cast<std::size_t>(j)] == doctest::Approx(undivided[static_cast<std::size_t>(j)]).epsilon(1e-5));
  }
}

TEST_CASE("Steps under the causal mask: hidden keys have exp 0 and weight 0 in both of step 6's rows") {
  AppState state = make_initial_state();
  AppInputs next = state.inputs;
  next.causal = true;
  next.token = 2;
  REQUIRE(apply_inputs(state, next, 1.0));
  const StepsNumbers& n = state.views.steps;
  for (std::size_t j = 3; j < n.softmax.exps.size(); ++j) {
    CHECK(n.softmax.exps[j] == 0.0);
    CHECK(n.weights_divided[j] == 0.0f);
    CHECK(n.weights_undivided[j] == 0.0f);
  }
  CHECK(n.softmax.exps[0] > 0.0);
  CHECK(n.weights_sum == doctest::Approx(1.0).epsilon(1e-5));
}

TEST_CASE("The views' numbers are recomputed when an input changes") {
  AppState state = make_initial_state();
  const std::vector<float> before = state.views.steps.softmax_scores;
  const double exp_before = state.views.derive.exps(0, 0);

  AppInputs next = state.inputs;
  next.token = 1;  // another query row
  next.derive_q = rows({{2, 0}, {0, 1}, {1, 1}});
  REQUIRE(apply_inputs(state, next, 1.0));
  const AttentionTrace& t = state.model.trace;
  CHECK(state.views.steps.softmax_scores != before);
  for (int j = 0; j < t.masked_scores.cols(); ++j)
    CHECK(state.views.steps.softmax_scores[static_cast<std::size_t>(j)] == t.masked_scores(1, j));
  // token 1's score with key 1 is now 2 / √2: e^1.4142 ≈ 4.1133
  CHECK(exp_before == doctest::Approx(2.0281).epsilon(1e-4));
  CHECK(state.views.derive.exps(0, 0) == doctest::Approx(4.1133).epsilon(1e-4));
  CHECK(state.views.derive.stage_answers[0](0, 0) == doctest::Approx(2.0));

  next.temperature = 0.5f;  // step 6's rows follow the temperature
  REQUIRE(apply_inputs(state, next, 2.0));
  std::vector<float> raw(state.views.steps.weights_undivided.size()), halved(raw.size());
  for (std::size_t j = 0; j < raw.size(); ++j) raw[j] = state.model.trace.raw_scores(1, static_cast<Eigen::Index>(j)) / 0.5f;
  softmax_row(raw.data(), halved.data(), raw.size());
  for (std::size_t j = 0; j < raw.size(); ++j)
    CHECK(state.views.steps.weights_undivided[j] == doctest::Approx(halved[j]).epsilon(1e-5));
}

TEST_CASE("Derive's view_data: the stages' numbers and the typed predictions marked against them") {
  AppState state = make_initial_state();
  AppInputs next = state.inputs;
  next.checks[derive_cell_id(2, 0, 0)] = CheckAnswer{"2.03", "", false, false};  // e^0.707 ≈ 2.03: right
  next.checks[derive_cell_id(3, 0, 0)] = CheckAnswer{"5", "", false, false};     // the sum is 5.06: wrong
  REQUIRE(apply_inputs(state, next, 1.0));
  const DeriveCellMark right = derive_cell_mark(state, 2, 0, 0), wrong = derive_cell_mark(state, 3, 0, 0);
  CHECK(right.answered);
  CHECK(right.right);
  CHECK(wrong.answered);
  CHECK_FALSE(wrong.right);
  CHECK_FALSE(derive_cell_mark(state, 0, 0, 0).answered);

  const nlohmann::json j = derive_view_data(state);
  CHECK(j["exps"][0][0].get<double>() == doctest::Approx(2.0281).epsilon(1e-4));
  CHECK(j["row_sums"][2].get<double>() == doctest::Approx(8.1695).epsilon(1e-4));
  CHECK(j["exp_shift"][0].get<double>() == 0.0);
  CHECK(j["predictions"].size() == 6);
  CHECK(j["predictions"][2]["right"] == 1);
  CHECK(j["predictions"][3]["answered"] == 1);
  CHECK(j["predictions"][3]["right"] == 0);
  CHECK(j["predictions"][3]["total"] == 3);
  CHECK(derive_stage_answers(state).size() == 6);
}

TEST_CASE("Weights: each cell's exp and softmax line make the core's weight; the row sums; the wrong axis by column") {
  AppState state = make_initial_state();
  const AttentionTrace& t = state.model.trace;
  const WeightsNumbers& n = state.views.weights;
  CHECK_FALSE(n.by_column);
  REQUIRE(n.row_sums.size() == static_cast<std::size_t>(t.weights.rows()));
  for (Eigen::Index i = 0; i < t.weights.rows(); ++i) {
    CHECK(n.row_sums[static_cast<std::size_t>(i)] == doctest::Approx(1.0).epsilon(1e-5));
    CHECK(n.line_max[static_cast<std::size_t>(i)] == doctest::Approx(t.masked_scores.row(i).maxCoeff()));
    for (Eigen::Index j = 0; j < t.weights.cols(); ++j) {
      CHECK(n.softmax(i, j) == doctest::Approx(t.weights(i, j)).epsilon(1e-5));
      CHECK(n.exps(i, j) / n.line_sum_of_exps[static_cast<std::size_t>(i)] == doctest::Approx(n.softmax(i, j)));
    }
  }

  AppInputs next = state.inputs;
  next.mistake = Mistake::SoftmaxWrongAxis;  // each column sums to 1, the rows do not
  REQUIRE(apply_inputs(state, next, 1.0));
  const AttentionTrace& w = state.model.trace;
  const WeightsNumbers& m = state.views.weights;
  CHECK(m.by_column);
  REQUIRE(m.line_sum_of_exps.size() == static_cast<std::size_t>(w.weights.cols()));
  bool some_row_off = false;
  for (Eigen::Index i = 0; i < w.weights.rows(); ++i) {
    some_row_off |= std::fabs(m.row_sums[static_cast<std::size_t>(i)] - 1.0f) > 0.005f;
    for (Eigen::Index j = 0; j < w.weights.cols(); ++j) CHECK(m.softmax(i, j) == doctest::Approx(w.weights(i, j)).epsilon(1e-5));
  }
  CHECK(some_row_off);
}

TEST_CASE("Heads: every head's summary is the core's summarize_head, counted by pattern; the chosen head's top keys") {
  const Corpus corpus = make_corpus(1);
  const Transformer model = random_transformer(gpt2_config(2, 2, 16, 32, static_cast<int>(corpus.vocab.size())), 5,
                                               Dtype::F32, WeightLayout::InOut, 0.3);
  AppState state = make_initial_state();
  CHECK(state.views.heads.layers == 1);  // the hand-made model: one head
  CHECK(state.views.heads.heads == 1);
  add_model(state, load_model_files("toy", trained_model_files(model, corpus)));
  apply_state_json(state, {{"model", "toy"}, {"sentence", "the animal didn't cross the street because it was tired"},
                           {"layer", 1}, {"head", 1}, {"token", 7}}, 1.0);
  const HeadsNumbers& n = state.views.heads;
  REQUIRE(n.layers == 2);
  REQUIRE(n.heads == 2);
  REQUIRE(n.summaries.size() == 4);
  int counted = 0;
  for (int c : n.pattern_counts) counted += c;
  CHECK(counted == 4);
  // layer 2, head 2 (the chosen one): its trace's weights and values summarised by the core
  const AttentionTrace& t = state.model.trace;
  const HeadSummary direct = summarize_head(t.weights, true, &t.value);
  const HeadSummary held = n.summaries[3];  // (a copy: the next input replaces the numbers)
  CHECK(held.pattern == direct.pattern);
  CHECK(held.previous == doctest::Approx(direct.previous).epsilon(1e-4));
  CHECK(held.first == doctest::Approx(direct.first).epsilon(1e-4));
  CHECK(held.self == doctest::Approx(direct.self).epsilon(1e-4));
  CHECK(held.sink == direct.sink);
  REQUIRE(n.top_keys.size() == std::min<std::size_t>(5, static_cast<std::size_t>(t.weights.cols())));
  for (std::size_t k = 1; k < n.top_keys.size(); ++k)
    CHECK(t.weights(7, n.top_keys[k - 1]) >= t.weights(7, n.top_keys[k]));
  for (Eigen::Index j = 0; j < t.weights.cols(); ++j)  // nothing left out beats the last one shown
    if (std::find(n.top_keys.begin(), n.top_keys.end(), static_cast<int>(j)) == n.top_keys.end())
      CHECK(t.weights(7, j) <= t.weights(7, n.top_keys.back()));

  apply_state_json(state, {{"token", 3}}, 2.0);  // another row: other top keys, the same summaries
  CHECK(state.views.heads.top_keys.front() == [&] {
    int best = 0;
    for (Eigen::Index j = 1; j < state.model.trace.weights.cols(); ++j)
      if (state.model.trace.weights(3, j) > state.model.trace.weights(3, best)) best = static_cast<int>(j);
    return best;
  }());
  CHECK(state.views.heads.summaries[3].pattern == held.pattern);
}

TEST_CASE("Library: the reader's row, the best-matching book, the contents' lengths, and best-only reading") {
  AppState state = make_initial_state();
  const AttentionTrace& t = state.model.trace;
  const LibraryReading& r = state.views.library;
  const int row = state.inputs.token;
  CHECK(r.reader == row);
  int best = 0;  // no mask: the largest score of the row
  for (Eigen::Index j = 1; j < t.masked_scores.cols(); ++j)
    if (t.masked_scores(row, j) > t.masked_scores(row, best)) best = static_cast<int>(j);
  CHECK(r.best == best);
  REQUIRE(r.value_lengths.size() == static_cast<std::size_t>(t.value.rows()));
  for (Eigen::Index j = 0; j < t.value.rows(); ++j) {
    CHECK(r.value_lengths[static_cast<std::size_t>(j)] == doctest::Approx(t.value.row(j).norm()));
    CHECK(r.read[static_cast<std::size_t>(j)] == t.weights(row, j));
  }
  for (Eigen::Index c = 0; c < t.output.cols(); ++c) CHECK(r.blend[static_cast<std::size_t>(c)] == t.output(row, c));

  AppInputs next = state.inputs;
  next.library_best_only = true;  // a real library: only the best book, whole
  REQUIRE(apply_inputs(state, next, 1.0));
  const LibraryReading& only = state.views.library;
  float read = 0;
  for (float w : only.read) read += w;
  CHECK(read == 1.0f);
  CHECK(only.read[static_cast<std::size_t>(only.best)] == 1.0f);
  for (Eigen::Index c = 0; c < t.value.cols(); ++c)
    CHECK(only.best_book[static_cast<std::size_t>(c)] == state.model.trace.value(only.best, c));
}
