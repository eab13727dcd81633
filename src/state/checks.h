// The check questions: one short question per main view, asked from the live state, marked with a
// one-line why, and the learner's progress over all checks (Derive's typed grids too). Not their
// drawing (src/ui/checks.cpp) and not the stored answers (check_answers.h); no ImGui here.
#pragma once
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <nlohmann/json.hpp>

#include "app_state.h"

namespace attn {

struct CheckQuestion {
  std::string id;                    // the view's name: the key of its answer in AppInputs::checks
  std::string prompt;                // the question, with the live numbers in it
  std::vector<std::string> choices;  // multiple choice; empty: a number is typed
  std::vector<std::string> right;    // the choices that are right (a tie: several)
  double number = 0;                 // a number question's answer
  bool whole = false;                // ... a whole number (marked exactly), else within the rounding
  std::string why;                   // one line, shown once answered
};

// Each view's question: check_questions::flow, ... (declared with the table of views, views.h).

// The view's check question for the current state; false when the view asks none.
bool view_check(const AppState& state, View view, CheckQuestion* out);
// Whether `answer` (a choice's text, or a typed number) is right.
bool check_is_right(const CheckQuestion& q, const std::string& answer);
// The stored answer to `q`, when it was given to this very question (a changed state asks anew).
const CheckAnswer* current_answer(const AppState& state, const CheckQuestion& q);
// What AppInputs::checks[q.id] becomes when `given` is answered: marked, and passed once right.
CheckAnswer graded_answer(const AppState& state, const CheckQuestion& q, const std::string& given);

// The open view's question for getState().view_data.check (null when it asks none):
// {id, prompt, kind, choices, answered, answer, correct, passed, why}.
nlohmann::json view_check_json(const AppState& state);

// Whether the learner has passed the check of `view` (Derive: every cell of the weights stage
// right now). Practice's Prove-it ticks unlock with it.
bool check_passed(const AppState& state, View view);

// Every exercise's progress: {"derive": {correct, answered, total, stages}, "flow": {correct,
// answered, total: 1, passed}, ...}. Cheap (stored marks, Derive's cells marked live): the page posts it.
nlohmann::json progress_json(const AppState& state);

}  // namespace attn
