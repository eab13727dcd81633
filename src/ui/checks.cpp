// The check questions' drawing (see checks.h): the block under the open view. The questions and
// their marking are src/state/checks.cpp; Derive's typed grids are panel_derive.cpp.
#include "checks.h"

#include <imgui.h>

#include <cstdio>

#include "panels.h"
#include "widgets.h"

namespace attn::ui {

namespace {

// [SECTION] Drawing

void answer(const AppState& state, AppInputs& next, const CheckQuestion& q, const std::string& given) {
  next.checks[q.id] = graded_answer(state, q, given);
}

void number_field(const AppState& state, AppInputs& next, const CheckQuestion& q, const CheckAnswer* given,
                  TypedAnswer& draft) {
  std::string typed;
  const bool committed =
      typed_answer_field("##quiz_number", given ? given->answer : "", ImGui::GetFontSize() * 8.0f, &typed, draft);
  publish_item_rect("quiz:field");
  same_line_if_fits(ImGui::CalcTextSize("Check").x + ImGui::GetStyle().FramePadding.x * 2);
  const bool pressed = ImGui::Button("Check");
  publish_item_rect("quiz:submit");
  if (pressed && !committed && given) typed = given->answer;  // Check again after leaving the field
  if ((committed || pressed) && !typed.empty()) answer(state, next, q, typed);
}

}  // namespace

ImVec4 mark_colour(const AppState& state, bool right) {
  if (state.inputs.light_theme) return right ? ImVec4(0.10f, 0.48f, 0.20f, 1.0f) : ImVec4(0.72f, 0.16f, 0.12f, 1.0f);
  return right ? ImVec4(0.30f, 0.78f, 0.42f, 1.0f) : ImVec4(0.95f, 0.45f, 0.40f, 1.0f);
}

bool typed_answer_field(const char* id, const std::string& stored, float width, std::string* committed, TypedAnswer& draft) {
  // One field is typed into at a time: its text lives in `draft` (and in ImGui's own copy) until it
  // is left, so a half-typed "0." is not marked and not posted to the course page.
  char shown[kMaxAnswerChars + 1];
  std::snprintf(shown, sizeof shown, "%s", stored.c_str());
  const ImGuiID this_id = ImGui::GetID(id);
  char* buffer = draft.field == this_id ? draft.draft : shown;
  ImGui::SetNextItemWidth(width);
  ImGui::InputTextWithHint(id, "?", buffer, sizeof draft.draft, ImGuiInputTextFlags_CharsScientific | ImGuiInputTextFlags_AutoSelectAll);
  if (ImGui::IsItemActivated()) {
    draft.field = this_id;
    if (buffer != draft.draft) std::snprintf(draft.draft, sizeof draft.draft, "%s", buffer);
  }
  const bool done = ImGui::IsItemDeactivatedAfterEdit();
  if (done) *committed = buffer;
  if (ImGui::IsItemDeactivated() && draft.field == this_id) draft.field = 0;
  return done;
}

void draw_view_check(const AppState& state, AppInputs& next, TypedAnswer& draft) {
  CheckQuestion q;
  if (!view_check(state, state.inputs.view, &q)) return;
  ImGui::PushID("quiz");
  ImGui::Spacing();
  ImGui::Separator();
  ImGui::Spacing();
  ImGui::TextUnformatted("Check yourself");
  const CheckAnswer* given = current_answer(state, q);
  const auto stored = state.inputs.checks.find(q.id);
  const bool passed = stored != state.inputs.checks.end() && stored->second.passed;
  if (passed) {
    ImGui::SameLine();
    ImGui::TextColored(mark_colour(state, true), "· passed");
  }
  paragraph(q.prompt.c_str());
  if (q.choices.empty()) {
    number_field(state, next, q, given, draft);
    if (!q.whole) hint((std::string("Right within ") + kRoundingRule + ".").c_str());
  } else {
    for (std::size_t i = 0; i < q.choices.size(); ++i) {
      const std::string label = q.choices[i] + "###choice" + std::to_string(i);
      const bool chosen = given && given->answer == q.choices[i];
      if (i) same_line_if_fits(ImGui::CalcTextSize(q.choices[i].c_str()).x + ImGui::GetStyle().FramePadding.x * 2);
      if (chosen) {
        const ImU32 fill = given->right ? IM_COL32(40, 120, 60, 255) : IM_COL32(140, 50, 45, 255);
        ImGui::PushStyleColor(ImGuiCol_Button, fill);
        ImGui::PushStyleColor(ImGuiCol_ButtonHovered, fill);
        ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 255, 255, 255));
      }
      if (ImGui::Button(label.c_str())) answer(state, next, q, q.choices[i]);
      if (chosen) ImGui::PopStyleColor(3);
      publish_item_rect(("quiz:choice:" + std::to_string(i)).c_str());
    }
  }
  if (given) {
    ImGui::PushStyleColor(ImGuiCol_Text, mark_colour(state, given->right));
    const std::string mark = given->right ? "Right. " + q.why : "Not right (you said " + given->answer + "). " + q.why;
    ImGui::TextWrapped("%s", mark.c_str());
    ImGui::PopStyleColor();
  } else if (passed) {
    hint("You passed this check before; the numbers have changed since, so here it is again.");
  }
  // An embed's "open the full explainer" link sits over the bottom right: room to scroll past it.
  if (state.inputs.embed) ImGui::Dummy(ImVec2(0, ImGui::GetTextLineHeightWithSpacing() * 1.5f));
  ImGui::PopID();
}

}  // namespace attn::ui
