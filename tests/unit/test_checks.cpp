// The check questions without a window: each view's question asked from the state, its right answer
// marked right and a wrong one wrong; the stored mark, the progress, and the table of views.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "../../src/api/trained_model_bytes.h"
#include "../../src/core/corpus.h"
#include "../../src/state/app_state.h"
#include "../../src/state/checks.h"
#include "state_helpers.h"

using namespace attn;
using attn::test::with_toy_model;

namespace {

CheckQuestion asked(const AppState& s, View v) {
  CheckQuestion q;
  REQUIRE(view_check(s, v, &q));
  CHECK(q.id == view_name(v));
  CHECK_FALSE(q.prompt.empty());
  CHECK_FALSE(q.why.empty());
  return q;
}

// A choice question: every right choice is marked right, every other choice wrong (and there is one).
void right_and_wrong_choices(const CheckQuestion& q) {
  REQUIRE_FALSE(q.choices.empty());
  REQUIRE_FALSE(q.right.empty());
  int wrong = 0;
  for (const std::string& c : q.choices) {
    const bool listed = std::find(q.right.begin(), q.right.end(), c) != q.right.end();
    CHECK_MESSAGE(check_is_right(q, c) == listed, c);
    wrong += !listed;
  }
  CHECK(wrong > 0);
  CHECK_FALSE(check_is_right(q, "not one of the choices"));
}

std::string two_decimals(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

AppState opened(View v) {
  AppState s = make_initial_state();
  AppInputs next = s.inputs;
  next.view = v;
  REQUIRE(apply_inputs(s, next, 0.0));
  return s;
}

}  // namespace

// [SECTION] One test per question

TEST_CASE("flow's question (the toy): the lesson's 10 tokens hold 10 × 10 = 100 scores") {
  const AppState s = opened(View::Flow);
  REQUIRE(s.model.queries.tokens.size() == 10);  // The animal didn't cross the street because it was tired
  const CheckQuestion q = asked(s, View::Flow);
  CHECK(q.prompt == "This sentence has 10 tokens. How many scores does Q·Kᵀ hold?");
  CHECK(q.choices.empty());
  CHECK(check_is_right(q, "100"));
  CHECK_FALSE(check_is_right(q, "20"));
  CHECK_FALSE(check_is_right(q, "100.004"));  // a whole number is marked exactly
  CHECK_FALSE(check_is_right(q, "eleven squared"));
}

TEST_CASE("flow's question (a loaded model): the head that brings the largest share at the selected token") {
  AppState s = with_toy_model();
  REQUIRE(s.model.around.loaded);
  const CheckQuestion q = asked(s, View::Flow);
  CHECK(q.prompt.find("which head of layer 1") != std::string::npos);
  REQUIRE(q.choices == std::vector<std::string>{"head 1", "head 2"});
  const std::vector<float>& v = s.model.around.shares_add_up ? s.model.around.head_shares : s.model.around.head_parts;
  const std::string top = v[0] >= v[1] ? "head 1" : "head 2";
  CHECK(check_is_right(q, top));
  if (v[0] != v[1]) CHECK_FALSE(check_is_right(q, top == "head 1" ? "head 2" : "head 1"));
}

TEST_CASE("weights' question: 'it' gives its most weight to the word of the largest weight in its row") {
  const AppState s = opened(View::Weights);
  const CheckQuestion q = asked(s, View::Weights);
  CHECK(q.prompt == "Which word does 'it' give the most weight to?");
  CHECK(q.choices.size() == 4);  // the three largest and the smallest
  const Matrix& w = s.model.trace.weights;
  Eigen::Index best = 0;
  w.row(s.inputs.token).maxCoeff(&best);
  CHECK(std::find(q.right.begin(), q.right.end(), s.model.keys.tokens[best].text) != q.right.end());
  right_and_wrong_choices(q);
}

TEST_CASE("library's question: the key is the title on the spine") {
  const AppState s = opened(View::Library);
  const CheckQuestion q = asked(s, View::Library);
  CHECK(check_is_right(q, "The title on the spine"));
  CHECK_FALSE(check_is_right(q, "The reader's question"));
  CHECK_FALSE(check_is_right(q, "What is written inside"));
}

TEST_CASE("steps' question: the raw score of 'it' with its most-weighted key, divided by √d") {
  const AppState s = opened(View::Steps);
  const CheckQuestion q = asked(s, View::Steps);
  const AttentionTrace& t = s.model.trace;
  Eigen::Index best = 0;
  t.weights.row(s.inputs.token).maxCoeff(&best);
  const double raw = std::round(static_cast<double>(t.raw_scores(s.inputs.token, best)) * 1000.0) / 1000.0;
  const double answer = raw / std::sqrt(static_cast<double>(t.key.cols()));
  CHECK(q.prompt.find("What is that score divided by √d? (2 decimals)") != std::string::npos);
  CHECK_FALSE(q.whole);
  CHECK(q.number == doctest::Approx(answer).epsilon(1e-12));
  CHECK(check_is_right(q, two_decimals(answer)));
  CHECK_FALSE(check_is_right(q, two_decimals(answer + 0.05)));
  CHECK_FALSE(check_is_right(q, two_decimals(raw * 2 + 1)));  // not divided: far off
}

TEST_CASE("break's question: the side with more one-hot rows, from the experiment's fractions") {
  AppState s = opened(View::Break);
  const CheckQuestion q = asked(s, View::Break);
  CHECK(q.prompt == "At d = 512 and T = 64: which side has more rows that put over 0.99 of their weight on a single key?");
  const BreakResult& b = s.model.saturation;
  const long off = std::lround(b.unscaled.frac_one_hot * b.T), on = std::lround(b.scaled.frac_one_hot * b.T);
  REQUIRE(off > on);  // the lesson: without √d at d = 512 most rows go one-hot
  CHECK(check_is_right(q, "Without √d"));
  CHECK_FALSE(check_is_right(q, "With √d"));
  CHECK_FALSE(check_is_right(q, "Both have as many"));
}

TEST_CASE("mistakes' question: the causal mask belongs before the softmax") {
  const CheckQuestion q = asked(opened(View::Mistakes), View::Mistakes);
  CHECK(check_is_right(q, "Before the softmax: future scores to −∞"));
  CHECK_FALSE(check_is_right(q, "After the softmax: future weights to 0"));
  CHECK_FALSE(check_is_right(q, "Either: the weights come out the same"));
}

TEST_CASE("build's question: a causal mask over 10 tokens zeroes 10 × 9 / 2 = 45 weights") {
  const CheckQuestion q = asked(opened(View::Build), View::Build);
  CHECK(q.whole);
  CHECK(check_is_right(q, "45"));
  CHECK_FALSE(check_is_right(q, "90"));  // forgot the half
  CHECK_FALSE(check_is_right(q, "55"));  // counted the diagonal
}

TEST_CASE("cost's question: one head at T = 2048 computes 2048² = 4 194 304 scores") {
  AppState s = opened(View::Cost);
  CHECK(s.inputs.cost_T == 2048);
  const CheckQuestion q = asked(s, View::Cost);
  CHECK(q.prompt == "One head at T = 2048 tokens: how many scores does it compute?");
  CHECK(check_is_right(q, "4194304"));
  CHECK_FALSE(check_is_right(q, "4096"));     // 2 × T
  CHECK_FALSE(check_is_right(q, "4194305"));  // marked exactly
}

TEST_CASE("compare's question: the toy's 'it' looks at the same word whether the street is tired or wide") {
  const AppState s = opened(View::Compare);
  REQUIRE_FALSE(s.model.compare_queries.tokens.empty());
  const CheckQuestion q = asked(s, View::Compare);
  CHECK(q.prompt == "Does 'it' give its most weight to the same word in both sentences?");
  CHECK(check_is_right(q, "Yes, the same word"));
  CHECK_FALSE(check_is_right(q, "No, another word"));
  CHECK_FALSE(check_is_right(q, "A tie on one side"));
}

TEST_CASE("compare's question on two tokens: 'it' and 'animal' of one sentence, by their rows' largest weights") {
  AppState s = make_initial_state();
  AppInputs next = s.inputs;
  next.view = View::Compare;
  next.compare_tokens = true;
  next.compare_token = 1;
  REQUIRE(apply_inputs(s, next, 0.0));
  const CheckQuestion q = asked(s, View::Compare);
  CHECK(q.prompt == "Do 'it' and 'animal' give their most weight to the same word?");
  const Matrix& w = s.model.trace.weights;
  Eigen::Index a = 0, b = 0;
  w.row(7).maxCoeff(&a);
  w.row(1).maxCoeff(&b);
  const bool tie = (w.row(7).array() == w(7, a)).count() > 1 || (w.row(1).array() == w(1, b)).count() > 1;
  CHECK(check_is_right(q, tie ? "A tie on one side" : a == b ? "Yes, the same word" : "No, another word"));
  right_and_wrong_choices(q);
}

TEST_CASE("views without a question ask none") {
  const AppState s = make_initial_state();
  CheckQuestion q;
  for (View v : {View::Heads, View::Derive, View::Practice, View::Train}) CHECK_FALSE(view_check(s, v, &q));
}

// [SECTION] The stored mark and the progress

TEST_CASE("an answer is stored with its question and mark; passed stays once right; a new question asks anew") {
  AppState s = opened(View::Cost);
  const CheckQuestion q = asked(s, View::Cost);
  AppInputs next = s.inputs;
  next.checks["cost"] = graded_answer(s, q, "4194304");
  CHECK(next.checks["cost"].right);
  CHECK(next.checks["cost"].passed);
  REQUIRE(apply_inputs(s, next, 0.0));
  CHECK(current_answer(s, q) != nullptr);
  const CheckAnswer wrong = graded_answer(s, q, "12");
  CHECK_FALSE(wrong.right);
  CHECK(wrong.passed);  // passed before
  nlohmann::json j = view_check_json(s);
  CHECK(j["id"] == "cost");
  CHECK(j["kind"] == "number");
  CHECK(j["answered"] == true);
  CHECK(j["correct"] == true);
  CHECK(j["passed"] == true);
  CHECK(j["why"] == q.why);
  CHECK(check_passed(s, View::Cost));
  next.cost_T = 1024;  // another question: not answered, still passed
  REQUIRE(apply_inputs(s, next, 0.0));
  j = view_check_json(s);
  CHECK(j["answered"] == false);
  CHECK(j["answer"].is_null());
  CHECK(j["passed"] == true);
  CHECK(progress_json(s)["cost"] == nlohmann::json{{"correct", 1}, {"answered", 1}, {"total", 1}, {"passed", true}});
  CHECK(progress_json(s)["flow"]["answered"] == 0);
}

TEST_CASE("Derive's grids: marked against the lesson's numbers; its check is passed with every weight right") {
  AppState s = opened(View::Derive);
  const std::vector<Eigen::MatrixXd> answers = derive_stage_answers(s);
  REQUIRE(answers.size() == kDeriveCheckStageCount);
  // The lesson's example (d = 2): q1 = k1 = [1, 0], q3 = k3 = [1, 1]: raw score 1, scaled 1/√2, e^0.707 ≈ 2.03.
  CHECK(answers[0](0, 0) == doctest::Approx(1.0));
  CHECK(answers[0](2, 2) == doctest::Approx(2.0));
  CHECK(answers[1](0, 0) == doctest::Approx(0.70711).epsilon(1e-4));
  CHECK(answers[2](0, 0) == doctest::Approx(2.0281).epsilon(1e-4));
  CHECK(answers[3](0) == doctest::Approx(answers[2].row(0).sum()));
  CHECK(answers[4].row(0).sum() == doctest::Approx(1.0).epsilon(1e-6));
  CHECK_FALSE(check_passed(s, View::Derive));
  CHECK(progress_json(s)["derive"]["total"] == 9 + 9 + 9 + 3 + 9 + 6);
  AppInputs next = s.inputs;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) next.checks[derive_cell_id(4, i, j)] = CheckAnswer{two_decimals(answers[4](i, j)), "", false, false};
  next.checks[derive_cell_id(0, 0, 0)] = CheckAnswer{"3", "", false, false};  // wrong
  REQUIRE(apply_inputs(s, next, 0.0));
  CHECK(check_passed(s, View::Derive));
  const nlohmann::json p = progress_json(s)["derive"];
  CHECK(p["answered"] == 10);
  CHECK(p["correct"] == 9);
  CHECK(p["stages"]["weights"]["correct"] == 9);
  CHECK(p["stages"]["scores"] == nlohmann::json{{"correct", 0}, {"answered", 1}, {"total", 9}});
}

// [SECTION] The table of views

TEST_CASE("the table of views: names and titles round-trip, and the views with a question are kCheckViews") {
  for (int i = 0; i < kViewCount; ++i) {
    const View v = static_cast<View>(i);
    CHECK(view_row(v).view == v);
    View parsed = View::Flow;
    CHECK(parse_view(view_name(v), &parsed));
    CHECK(parsed == v);
  }
  View unused;
  CHECK_FALSE(parse_view("nowhere", &unused));
  CHECK(std::string(view_name(View::Cost)) == "cost");
  CHECK(std::string(view_title(View::Cost)) == "Cost T²");
  std::vector<std::string> asking;
  for (int i = 0; i < kViewCount; ++i)
    if (view_row(static_cast<View>(i)).check) asking.push_back(view_name(static_cast<View>(i)));
  CHECK(asking == std::vector<std::string>(std::begin(kCheckViews), std::end(kCheckViews)));
}
