// Every view's getState().view_data (src/state/view_data.h), natively and under node, no ImGui
// linked: the numbers each view reports against a computation by hand from the trace (weights rows
// sum to 1, the output is Σ weight·value, the best book is the argmax of its title's match, ...),
// and the texts they share (view_text.h). Each test can fail: it recomputes, it does not restate.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "../../src/api/trained_model_bytes.h"
#include "../../src/core/corpus.h"
#include "../../src/state/app_state.h"
#include "../../src/state/checks.h"
#include "../../src/state/compare_view.h"
#include "../../src/state/flow_view.h"
#include "../../src/state/heads_view.h"
#include "../../src/state/library_view.h"
#include "../../src/state/mistakes_view.h"
#include "../../src/state/practice_view.h"
#include "../../src/state/steps_view.h"
#include "../../src/state/view_data.h"
#include "../../src/state/view_text.h"
#include "../../src/state/weights_view.h"
#include "state_helpers.h"

using namespace attn;
using attn::test::with_toy_model;
using nlohmann::json;

namespace {

// The initial state (the lesson's sentence, "it" selected) with `change` applied to its inputs.
template <typename Change>
AppState with(Change change) {
  AppState s = make_initial_state();
  AppInputs next = s.inputs;
  change(next);
  REQUIRE(apply_inputs(s, next, 0.0));
  return s;
}
AppState lesson() {
  return with([](AppInputs&) {});
}

// The visible key with the largest weight in `row` (the first of a tie).
int argmax_visible(const AttentionTrace& t, int row) {
  int best = -1;
  for (int j = 0; j < static_cast<int>(t.weights.cols()); ++j)
    if (!key_hidden_by_mask(t, row, j) && (best < 0 || t.weights(row, j) > t.weights(row, best))) best = j;
  return best;
}

}  // namespace

// [SECTION] The texts the views share

TEST_CASE("view_text: numbers, shares and the head's scaling as the views write them") {
  CHECK(number_text(0.6549f, 2) == "0.65");
  CHECK(number_text(-0.001f, 2) == "0.00");  // no "-0.00"
  CHECK(number_text(-std::numeric_limits<float>::infinity(), 2) == "−∞");
  CHECK(number_text(std::nanf(""), 2) == "—");
  CHECK(in_quotes("it") == "'it'");
  CHECK(percent(0.436f) == "44%");
  CHECK(percent(0.004f) == "<1%");  // not 0, though it rounds to 0
  CHECK(percent(0.0f) == "0%");

  const Matrix q = Matrix::Ones(3, 4), k = Matrix::Ones(3, 4), v = Matrix::Ones(3, 4);
  AttentionOptions scaled;
  CHECK(trace_scaling(attend(q, k, v, scaled), 1.0f) == Scaling::SqrtD);
  AttentionOptions unscaled;
  unscaled.scale = false;
  CHECK(trace_scaling(attend(q, k, v, unscaled), 1.0f) == Scaling::None);
  AttentionOptions own;
  own.score_scale = 0.0625f;  // Gemma's query_pre_attn_scalar^−½, not 1/√4
  CHECK(trace_scaling(attend(q, k, v, own), 1.0f) == Scaling::ModelFactor);
  // The lesson's toy: "q·k_j / √d" and no cap.
  const AppState s = lesson();
  CHECK(score_formula(s, false) == "q·k_j / √d");
  CHECK(score_softcap(s) == 0.0f);
}

// [SECTION] One test per view's data

TEST_CASE("flow: the strongest keys are the selected row's largest weights, each box's colour range its largest |value|") {
  const AppState s = lesson();
  const AttentionTrace& t = s.model.trace;
  const int row = s.inputs.token;
  const json j = flow_view_data(s);
  REQUIRE(!j["strongest"].empty());
  CHECK(j["strongest"][0]["key"] == argmax_visible(t, row));
  CHECK(j["strongest"][0]["token"] == s.model.keys.tokens[static_cast<std::size_t>(argmax_visible(t, row))].text);
  float previous = 2.0f;
  for (const json& k : j["strongest"]) {  // best first, each the trace's own weight
    const float w = k["weight"];
    CHECK(w == doctest::Approx(t.weights(row, k["key"].get<int>())));
    CHECK(w <= previous);
    previous = w;
  }
  float largest_q = 0;
  for (Eigen::Index i = 0; i < t.query.size(); ++i) largest_q = std::max(largest_q, std::fabs(t.query.data()[i]));
  bool saw_q = false, saw_weights = false;
  for (const json& box : j["scales"]) {
    if (box["box"] == "Q") {
      saw_q = true;
      CHECK(box["high"].get<float>() == doctest::Approx(largest_q));
      CHECK(box["low"].get<float>() == doctest::Approx(-largest_q));
    }
    if (box["box"] == "weights") {
      saw_weights = true;
      CHECK(box["low"].get<float>() == 0.0f);
      CHECK(box["high"].get<float>() == 1.0f);
      CHECK(box["formula"] == "rows sum to 1");
    }
  }
  CHECK(saw_q);
  CHECK(saw_weights);
  CHECK(j["around"].is_null());  // the hand-made model has no heads around it
  // Softmax down the columns: the weights box says its rows no longer sum to 1.
  const AppState wrong = with([](AppInputs& in) { in.mistake = Mistake::SoftmaxWrongAxis; });
  CHECK(flow_boxes(wrong).weights.formula == "rows do NOT sum to 1");
  CHECK(token_name({"the", "cat", "the"}, 2) == "the (3)");
  CHECK(token_name({"the", "cat", "the"}, 1) == "cat");
}

TEST_CASE("weights: every row sums to 1, and the value-weighted reading is each weight × ‖v_j‖ by hand") {
  const AppState s = with([](AppInputs& in) {  // (computed while the Weights view is open)
    in.view = View::Weights;
    in.weights_show = WeightsShow::ValueWeighted;
  });
  const AttentionTrace& t = s.model.trace;
  for (const float sum : s.views.weights.row_sums) CHECK(sum == doctest::Approx(1.0f).epsilon(1e-5));
  const json j = weights_view_data(s);
  REQUIRE(j["reading"].is_object());
  CHECK(j["reading"]["kind"] == "value_weighted");
  const json& values = j["reading"]["values"];
  REQUIRE(values.size() == static_cast<std::size_t>(t.weights.rows()));
  for (int i = 0; i < static_cast<int>(t.weights.rows()); ++i)
    for (int k = 0; k < static_cast<int>(t.weights.cols()); ++k) {
      double norm = 0;  // ‖v_k‖ by hand
      for (Eigen::Index c = 0; c < t.value.cols(); ++c) norm += static_cast<double>(t.value(k, c)) * t.value(k, c);
      CHECK(values[i][k].get<double>() == doctest::Approx(t.weights(i, k) * std::sqrt(norm)).epsilon(1e-5));
    }
  CHECK(j["reading"]["text"].get<std::string>().find("Value-weighted") == 0);
  CHECK(j["both_ways"].is_null());  // the toy is no encoder
  CHECK(weights_view_data(lesson())["reading"].is_null());  // the weights themselves: no reading
}

TEST_CASE("heads: one summary per layer × head with its label, the top weights are the selected row's largest") {
  const AppState s = with_toy_model();
  const json j = heads_view_data(s);
  CHECK(j["model"] == "toy");
  REQUIRE(j["layers"] == 2);
  REQUIRE(j["heads"] == 2);
  REQUIRE(j["summaries"].size() == 2);
  const std::vector<HeadSummary>& sums = s.views.heads.summaries;
  for (int l = 0; l < 2; ++l)
    for (int h = 0; h < 2; ++h) {
      const HeadSummary& sum = sums[static_cast<std::size_t>(l * 2 + h)];
      CHECK(j["summaries"][l][h]["label"] == summary_label(s, sum));
      CHECK(j["summaries"][l][h]["pattern"] == head_pattern_name(sum.pattern));
      CHECK(j["summaries"][l][h]["previous"].get<float>() == doctest::Approx(sum.previous));
    }
  const AttentionTrace& t = s.model.trace;
  const int row = s.inputs.token;
  REQUIRE(!j["top_weights"].empty());
  CHECK(j["top_weights"][0]["key"] == argmax_visible(t, row));
  for (std::size_t i = 1; i < j["top_weights"].size(); ++i)
    CHECK(j["top_weights"][i]["weight"].get<float>() <= j["top_weights"][i - 1]["weight"].get<float>());
  // the model's next-token guesses: probabilities, best first, at most 1 together
  double total = 0;
  for (std::size_t i = 0; i < j["next"].size(); ++i) {
    total += j["next"][i]["p"].get<double>();
    if (i) CHECK(j["next"][i]["p"].get<double>() <= j["next"][i - 1]["p"].get<double>());
  }
  CHECK(!j["next"].empty());
  CHECK(total <= 1.0 + 1e-6);
  // what the family adds: GPT-2 learned its positions, every head has its own keys and values
  const json& f = j["family"];
  CHECK(f["loaded"] == true);
  CHECK(f["positions"]["kind"] == "learned");
  CHECK(f["groups"]["n_kv_head"] == 2);
  CHECK(f["groups"]["list"].size() == 2);
}

TEST_CASE("library: the best book is the argmax of its title's match, the take-home is Σ weight · value by hand") {
  const AppState s = lesson();
  const AttentionTrace& t = s.model.trace;
  const int row = s.inputs.token;
  const json j = library_view_data(s);
  int best = -1;  // the title that matches the question best: the largest score among visible keys
  for (int k = 0; k < static_cast<int>(t.scaled_scores.cols()); ++k)
    if (!key_hidden_by_mask(t, row, k) && (best < 0 || t.scaled_scores(row, k) > t.scaled_scores(row, best))) best = k;
  CHECK(j["reader"] == row);
  CHECK(j["best"] == best);
  CHECK(j["best_title"] == s.model.keys.tokens[static_cast<std::size_t>(best)].text);
  CHECK(j["mode"] == "attention");
  for (Eigen::Index c = 0; c < t.value.cols(); ++c) {
    double blend = 0;
    for (Eigen::Index k = 0; k < t.value.rows(); ++k) blend += static_cast<double>(t.weights(row, k)) * t.value(k, c);
    CHECK(j["attention_take_home"][c].get<double>() == doctest::Approx(blend).epsilon(1e-5));
    CHECK(j["library_take_home"][c].get<double>() == doctest::Approx(t.value(best, c)));
  }
  CHECK(j["summary"].get<std::string>().find(in_quotes(s.model.keys.tokens[static_cast<std::size_t>(argmax_visible(t, row))].text)) !=
        std::string::npos);
  // A real library reads the best book only: one 1 on it, 0 elsewhere.
  const json only = library_view_data(with([](AppInputs& in) { in.library_best_only = true; }));
  CHECK(only["mode"] == "best_only");
  CHECK(only["summary"].is_null());
  for (std::size_t k = 0; k < only["read"].size(); ++k)
    CHECK(only["read"][k].get<float>() == (static_cast<int>(k) == best ? 1.0f : 0.0f));
  CHECK(named_vector({"a", "b"}, attn::Matrix::Constant(1, 2, 0.5f), 0) == "a 0.50  ·  b 0.50");
}

TEST_CASE("steps: the softmax step's weights are exp ÷ the sum of exps, the output Σ weight · value, the mask hides later keys") {
  const AppState s = with([](AppInputs& in) { in.causal = true; });
  const AttentionTrace& t = s.model.trace;
  const int row = s.inputs.token;
  const json softmax = step_view_data(s, 2);
  CHECK(softmax["title"] == kSteps[2].title);
  double sum = 0;
  for (const json& e : softmax["exps"]) sum += e.get<double>();
  CHECK(softmax["sum_of_exps"].get<double>() == doctest::Approx(sum));
  double weights_sum = 0;
  for (std::size_t k = 0; k < softmax["weights"].size(); ++k) {
    const double w = softmax["weights"][k].get<double>();
    CHECK(w == doctest::Approx(softmax["exps"][k].get<double>() / sum).epsilon(1e-5));
    weights_sum += w;
  }
  CHECK(weights_sum == doctest::Approx(1.0).epsilon(1e-5));

  const json weighted = step_view_data(s, 3);
  for (Eigen::Index c = 0; c < t.value.cols(); ++c) {
    double out = 0;
    for (Eigen::Index k = 0; k < t.value.rows(); ++k) out += static_cast<double>(t.weights(row, k)) * t.value(k, c);
    CHECK(weighted["output"][c].get<double>() == doctest::Approx(out).epsilon(1e-5));
  }
  for (std::size_t i = 1; i < weighted["contributors"].size(); ++i)
    CHECK(weighted["contributors"][i]["weight"].get<float>() <= weighted["contributors"][i - 1]["weight"].get<float>());

  const json mask = step_view_data(s, 6);
  std::vector<int> later;
  for (int k = row + 1; k < static_cast<int>(t.weights.cols()); ++k) later.push_back(k);
  CHECK(mask["masked_keys"].get<std::vector<int>>() == later);
  CHECK(mask["seen"] == "'it' is token 8: it may look at keys 1 to 8; the " + std::to_string(later.size()) +
                            " after it are hidden.");
  CHECK(step_view_data(s, 99)["step"] == kStepCount - 1);  // clamped
  CHECK(steps_view_data(s)["step"] == s.inputs.step);
  CHECK(compact(0.5f) == "0.5");
  CHECK(compact(-0.001f) == "0");
  CHECK(vector_text(std::vector<float>(9, 1.0f).data(), 9) == "[1, 1, 1, 1, 1, 1, … 3 more]");
}

TEST_CASE("break: the histogram of each row's largest weight counts every row once, in bins of 0.05") {
  CHECK(row_max_histogram({0.0f, 0.049f, 0.05f, 0.5f, 0.99f, 1.0f}) ==
        std::vector<int>{2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2});
  const AppState s = lesson();
  const json j = break_view_data(s);
  CHECK(j["bins"] == kHistogramBins);
  for (const char* side : {"histogram_scaled", "histogram_unscaled"}) {
    int rows = 0;
    for (const json& c : j[side]) rows += c.get<int>();
    CHECK(rows == s.model.saturation.T);
  }
  CHECK(j["max_entropy"].get<double>() == doctest::Approx(std::log(static_cast<double>(s.model.saturation.T))));
  // without √d most rows are almost one-hot: the last bin holds more rows than with it
  CHECK(j["histogram_unscaled"][kHistogramBins - 1].get<int>() > j["histogram_scaled"][kHistogramBins - 1].get<int>());
}

TEST_CASE("mistakes: the wrong axis makes columns sum to 1, masking after the softmax leaks and renormalises back") {
  const AppState axis = with([](AppInputs& in) { in.mistake = Mistake::SoftmaxWrongAxis; });
  const json a = mistakes_view_data(axis);
  CHECK(a["mistake"] == mistake_name(Mistake::SoftmaxWrongAxis));
  for (const json& c : a["col_sums"]) CHECK(c.get<float>() == doctest::Approx(1.0f).epsilon(1e-5));
  for (const json& r : a["correct_row_sums"]) CHECK(r.get<float>() == doctest::Approx(1.0f).epsilon(1e-5));
  bool some_row_off = false;
  for (const json& r : a["row_sums"]) some_row_off |= std::fabs(r.get<float>() - 1.0f) > 0.01f;
  CHECK(some_row_off);

  const AppState after = with([](AppInputs& in) {
    in.mistake = Mistake::MaskAfterSoftmax;
    in.causal = true;
  });
  const json m = mistakes_view_data(after);
  CHECK(m["needs_causal"] == true);
  const std::vector<float> sums = m["row_sums"];
  CHECK(sums.front() < 0.99f);  // the first token lost the share its later keys took
  CHECK(sums.back() == doctest::Approx(1.0f).epsilon(1e-5));  // the last one hides nothing
  CHECK(m["renormalised_error"].get<float>() < 1e-5f);
  CHECK(row_sums(attn::Matrix::Constant(2, 3, 0.5f)) == std::vector<float>{1.5f, 1.5f});
  CHECK(col_sums(attn::Matrix::Constant(2, 3, 0.5f)) == std::vector<float>{1.0f, 1.0f, 1.0f});
  CHECK(needs_causal(Mistake::MaskWithZero));
  CHECK_FALSE(needs_causal(Mistake::ForgetScale));
}

TEST_CASE("build: the programs, both hints and the CPU backends' agreement within the tolerance") {
  AppState s = with([](AppInputs& in) { in.view = View::Build; });
  update_build_state(s, -std::numeric_limits<double>::infinity());
  const json j = build_view_data(s);
  CHECK(j["numpy"].get<std::string>().find("import numpy") != std::string::npos);
  CHECK(j["torch"].get<std::string>().find("import torch") != std::string::npos);
  CHECK(j["numpy_hint"].get<std::string>().find("NumPy") != std::string::npos);
  CHECK(j["torch_hint"].get<std::string>().find("PyTorch") != std::string::npos);
  CHECK(j["tolerance"] == kBuildRelativeTolerance);
  int cpu = 0;
  for (const json& a : j["agreement"]) {
    if (!a["available"].get<bool>()) continue;
    ++cpu;
    CHECK(a["relative"].get<double>() <= a["tolerance"].get<double>());
  }
  CHECK(cpu >= 2);  // scalar and Eigen at least
}

TEST_CASE("cost: each measured point's bytes are 4·T² + 16·T·d, the whole matrix's numbers as computed") {
  AppState s = lesson();
  s.cost.run.points.push_back({32, 0.5, "simd"});
  s.cost.matrix.T = 32;
  s.cost.matrix.max_row_sum_error = 2e-7f;
  const json j = cost_view_data(s);
  CHECK(j["d"] == kCostWidth);
  REQUIRE(j["points"].size() == 1);
  CHECK(j["points"][0]["bytes"].get<double>() == 4.0 * 32 * 32 + 16.0 * 32 * 64);  // 4096 + 32768
  CHECK(j["points"][0]["bytes_fused"].get<double>() == 16.0 * 32 * 64);
  CHECK(j["done"] == false);
  CHECK(j["matrix"]["T"] == 32);
  CHECK(j["matrix"]["max_row_sum_error"].get<float>() == doctest::Approx(2e-7f));
}

TEST_CASE("practice: the Explain answer names the best-read book; a checklist line is ticked only once its check is passed") {
  AppState s = lesson();
  const json j = practice_view_data(s);
  REQUIRE(j["exercises"].size() == 4);
  const AttentionTrace& t = s.model.trace;
  const int best = argmax_visible(t, s.inputs.token);
  const std::string explain = j["exercises"][0]["answer"];
  CHECK(explain.find("the best-fitting title is the key of " + in_quotes(key_labels(s)[static_cast<std::size_t>(best)])) !=
        std::string::npos);
  CHECK(explain.find("it reads " + percent(t.weights(s.inputs.token, best))) != std::string::npos);
  CHECK(j["exercises"][1]["answer"].get<std::string>().find("Q·Kᵀ = [1, 0, 1], [0, 1, 1], [1, 1, 2]") != std::string::npos);
  REQUIRE(j["checklist"].size() == static_cast<std::size_t>(kChecklistSize));

  // Line 1 is proven by the Steps check, line 5 on the learner's word.
  AppInputs next = s.inputs;
  next.checklist = 1u | (1u << 4);
  REQUIRE(apply_inputs(s, next, 0.0));
  json p = practice_view_data(s);
  CHECK(p["checklist"][0]["check"] == "steps");
  CHECK(p["checklist"][0]["checked"] == false);  // ticked, but its check is not passed yet
  CHECK(p["checklist"][4]["self_checked"] == true);
  CHECK(p["checklist"][4]["checked"] == true);
  // Answer the Steps check: a wrong answer leaves the line locked, the right one unlocks it.
  CheckQuestion q;
  REQUIRE(view_check(s, View::Steps, &q));
  const std::string right = q.choices.empty() ? std::to_string(q.number) : q.right.front();
  const std::string wrong = q.choices.empty() ? std::to_string(q.number + 1000) : [&] {
    for (const std::string& c : q.choices)
      if (std::find(q.right.begin(), q.right.end(), c) == q.right.end()) return c;
    return std::string("none");
  }();
  next = s.inputs;
  next.checks["steps"] = graded_answer(s, q, wrong);
  REQUIRE(apply_inputs(s, next, 0.0));
  CHECK(practice_view_data(s)["checklist"][0]["checked"] == false);
  next = s.inputs;
  next.checks["steps"] = graded_answer(s, q, right);
  REQUIRE(apply_inputs(s, next, 0.0));
  p = practice_view_data(s);
  CHECK(p["checklist"][0]["unlocked"] == true);
  CHECK(p["checklist"][0]["checked"] == true);
}

TEST_CASE("train: the view's data is the session's, before any training") {
  const AppState s = lesson();
  const json j = train_view_data(s);
  CHECK(j == train_state_json(*s.train, s.inputs.train));
  CHECK(j.contains("running"));
  CHECK(j["running"] == false);
}

TEST_CASE("compare: each side's best is its row's argmax, the difference B − A per key by hand, the toy's top stays") {
  // "... because it was tired" against "... because it was wide" (the second runs while the view is open)
  const AppState s = with([](AppInputs& in) { in.view = View::Compare; });
  const json j = compare_view_data(s);
  CHECK(j["mode"] == "sentences");
  CHECK(j["a"]["query_text"] == "it");
  CHECK(j["a"]["best"] == argmax_visible(s.model.trace, s.inputs.token));
  const json& a = j["a"]["weights"];
  const json& b = j["b"]["weights"];
  REQUIRE(a.size() == b.size());  // the twins have as many tokens
  float largest = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    const float d = b[k].get<float>() - a[k].get<float>();
    CHECK(j["difference"][k].get<float>() == doctest::Approx(d));
    if (std::fabs(d) >= 0.005f) largest = std::max(largest, std::fabs(d));
  }
  if (largest > 0) CHECK(std::fabs(j["largest_change"]["change"].get<float>()) == doctest::Approx(largest));
  CHECK(j["difference_keys"].back() == std::string(j["a"]["keys"].back()) + "/" + std::string(j["b"]["keys"].back()));
  // The toy's pronoun seeks a creature in both: the top weight stays, and the verdict and the check say so.
  CHECK(j["top_moved"] == false);
  CHECK(j["verdict"].get<std::string>().find("The top weight stays on the same word") != std::string::npos);
  CheckQuestion q;
  REQUIRE(view_check(s, View::Compare, &q));
  CHECK(q.right == std::vector<std::string>{"Yes, the same word"});
  // Two queries of one sentence: "it" and "animal".
  const Comparison c = compare(with([](AppInputs& in) {
    in.view = View::Compare;
    in.compare_tokens = true;
  }));
  CHECK(c.tokens);
  CHECK(c.b.query_text == "animal");
  CHECK(c.difference.size() == c.a.keys.size());
}

TEST_CASE("the table of views: every picture named, kViewCount is the table's length") {
  static_assert(kViewCount == sizeof kViews / sizeof kViews[0], "kViewCount follows the table");
  for (int i = 0; i < kViewCount; ++i) {
    const std::string picture = view_row(static_cast<View>(i)).picture;
    CHECK_MESSAGE(picture.rfind(std::string(view_name(static_cast<View>(i))) + ":", 0) == 0, picture);
  }
  CHECK(std::string(view_row(View::Flow).picture) == "flow:X");
  CHECK(std::string(view_row(View::Weights).picture) == "weights:matrix");
}
