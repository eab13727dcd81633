// The panels' view of the current model (see model_ui.h): which model and head computes, column
// names, and the next-token strip. Not a view of its own and not the loader.
#include <imgui.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>

#include "family_panels.h"
#include "model_ui.h"
#include "panels.h"
#include "widgets.h"

namespace attn::ui {

void head_banner(const AppState& state) {
  const LoadedModel* m = current_loaded_model(state);
  if (!m) {
    for (const ModelNote& note : toy_model_notes(state)) {
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_PlotLinesHovered));
      ImGui::TextWrapped("%s", note.text.c_str());
      ImGui::PopStyleColor();
    }
    return;
  }
  const TransformerConfig& c = m->model->config;
  char line[320];
  std::snprintf(line, sizeof line, "Showing %s (%d layer%s × %d head%s; head width %d). Pick another in the controls or the Heads view.",
                head_caption(state).c_str(), c.n_layer, c.n_layer == 1 ? "" : "s", c.n_head, c.n_head == 1 ? "" : "s",
                c.head_dim);
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_PlotLinesHovered));
  ImGui::TextWrapped("%s", line);
  ImGui::PopStyleColor();
}


// [SECTION] Sweeps


bool sweep_controls(const SweepRun& r, bool on, const char* start, const std::string& id) {
  const float font = ImGui::GetFontSize();
  if (on && !r.finished()) {
    const float fraction = r.total() > 0 ? static_cast<float>(r.sweep.done) / static_cast<float>(r.total()) : 0.0f;
    const std::string overlay = std::to_string(r.sweep.done) + " of " + std::to_string(r.total()) + " runs";
    ImGui::ProgressBar(fraction, ImVec2(std::min(ImGui::GetContentRegionAvail().x, font * 20.0f), 0), overlay.c_str());
    publish_item_rect((id + "_progress").c_str());
    ImGui::SameLine();
    ImGui::PushID(id.c_str());
    if (ImGui::Button("Cancel")) on = false;
    ImGui::PopID();
    publish_item_rect((id + "_cancel").c_str());
  } else if (!r.finished()) {
    ImGui::PushID(id.c_str());
    if (ImGui::Button(r.sweep.done > 0 ? "Continue the sweep" : start)) on = true;
    ImGui::PopID();
    publish_item_rect(id.c_str());
    if (r.sweep.done > 0) {
      ImGui::SameLine();
      hint(("Stopped after " + std::to_string(r.sweep.done) + " of " + std::to_string(r.total()) + ".").c_str());
    }
  }
  return on;
}

void sweep_map(const std::string& id, const SweepRun& r, const std::vector<std::string>& rows,
               const std::vector<std::string>& cols, const char* caption, float min_range,
               const std::function<std::string(int, int, float)>& cell_text) {
  const float font = ImGui::GetFontSize();
  const int n_rows = static_cast<int>(r.sweep.values.rows()), n_cols = static_cast<int>(r.sweep.values.cols());
  HeatmapStyle s;
  s.signed_values = true;
  const int largest = largest_cell(r.sweep.values);
  s.range = std::max(min_range, largest >= 0 ? std::fabs(r.sweep.values.data()[largest]) : 0.0f);
  s.show_values = true;
  s.row_labels = &rows;
  s.col_labels = &cols;
  s.cell = std::clamp((ImGui::GetContentRegionAvail().x - font * 3.0f) / static_cast<float>(n_cols), font * 1.2f, font * 3.2f);
  legend(caption, s, font * 7.0f);
  const std::string hidden = "##" + id;
  const HeatmapHover hover = heatmap(hidden.c_str(), r.sweep.values.data(), n_rows, n_cols, s);
  publish_item_rect(id.c_str());
  const int hovered = hover.row >= 0 ? hover.row * n_cols + hover.col : -1;
  explain_parts(hidden.c_str(), n_rows * n_cols, hovered, largest, [&](int i) {
    ImGui::TextUnformatted(cell_text(i / n_cols, i % n_cols, r.sweep.values.data()[i]).c_str());
  });
}


void intervention_list(const AppState& state, AppInputs& next) {
  const InterventionTexts t = intervention_texts(state);
  if (t.entries.empty() && t.note.empty()) return;
  ImGui::Spacing();
  ImGui::TextUnformatted("Your changes inside the model");
  publish_item_rect("interventions");
  for (const InterventionEntry& e : t.entries) {
    ImGui::PushID(static_cast<int>(e.kind) * 1000 + e.index);
    if (ImGui::SmallButton("undo")) remove_intervention(next, e);
    ImGui::PopID();
    ImGui::SameLine();
    ImGui::TextWrapped("%s", e.text.c_str());
  }
  if (t.entries.size() > 1 && ImGui::SmallButton("Undo all")) {
    next.ablate.clear();
    next.cuts.clear();
    next.patch = PatchSpec{};
  }
  if (!t.effect.empty()) paragraph(t.effect.c_str());
  if (!t.restored.empty()) paragraph(t.restored.c_str());
  if (!t.note.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, warning_color());
    paragraph(t.note.c_str());
    ImGui::PopStyleColor();
  }
}

void next_token_strip(const AppState& state, AppInputs& next) {
  const std::vector<NextTokenRow> rows = next_tokens(state);
  const NextStripTexts texts = next_strip_texts(state);
  if (rows.empty()) {
    if (!texts.prompt.empty()) {
      hint(texts.prompt.c_str());
      publish_item_rect("next");
    }
    return;
  }
  ImGui::TextWrapped("%s", texts.title.c_str());
  publish_item_rect("next");
  explain_item(texts.note.c_str());
  if (!texts.trained_here.empty()) hint(texts.trained_here.c_str());
  if (!texts.write.empty()) hint(texts.write.c_str());
  const LoadedModel* m = current_loaded_model(state);
  int clicked = -1;
  const float font = ImGui::GetFontSize(), line = ImGui::GetTextLineHeight();
  const ImGuiStyle& style = ImGui::GetStyle();
  const float avail = ImGui::GetContentRegionAvail().x;
  const float number_width = ImGui::CalcTextSize("100.0%").x + style.ItemSpacing.x;
  const float label_width = std::min(font * 6.0f, avail * 0.4f);
  const float bar_width = std::clamp(avail - label_width - number_width - style.ItemSpacing.x, font * 2.0f, font * 10.0f);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  int hovered_row = -1;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::PushID(static_cast<int>(i));
    // a button where a click writes the token (keyboard: focus it and press Enter), else a plain row
    if (texts.writes ? ImGui::InvisibleButton("##write", ImVec2(label_width + bar_width + number_width, line))
                     : (ImGui::Dummy(ImVec2(label_width + bar_width + number_width, line)), false))
      clicked = static_cast<int>(i);
    ImGui::PopID();
    if (texts.writes) publish_item_rect(("next:" + std::to_string(i)).c_str());
    if (ImGui::IsItemHovered()) hovered_row = static_cast<int>(i);
    const std::string label = fit_text(rows[i].text, label_width - style.ItemSpacing.x);
    const float lw = ImGui::CalcTextSize(label.c_str()).x;
    dl->AddText(ImVec2(p.x + label_width - style.ItemSpacing.x - lw, p.y), ImGui::GetColorU32(ImGuiCol_Text), label.c_str());
    const ImVec2 a(p.x + label_width, p.y + line * 0.15f), b(a.x + bar_width, p.y + line * 0.85f);
    dl->AddRectFilled(a, b, ImGui::GetColorU32(ImGuiCol_FrameBg));
    dl->AddRectFilled(a, ImVec2(a.x + bar_width * std::clamp(rows[i].p, 0.0f, 1.0f), b.y),
                      color_sequential(0.35f + 0.65f * rows[i].p));
    char pct[16];
    std::snprintf(pct, sizeof pct, "%.1f%%", static_cast<double>(rows[i].p) * 100.0);
    dl->AddText(ImVec2(b.x + style.ItemSpacing.x, p.y), ImGui::GetColorU32(ImGuiCol_Text), pct);
  }
  explain_parts("##next_tokens", static_cast<int>(rows.size()), hovered_row, -1, [&](int i) {
    const NextTokenRow& row = rows[static_cast<std::size_t>(i)];
    ImGui::Text("Token %d, “%s”: probability %.4f", row.id, row.text.c_str(), static_cast<double>(row.p));
  });
  if (clicked >= 0 && m) {  // the text grows by the token; its new last token is selected
    const std::string text = shown_inputs(state).sentence + m->tokenizer->decode({rows[static_cast<std::size_t>(clicked)].id});
    try {
      next.token = static_cast<int>(model_token_ids(*m, text).size()) - 1;
      next.sentence = text;
    } catch (const std::invalid_argument&) {
      next.sentence = text;  // past what the model reads: refused, with its message under the text box
    }
  }
  intervention_list(state, next);
}

}  // namespace attn::ui
