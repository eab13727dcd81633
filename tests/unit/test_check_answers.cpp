// The stored answers to the checks (src/state/check_answers.h): typed numbers, the lesson's rounding,
// the ids, and the JSON the page stores and may hand back corrupt.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "../../src/state/app_state.h"
#include "../../src/state/check_answers.h"
#include "../../src/state/input_table.h"

using namespace attn;

TEST_CASE("typed numbers: what a learner types is read, anything else is not a number") {
  double v = 0;
  CHECK(parse_typed_number("0.42", &v));
  CHECK(v == doctest::Approx(0.42));
  CHECK(parse_typed_number(" -1 ", &v));
  CHECK(v == -1.0);
  CHECK(parse_typed_number(".5", &v));
  CHECK(v == 0.5);
  CHECK(parse_typed_number("0,42", &v));  // a decimal comma
  CHECK(v == doctest::Approx(0.42));
  CHECK(parse_typed_number("1e3", &v));
  CHECK(v == 1000.0);
  for (const char* bad : {"", " ", "0.4x", "nan", "inf", "1e999", "0x10", "--1", "1/2", "0.4.2"})
    CHECK_MESSAGE(!parse_typed_number(bad, &v), bad);
}

TEST_CASE("the lesson's rounding: ±0.01 of the answer to 2 decimals, 0.1% from 10 up") {
  // The lesson's weight 0.4011 (token 1 on key 1: e^0.707 / (2 e^0.707 + 1)) is 0.40 to 2 decimals.
  CHECK(within_rounding(0.40, 0.4011));
  CHECK(within_rounding(0.39, 0.4011));
  CHECK(within_rounding(0.41, 0.4011));
  CHECK_FALSE(within_rounding(0.42, 0.4011));
  CHECK_FALSE(within_rounding(0.38, 0.4011));
  // Derive's token-2 output from the rounded weights, 3.40 against 3.41: a last-digit difference.
  CHECK(within_rounding(3.40, 3.4107));
  CHECK(within_rounding(-0.71, -0.7071));
  CHECK_FALSE(within_rounding(0.71, -0.7071));
  // e^3 = 20.0855: 0.1% is ±0.02
  CHECK(within_rounding(20.07, 20.0855));
  CHECK_FALSE(within_rounding(20.0, 20.0855));
}

TEST_CASE("check ids: the views with a question and every cell of Derive's six stages") {
  CHECK(valid_check_id("flow"));
  CHECK(valid_check_id("compare"));
  CHECK_FALSE(valid_check_id("practice"));
  CHECK_FALSE(valid_check_id("derive"));
  CHECK(derive_cell_id(4, 1, 2) == "derive.weights.1.2");
  CHECK(valid_check_id("derive.scores.2.2"));
  CHECK(valid_check_id("derive.sums.2.0"));
  CHECK_FALSE(valid_check_id("derive.sums.0.1"));     // row sums are (3, 1)
  CHECK(valid_check_id("derive.output.2.1"));
  CHECK_FALSE(valid_check_id("derive.output.0.2"));   // the output is (3, 2)
  CHECK_FALSE(valid_check_id("derive.weights.3.0"));
}

TEST_CASE("stored answers: JSON both ways, and every corrupt value refused by name") {
  CheckAnswers answers;
  answers["weights"] = {"animal", "Which word does 'it' give the most weight to?", true, true};
  answers["derive.weights.0.0"] = {"0.42", "", false, false};
  const CheckAnswers back = check_answers_from_json(check_answers_to_json(answers));
  CHECK(back == answers);
  const auto refused = [](const char* text) {
    try {
      check_answers_from_json(nlohmann::json::parse(text));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refused("[1]").rfind("checks:", 0) == 0);
  CHECK(refused(R"({"nope": {}})").rfind("checks.nope:", 0) == 0);
  CHECK(refused(R"({"flow": 3})").rfind("checks.flow:", 0) == 0);
  CHECK(refused(R"({"flow": {"answer": 3}})").rfind("checks.flow.answer:", 0) == 0);
  CHECK(refused(R"({"flow": {"right": "yes"}})").rfind("checks.flow.right:", 0) == 0);
  CHECK(refused(R"({"flow": {"extra": 1}})").rfind("checks.flow:", 0) == 0);
  const std::string long_answer = R"({"flow": {"answer": ")" + std::string(kMaxAnswerChars + 1, '1') + "\"}}";
  CHECK(refused(long_answer.c_str()).rfind("checks.flow.answer:", 0) == 0);
}

TEST_CASE("answers are progress: setState takes them, Reset keeps them") {
  AppState state = make_initial_state();
  apply_state_json(state, nlohmann::json::parse(R"({"checks": {"cost": {"answer": "4194304", "right": true,
                                                    "passed": true, "question": "q"}}, "causal": true})"), 0);
  REQUIRE(state.inputs.checks.count("cost") == 1);
  CHECK(state.inputs.checks.at("cost").passed);
  AppInputs reset = state.inputs;
  reset_lesson_inputs(reset);
  CHECK_FALSE(reset.causal);
  CHECK(reset.checks == state.inputs.checks);
  CHECK_THROWS_WITH_AS(apply_state_json(state, nlohmann::json::parse(R"({"checks": {"x": {}}})"), 0),
                       doctest::Contains("checks.x"), std::invalid_argument);
  CHECK(state.inputs.checks.count("cost") == 1);  // a refused change changes nothing
}
