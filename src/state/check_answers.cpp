// The learner's answers to the checks (see check_answers.h): ids, their JSON, the marking rule.
// Not the questions: those come from the live state in checks.cpp.
#include "check_answers.h"

#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace attn {

using nlohmann::json;

std::string derive_cell_id(int stage, int row, int col) {
  return std::string("derive.") + kDeriveCheckStages[stage].id + "." + std::to_string(row) + "." + std::to_string(col);
}

bool valid_check_id(const std::string& id) {
  for (const char* view : kCheckViews)
    if (id == view) return true;
  for (int s = 0; s < kDeriveCheckStageCount; ++s)
    for (int i = 0; i < kDeriveCheckStages[s].rows; ++i)
      for (int j = 0; j < kDeriveCheckStages[s].cols; ++j)
        if (id == derive_cell_id(s, i, j)) return true;
  return false;
}

json check_answers_to_json(const CheckAnswers& answers) {
  json out = json::object();
  for (const auto& [id, a] : answers)
    out[id] = {{"answer", a.answer}, {"question", a.question}, {"right", a.right}, {"passed", a.passed}};
  return out;
}

CheckAnswers check_answers_from_json(const json& value) {
  if (!value.is_object()) throw std::invalid_argument("checks: must be an object of answers by check id");
  CheckAnswers out;
  for (const auto& [id, entry] : value.items()) {
    const std::string where = "checks." + id.substr(0, 60);
    if (!valid_check_id(id)) throw std::invalid_argument(where + ": is not a check of the explainer");
    if (!entry.is_object()) throw std::invalid_argument(where + ": must be an object {answer, question, right, passed}");
    CheckAnswer a;
    for (const auto& [key, v] : entry.items()) {
      if (key == "answer" || key == "question") {
        const std::size_t limit = key == "answer" ? kMaxAnswerChars : kMaxQuestionChars;
        if (!v.is_string() || v.get<std::string>().size() > limit)
          throw std::invalid_argument(where + "." + key + ": must be a string of at most " + std::to_string(limit) +
                                      " bytes");
        (key == "answer" ? a.answer : a.question) = v.get<std::string>();
      } else if (key == "right" || key == "passed") {
        if (!v.is_boolean()) throw std::invalid_argument(where + "." + key + ": must be true or false");
        (key == "right" ? a.right : a.passed) = v.get<bool>();
      } else {
        throw std::invalid_argument(where + ": unknown key \"" + key.substr(0, 40) + "\"");
      }
    }
    out[id] = a;
  }
  return out;
}

bool parse_typed_number(const std::string& text, double* value) {
  std::string s;
  for (char c : text) {
    if (c == ' ' || c == '\t') continue;
    s += c == ',' ? '.' : c;
  }
  if (s.empty() || s.size() > kMaxAnswerChars) return false;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return false;  // "0.4x", "nan", "inf", "1e999"
  // strtod also reads hexadecimal ("0x1p3"): not a number a learner types
  if (s.find_first_of("xX") != std::string::npos) return false;
  *value = v;
  return true;
}

bool within_rounding(double typed, double answer) {
  if (!std::isfinite(typed) || !std::isfinite(answer)) return false;
  if (std::fabs(answer) >= 10) return std::fabs(typed - answer) <= 0.001 * std::fabs(answer);
  const double rounded = std::round(answer * 100.0) / 100.0;
  return std::fabs(typed - rounded) <= 0.01 + 1e-9;
}

}  // namespace attn
