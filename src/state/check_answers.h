// The learner's answers to the checks, as AppInputs keeps them: Derive's typed predictions, cell by
// cell, and each view's check question. Progress: Reset keeps them, the page stores them. Not the
// questions (checks.h asks and marks them, src/ui/checks.h draws them); no ImGui here, so it is tested natively.
#pragma once
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace attn {

struct CheckAnswer {
  std::string answer;    // as typed or chosen: "0.42", "animal"
  std::string question;  // a view's question as it was asked ("" for Derive's cells: marked live)
  bool right = false;    // the mark it got when it was given
  bool passed = false;   // a view's check answered right at least once
  bool operator==(const CheckAnswer& o) const {
    return answer == o.answer && question == o.question && right == o.right && passed == o.passed;
  }
};

// By check id: a view's name ("flow") or a Derive cell ("derive.weights.1.2": stage, row, column).
using CheckAnswers = std::map<std::string, CheckAnswer>;

// Derive's stages that take predictions, in order, and their shapes (3 tokens, d = 2).
struct DeriveStage {
  const char* id;  // "scores"
  int rows, cols;
};
constexpr DeriveStage kDeriveCheckStages[] = {{"scores", 3, 3},  {"scaled", 3, 3},  {"exp", 3, 3},
                                              {"sums", 3, 1},    {"weights", 3, 3}, {"output", 3, 2}};
constexpr int kDeriveCheckStageCount = 6;
// The views that ask a check question (Derive's check is its grids).
constexpr const char* kCheckViews[] = {"flow", "weights", "library", "steps", "break",
                                       "mistakes", "build", "cost", "compare"};
constexpr std::size_t kMaxAnswerChars = 40, kMaxQuestionChars = 600;

std::string derive_cell_id(int stage, int row, int col);  // "derive.weights.1.2"
// Whether `id` names a check: one of kCheckViews or a cell inside a Derive stage.
bool valid_check_id(const std::string& id);

// {"flow": {"answer", "question", "right", "passed"}, ...}.
nlohmann::json check_answers_to_json(const CheckAnswers& answers);
// The inverse, checking everything (the stored progress may be anything): throws
// std::invalid_argument "checks.<id>: why" for an unknown id, a wrong type or a text too long.
CheckAnswers check_answers_from_json(const nlohmann::json& value);

// A typed number: "0.42", "-1", ".5", "1e3", "0,42" (a decimal comma); false for anything else.
bool parse_typed_number(const std::string& text, double* value);
// The lesson's rounding: right within ±0.01 of the answer rounded to 2 decimals; for answers of
// 10 or more (exps, large scores), within 0.1% of it.
bool within_rounding(double typed, double answer);
constexpr const char* kRoundingRule = "±0.01 of the answer to 2 decimals (from 10 up: ±1/1000 of it)";

}  // namespace attn
