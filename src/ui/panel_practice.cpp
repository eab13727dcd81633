// The practice view: the lesson's four exercises (answers on demand, their numbers live from the
// app's own model), the "prove it" checklist and where to go further. Not a test itself: a tick
// whose view has a check question unlocks once that check is passed (checks.h); the others are
// ticked on the learner's word and say so ("self-checked").
#include <imgui.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "checks.h"
#include "panels.h"
#include "../state/practice_view.h"
#include "widgets.h"

namespace attn::ui {

namespace {

const ImVec4 kAnswerBar(0.35f, 0.60f, 0.95f, 1.0f);
const ImVec4 kRecommended(1.0f, 0.80f, 0.35f, 1.0f);

// An answer: its paragraphs indented, with a coloured bar down its left side.
void answer_block(const std::string& answer) {
  const float bar = ImGui::GetFontSize() * 0.2f, indent = ImGui::GetFontSize() * 0.9f;
  const ImVec2 top = ImGui::GetCursorScreenPos();
  ImGui::Indent(indent);
  ImGui::BeginGroup();
  paragraph(answer.c_str());
  ImGui::EndGroup();
  ImGui::Unindent(indent);
  ImGui::GetWindowDrawList()->AddRectFilled(top, ImVec2(top.x + bar, ImGui::GetItemRectMax().y),
                                            ImGui::GetColorU32(kAnswerBar));
}

void draw_exercises(const AppState& state, AppInputs& next, bool (&answer_shown)[4]) {
  const std::vector<Exercise> list = exercises(state);
  for (int i = 0; i < static_cast<int>(list.size()); ++i) {
    const Exercise& e = list[i];
    ImGui::PushID(i);
    ImGui::Spacing();
    ImGui::Text("%d  %s", i + 1, e.name);
    const std::string kind = std::string("· ") + e.kind;
    same_line_if_fits(ImGui::CalcTextSize(kind.c_str()).x);
    ImGui::TextDisabled("%s", kind.c_str());
    paragraph(e.question.c_str());
    if (i == 0) publish_picture_rect(View::Practice);  // the view's first exercise: what an embed shows first
    if (ImGui::Button(answer_shown[i] ? "Hide answer" : "Show answer")) answer_shown[i] = !answer_shown[i];
    publish_item_rect(("practice:answer:" + std::to_string(i)).c_str());
    same_line_if_fits(button_width(e.view_label));
    if (ImGui::Button(e.view_label)) next.view = e.view;
    publish_item_rect(("practice:goto:" + std::to_string(i)).c_str());
    if (answer_shown[i]) {
      if (e.live) hint("Its numbers come from the app as it is now, so they follow what you change.");
      answer_block(e.answer);
    }
    ImGui::PopID();
    ImGui::Spacing();
    ImGui::Separator();
  }
}

void draw_checklist(const AppState& state, AppInputs& next) {
  int count = 0;
  for (int i = 0; i < kChecklistSize; ++i) count += ticked(state, i);
  ImGui::Spacing();
  ImGui::Text("Prove it");
  ImGui::SameLine();
  ImGui::TextDisabled("· %d of %d ticked", count, kChecklistSize);
  hint("A line with a check unlocks when you pass that view's check (Derive: every weight typed right). "
       "The lines marked self-checked are yours to tick when you can do them without notes. Kept in this browser.");
  for (int i = 0; i < kChecklistSize; ++i) {
    const unsigned bit = 1u << i;
    const bool open = unlocked(state, i);
    bool checked = ticked(state, i);
    ImGui::PushID(i);
    ImGui::BeginDisabled(!open);
    const bool clicked = ImGui::Checkbox("##check", &checked);
    ImGui::EndDisabled();
    publish_item_rect(("check:" + std::to_string(i)).c_str());
    ImGui::SameLine();
    // The statement wraps under itself (a checkbox label would not wrap); clicking it ticks too.
    ImGui::BeginGroup();
    ImGui::AlignTextToFramePadding();
    ImGui::TextWrapped("%s", kChecklist[i]);
    ImGui::EndGroup();
    const bool text_clicked = open && ImGui::IsItemClicked();
    if (text_clicked) checked = !checked;
    if (clicked || text_clicked) next.checklist = checked ? next.checklist | bit : next.checklist & ~bit;
    ImGui::Indent(ImGui::GetFrameHeight() + ImGui::GetStyle().ItemSpacing.x);
    // (wrapped, and the button on the next line where it does not fit: a phone is narrow)
    if (self_checked(i)) {
      hint("self-checked: no question in the app proves it");
    } else if (!open) {
      hint((std::string("locked until the ") + view_title(kChecklistProof[i]) + " check is passed").c_str());
      same_line_if_fits(button_width("Go there"));
      if (ImGui::SmallButton("Go there")) next.view = kChecklistProof[i];
      publish_item_rect(("check:go:" + std::to_string(i)).c_str());
    } else {
      hint((std::string("unlocked: the ") + view_title(kChecklistProof[i]) + " check is passed").c_str());
    }
    ImGui::Unindent(ImGui::GetFrameHeight() + ImGui::GetStyle().ItemSpacing.x);
    ImGui::PopID();
  }
}

void draw_references() {
  ImGui::Spacing();
  ImGui::Separator();
  ImGui::Spacing();
  ImGui::Text("Go further");
  ImGui::SameLine();
  ImGui::TextDisabled("· optional: each opens in a new tab");
  for (int i = 0; i < static_cast<int>(sizeof kReferences / sizeof kReferences[0]); ++i) {
    const Reference& r = kReferences[i];
    ImGui::PushID(i);
    // A title longer than a phone is wide is shortened on its button (the tooltip and the page say it whole).
    const float room = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize - button_width("  ↗");
    if (ImGui::Button((fit_text(r.title, room) + "  ↗").c_str())) open_url(r.url);
    publish_item_rect(("ref:" + std::to_string(i)).c_str());
    explain_item((std::string(r.title) + "\n" + r.url).c_str(), false);  // the click opens it
    if (r.recommended) {
      same_line_if_fits(ImGui::CalcTextSize("★ start here").x);
      ImGui::AlignTextToFramePadding();
      ImGui::TextColored(kRecommended, "★ start here");
    }
    hint(r.source);
    if (r.recommended)
      hint("The clearest moving picture of queries, keys and values: watch word meanings shift as attention "
           "blends them.");
    ImGui::PopID();
    ImGui::Spacing();
  }
}

}  // namespace

void draw_practice_panel(const AppState& state, Action& action, UiState& ui) {
  AppInputs& next = action.inputs;
  panel_intro("Four exercises from the lesson. Try each on paper, out loud or in code first, then open the "
              "answer and compare.");
  if (ImGui::Button("Printable handout  ↗") && !open_handout()) ImGui::OpenPopup("handout-unavailable");
  publish_item_rect("handout");
  hint("A page to print, search or translate: the sentence, the weights, the seven steps' numbers and these "
       "exercises, as they are now.");
  if (ImGui::BeginPopup("handout-unavailable")) {
    ImGui::TextUnformatted("The handout works in the browser version.");
    ImGui::EndPopup();
  }
  ImGui::Separator();
  draw_exercises(state, next, ui.practice.answer_shown);
  draw_checklist(state, next);
  draw_references();
}


}  // namespace attn::ui
