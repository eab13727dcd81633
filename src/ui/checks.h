// The check questions' drawing: under the open view, its question (src/state/checks.h asks and
// marks it), the choices or a number field, the mark and the why. Not the questions, not their marking.
#pragma once
#include <string>

#include <imgui.h>

#include "../state/checks.h"
#include "ui_state.h"

namespace attn::ui {

// The colour of a mark's text (right: green, else red), readable on the dark and the light theme.
ImVec4 mark_colour(const AppState& state, bool right);

// A field for a typed answer showing `stored`; returns true with `*committed` when the learner
// leaves it or presses Enter after typing (what is being typed stays in the field until then).
// `draft` holds what is typed into the field being edited (one at a time).
bool typed_answer_field(const char* id, const std::string& stored, float width, std::string* committed, TypedAnswer& draft);

// Under the open view: its question, the choices or a number field, the mark and the why.
void draw_view_check(const AppState& state, AppInputs& next, TypedAnswer& draft);

}  // namespace attn::ui
