// The check questions: one short question per main view, asked from the live state and marked at
// once with a one-line why, and the learner's progress over all checks (Derive's typed grids too).
// Not the stored answers (check_answers.h) and not Derive's grids (panel_derive.cpp draws those).
#pragma once
#include <string>
#include <vector>

#include <imgui.h>
#include <nlohmann/json.hpp>

#include "../state/app_state.h"

namespace attn::ui {

struct CheckQuestion {
  std::string id;                    // the view's name: the key of its answer in AppInputs::checks
  std::string prompt;                // the question, with the live numbers in it
  std::vector<std::string> choices;  // multiple choice; empty: a number is typed
  std::vector<std::string> right;    // the choices that are right (a tie: several)
  double number = 0;                 // a number question's answer
  bool whole = false;                // ... a whole number (marked exactly), else within the rounding
  std::string why;                   // one line, shown once answered
};

// The view's check question for the current state; false when the view asks none.
bool view_check(const AppState& state, View view, CheckQuestion* out);
// Whether `answer` (a choice's text, or a typed number) is right.
bool check_is_right(const CheckQuestion& q, const std::string& answer);

// The colour of a mark's text (right: green, else red), readable on the dark and the light theme.
ImVec4 mark_colour(const AppState& state, bool right);

// A field for a typed answer showing `stored`; returns true with `*committed` when the learner
// leaves it or presses Enter after typing (what is being typed stays in the field until then).
bool typed_answer_field(const char* id, const std::string& stored, float width, std::string* committed);

// Under the open view: its question, the choices or a number field, the mark and the why.
void draw_view_check(const AppState& state, AppInputs& next);
// The open view's question for getState().view_data.check (null when it asks none):
// {id, prompt, kind, choices, answered, answer, correct, passed, why}.
nlohmann::json view_check_json(const AppState& state);

// Whether the learner has passed the check of `view` (Derive: every cell of the weights stage
// right now). Practice's Prove-it ticks unlock with it.
bool check_passed(const AppState& state, View view);

// Every exercise's progress: {"derive": {correct, answered, total}, "flow": {correct, answered,
// total: 1, passed}, ...}. Cheap (stored marks, Derive's cells marked live): the page posts it.
nlohmann::json progress_json(const AppState& state);

}  // namespace attn::ui
