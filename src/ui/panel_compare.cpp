// The compare view: attention depends on the input. One query word in two sentences (the lesson's
// tired / wide twins by default), or two query words of one sentence, each with its row of weights
// and the difference between them. Only the drawing: the rows, the verdict and the view's data are
// src/state/compare_view.cpp.
//
// [SECTION] Drawing
// [SECTION] The view and its data
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "../state/compare_view.h"
#include "layout.h"
#include "model_ui.h"
#include "panels.h"
#include "widgets.h"

namespace attn::ui {

namespace {


// [SECTION] Drawing

// One row of weights (or differences) as a strip of cells with its key tokens above.
void weight_strip(const char* id, const std::vector<float>& values, const std::vector<std::string>& labels,
                  const std::string& row_label, bool signed_values, float range, float cell, float label_width) {
  HeatmapStyle s;
  s.cell = cell;
  s.show_values = true;
  s.signed_values = signed_values;
  s.range = std::max(range, 1e-6f);
  const std::vector<std::string> rows = {row_label};
  s.row_labels = &rows;
  s.col_labels = &labels;
  s.col_label_color = color(palette().key);  // the key hue of every view
  if (!signed_values) s.row_label_color = color(palette().query);  // "A: it", the query (not B − A)
  s.label_width = label_width;
  const HeatmapHover hover = heatmap(id, values.data(), 1, static_cast<int>(values.size()), s);
  // Presentation mode explains the largest entry first (the strongest weight, the largest change).
  int largest = -1;
  for (int j = 0; j < static_cast<int>(values.size()); ++j)
    if (std::isfinite(values[static_cast<std::size_t>(j)]) &&
        (largest < 0 || std::fabs(values[static_cast<std::size_t>(j)]) > std::fabs(values[static_cast<std::size_t>(largest)])))
      largest = j;
  explain_parts(id, static_cast<int>(values.size()), hover.col, largest, [&](int col) {
    const float v = values[static_cast<std::size_t>(col)];
    if (std::isnan(v))
      ImGui::Text("%s: the two rows have different keys here", labels[col].c_str());
    else if (!std::isfinite(v))
      ImGui::Text("%s: hidden by the causal mask", labels[col].c_str());
    else
      ImGui::Text("%s: %s", labels[col].c_str(), number_text(v, 3).c_str());
  });
}

// A single-line text box for the second sentence, kept while invalid (the state keeps the last good one).
void second_sentence_box(const AppState& state, AppInputs& next, TextBox& box) {
  if (box.synced_revision != state.revision && !box.active) {
    std::snprintf(box.buffer, sizeof box.buffer, "%s", state.inputs.compare_sentence.c_str());
    box.synced_revision = state.revision;
  }
  ImGui::SetNextItemWidth(-1);
  if (ImGui::InputText("##compare_sentence", box.buffer, sizeof box.buffer)) next.compare_sentence = box.buffer;
  box.active = ImGui::IsItemActive();
  publish_item_rect("compare:sentence");
  if (!state.error.empty() && state.error_key == "compare_sentence") {
    ImGui::PushStyleColor(ImGuiCol_Text, color(palette().warning));
    ImGui::TextWrapped("%s", state.error.c_str());
    ImGui::PopStyleColor();
  }
}

void compare_controls(const AppState& state, AppInputs& next, UiState::Compare& ui) {
  if (ImGui::RadioButton("Two sentences, one query word", !state.inputs.compare_tokens)) next.compare_tokens = false;
  publish_item_rect("compare:sentences");
  same_line_if_fits(ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x +
                    ImGui::CalcTextSize("Two query words, one sentence").x);
  if (ImGui::RadioButton("Two query words, one sentence", state.inputs.compare_tokens)) next.compare_tokens = true;
  publish_item_rect("compare:tokens");
  if (state.inputs.compare_tokens) {
    const auto& tokens = state.model.queries.tokens;
    const int other = std::clamp(state.inputs.compare_token, 0, static_cast<int>(tokens.size()) - 1);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Query A: the query token in the controls.  Query B:");
    same_line_if_fits(ImGui::GetFontSize() * 12.0f);
    ImGui::SetNextItemWidth(std::min(ImGui::GetFontSize() * 12.0f, ImGui::GetContentRegionAvail().x));
    if (ImGui::BeginCombo("##compare_token", tokens[other].text.c_str(), ImGuiComboFlags_HeightLarge)) {
      for (int i = 0; i < static_cast<int>(tokens.size()); ++i) {
        const std::string item = std::to_string(i + 1) + "  " + tokens[i].text;
        if (ImGui::Selectable(item.c_str(), i == other)) next.compare_token = i;
      }
      ImGui::EndCombo();
    }
    publish_item_rect("compare:token");
    return;
  }
  ImGui::TextUnformatted("A: the sentence in the controls");
  hint(state.inputs.sentence.c_str());
  ImGui::TextUnformatted("B: the second sentence");
  second_sentence_box(state, next, ui.second_sentence);
  const char* twins = "The lesson's twins: ...it was tired / ...it was wide";
  if (button_width(twins) > ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize)
    twins = "The lesson's twins (tired / wide)";  // a phone: the short name
  if (ImGui::SmallButton(twins)) {
    next.sentence = kLessonSentence;
    next.compare_sentence = kLessonTwinSentence;
    if (!real_model(state)) next.token = find_token(embed_sentence(kLessonSentence), "it");
  }
  publish_item_rect("compare:twins");
  // "bank" by the river and by the money: in A the telling word comes after "bank", in B before it, so
  // only a model that reads both ways can use it in A (a decoder's "bank" sees "I sat on the" alone).
  const char* bank = "The bank pair: ...bank of the river / ...money in the bank";
  if (button_width(bank) > ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize)
    bank = "The bank pair (river / money)";
  if (ImGui::SmallButton(bank)) {
    next.sentence = kBankSentence;
    next.compare_sentence = kBankTwinSentence;
    try {
      if (const int at = find_token(query_tokens(state, next.model, next.sentence), "bank"); at >= 0) next.token = at;
    } catch (const std::invalid_argument&) {  // a model that cannot read it: apply_inputs names the problem
    }
  }
  publish_item_rect("compare:bank");
  explain_item("The lesson's \"bank\": the same word means a riverside or a place for money, and only the words "
               "around it tell which. In the first sentence those words come after \"bank\": a decoder's causal mask "
               "hides them, an encoder (BERT) reads them.");
}


void draw_patch_sweep(const AppState& state, AppInputs& next) {
  using PS = AppInputs::PatchSweep;
  const SweepRun& r = state.patch_sweep;
  const LoadedModel* m = current_loaded_model(state);
  const SweepOver over = r.model ? r.over : SweepOver::PatchHeads;
  const auto label = [](SweepOver o) {
    return o == SweepOver::PatchHeads ? "Patch every head from B, one at a time" : "Patch every layer and position from B";
  };
  const bool on = state.inputs.patch_sweep != PS::None;
  const bool now = sweep_controls(r, on, label(over), "compare:patch_sweep");
  if (now != on) next.patch_sweep = !now ? PS::None : over == SweepOver::PatchPositions ? PS::Positions : PS::Heads;
  if (!on || r.finished()) {
    const SweepOver other = over == SweepOver::PatchHeads ? SweepOver::PatchPositions : SweepOver::PatchHeads;
    same_line_if_fits(button_width(label(other)));
    if (ImGui::Button(label(other))) next.patch_sweep = other == SweepOver::PatchPositions ? PS::Positions : PS::Heads;
    publish_item_rect("compare:patch_sweep_other");
  }
  if (!m || r.sweep.done == 0) return;
  const TransformerConfig& c = m->model->config;
  std::vector<std::string> rows, cols;
  for (int l = 0; l < c.n_layer; ++l) rows.push_back("L" + std::to_string(l + 1));
  if (r.over == SweepOver::PatchHeads)
    for (int h = 0; h < c.n_head; ++h) cols.push_back("H" + std::to_string(h + 1));
  else
    for (const Token& t : state.model.queries.tokens) cols.push_back(fit_text(t.text, ImGui::GetFontSize() * 4.0f));
  sweep_map("compare:patch_sweep_map", r, rows, cols, "share restored", 1.0f, [&](int row, int col, float v) {
    const std::string part = r.over == SweepOver::PatchHeads
        ? "L" + std::to_string(row + 1) + " H" + std::to_string(col + 1) + "'s output"
        : "the stream entering L" + std::to_string(row + 1) + " at '" + state.model.queries.tokens[static_cast<std::size_t>(col)].text + "'";
    if (std::isnan(v)) return part + ": not patched yet, or nothing to restore";
    return part + " from B restores " + number_text(v * 100.0f, 1) + "% of the difference";
  });
  paragraph(patch_sweep_text(state).c_str());
}

// Patching: one part of B's run (the chosen head's output, or the stream entering the chosen layer
// at the query) copied into A's, and how much of B's answer comes with it (the next-token strip and
// intervention_texts say it). Sentences of as many tokens only: position i of one is position i of the other.
void draw_patch_control(const AppState& state, AppInputs& next, const Comparison& c) {
  if (c.tokens || !current_loaded_model(state) || !state.model.compare_forward) return;
  ImGui::Separator();
  ImGui::TextUnformatted("Patch B into A: copy one part of B's run into A's, and see how much of B's answer comes with it");
  const std::size_t ta = state.model.token_ids.size(), tb = state.model.compare_forward->token_ids.size();
  if (ta != tb) {
    hint(("Patching copies position by position, so it needs two sentences of as many tokens: A has " + std::to_string(ta) +
          " and B " + std::to_string(tb) + ".").c_str());
    return;
  }
  const int layer = state.inputs.layer, head = state.inputs.head, token = state.inputs.token;
  const std::string name = "L" + std::to_string(layer + 1) + " H" + std::to_string(head + 1);
  if (ImGui::Button(("Copy " + name + "'s output from B").c_str()))
    next.patch = PatchSpec{state.inputs.compare_sentence, {{layer, head}}, {}};
  publish_item_rect("compare:patch_head");
  ImGui::SameLine();
  if (ImGui::Button(("Copy the stream entering L" + std::to_string(layer + 1) + " at " + in_quotes(c.a.query_text) + " from B").c_str()))
    next.patch = PatchSpec{state.inputs.compare_sentence, {}, {{layer, token}}};
  publish_item_rect("compare:patch_stream");
  explain_item("The measure: (patched − A) ÷ (B − A) of log p of A's likeliest next token. 100% means this part alone "
               "carries the difference between the sentences; 0% that it carries none of it.");
  draw_patch_sweep(state, next);
  if (!state.inputs.patch.from.empty()) {
    const InterventionTexts t = intervention_texts(state);
    for (const InterventionEntry& e : t.entries)
      if (e.kind == InterventionEntry::Patch) hint(e.text.c_str());
    if (!t.restored.empty()) paragraph(t.restored.c_str());
    if (ImGui::SmallButton("Undo the patch")) next.patch = PatchSpec{};
  }
}

}  // namespace

// [SECTION] The view and its data

void draw_compare_panel(const AppState& state, Action& action, UiState& all) {
  AppInputs& next = action.inputs;
  UiState::Compare& ui = all.compare;
  panel_intro("Attention depends on the input: the same query word in two sentences, or two query words of one "
              "sentence, each with its row of weights, and where they differ.");
  head_banner(state);
  if (const std::string note = edits_note(state); !note.empty()) hint(note.c_str());
  // With little height (a small embed, a phone on its side) the rows of weights come first.
  const bool strips_first = layout().short_height;
  if (!strips_first) {
    compare_controls(state, next, ui);
    ImGui::Spacing();
  }
  const Comparison c = compare(state);

  const float font = ImGui::GetFontSize();
  std::vector<std::string> row_labels = {c.a.title.substr(0, 1) + ": " + c.a.query_text,
                                         c.b.title.substr(0, 1) + ": " + c.b.query_text, "B − A"};
  float label_width = 0;
  for (std::string& l : row_labels) {
    l = fit_text(l, font * 7.0f);
    label_width = std::max(label_width, ImGui::CalcTextSize(l.c_str()).x);
  }
  label_width += ImGui::GetStyle().ItemSpacing.x;
  const std::size_t keys = std::max(c.a.keys.size(), c.b.keys.size());
  const float cell = std::clamp((ImGui::GetContentRegionAvail().x - label_width - ImGui::GetStyle().ScrollbarSize) /
                                    static_cast<float>(std::max<std::size_t>(keys, 1)),
                                ImGui::GetTextLineHeight() + 1.0f, font * 2.6f);
  float range = 0;
  for (float d : c.difference)
    if (std::isfinite(d)) range = std::max(range, std::fabs(d));

  HeatmapStyle legend_style;
  legend("weight", legend_style, font * 7.0f);
  weight_strip("##compare_a", c.a.weights, c.a.keys, row_labels[0], false, 1.0f, cell, label_width);
  publish_picture_rect(View::Compare);
  ImGui::Spacing();
  weight_strip("##compare_b", c.b.weights, c.b.keys, row_labels[1], false, 1.0f, cell, label_width);
  ImGui::Spacing();
  ImGui::TextUnformatted("The difference, B − A (orange: more weight in B, blue: less)");
  weight_strip("##compare_diff", c.difference, c.difference_keys, row_labels[2], true, std::max(range, 0.05f), cell,
               label_width);
  if (std::any_of(c.difference.begin(), c.difference.end(), [](float d) { return std::isnan(d); }))
    hint("Hatched: nothing to subtract there (the sentences differ in length, or the mask hides the key).");
  ImGui::Spacing();
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_PlotLinesHovered));
  ImGui::TextWrapped("%s", verdict(state, c).c_str());
  ImGui::PopStyleColor();
  const std::vector<std::string> asked = ask_lines(state, c);
  if (!asked.empty()) {
    ImGui::Separator();
    ImGui::TextUnformatted("Ask the model: its answer, and what each head adds to it");
    for (const std::string& line : asked) ImGui::TextWrapped("%s", line.c_str());
    publish_item_rect("compare:ask");
  }
  draw_patch_control(state, next, c);
  if (strips_first) {
    ImGui::Spacing();
    compare_controls(state, next, ui);
  }
}


}  // namespace attn::ui
