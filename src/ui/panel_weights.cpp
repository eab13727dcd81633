// The weights view: the attention matrix A as a live heatmap, each cell's arithmetic on hover, the
// row sums, and the selected row as bars. Not the maths: every number is read from the trace or
// from state.views.weights (each cell's exp and softmax line, the row sums: view_numbers.h).
//
// [SECTION] Cell arithmetic (the hover tooltip)
// [SECTION] Layout helpers
// [SECTION] The pieces of the view: row sums, selected row as bars
// [SECTION] Weights are not influence: the value-weighted and rollout readings
// [SECTION] Cutting a link
// [SECTION] The view
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "../core/head_summary.h"
#include "../state/weights_view.h"
#include "layout.h"
#include "model_ui.h"
#include "panels.h"
#include "widgets.h"

namespace attn::ui {

namespace {

// [SECTION] Cell arithmetic (the hover tooltip)

constexpr float kRowSumTolerance = 0.005f;  // a row sum that prints as 1.00 is fine

std::string num(double v, int decimals = 3) { return number_text(static_cast<float>(v), decimals); }

// One line of a tooltip's arithmetic table: the step's name, then its numbers.
void step_row(const char* name, const std::string& arithmetic, bool is_mistake = false) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextDisabled("%s", name);
  ImGui::TableNextColumn();
  if (is_mistake)
    ImGui::TextColored(warning_color(), "%s", arithmetic.c_str());
  else
    ImGui::TextUnformatted(arithmetic.c_str());
}

// The scaling steps: ÷ √d (unless switched off or "forgotten") and ÷ temperature (unless it is 1).
void scaling_rows(const AppState& state, double raw, double scaled) {
  const AttentionTrace& t = state.model.trace;
  const int d = static_cast<int>(t.key.cols());
  const float temperature = state.inputs.temperature;
  const bool forgot = state.inputs.mistake == Mistake::ForgetScale && state.inputs.scale;
  double so_far = raw;
  if (state.inputs.scale && !forgot) {
    const double root = std::sqrt(static_cast<double>(d));
    so_far = raw / root;
    step_row("÷ √d", num(raw) + " ÷ √" + std::to_string(d) + " (= " + num(root, 2) + ") = " + num(so_far));
  } else if (forgot) {
    step_row("÷ √d", "skipped: the \"forget the scale\" mistake is on", true);
  } else {
    step_row("÷ √d", "skipped: switched off in the controls");
  }
  if (temperature != 1.0f) step_row("÷ temperature", num(so_far) + " ÷ " + num(temperature, 2) + " = " + num(scaled));
  step_row("scaled score", num(scaled) + "   (raw score × " + num(t.score_factor) + ")");
}

// The explanation of cell (row, col): how its weight came out of q and k, step by step.
void cell_explanation(const AppState& state, int row, int col) {
  const AttentionTrace& t = state.model.trace;
  const std::string query = in_quotes(state.model.queries.tokens[row].text);
  const std::string key = in_quotes(state.model.keys.tokens[col].text);
  const Mistake mistake = state.inputs.mistake;
  const float wrap = explanation_wrap(26.0f);
  ImGui::Text("%s (row %d, query) looking at %s (column %d, key)", query.c_str(), row + 1, key.c_str(), col + 1);
  ImGui::Separator();
  ImGui::PushTextWrapPos(wrap);

  const double raw = t.raw_scores(row, col), scaled = t.scaled_scores(row, col), seen = t.masked_scores(row, col);
  if (link_cut(t, row, col)) {
    ImGui::Text("Cut by you: %s may not look at %s here. Its score becomes −∞ before the softmax, as a mask would "
                "make it, so its weight is exactly 0 and the row's other weights grow to sum to 1 again.",
                query.c_str(), key.c_str());
    ImGui::TextDisabled("(Its raw score q·k = %s; undo the cut below the matrix.)", num(raw).c_str());
    ImGui::PopTextWrapPos();
    return;
  }
  if (!std::isfinite(seen)) {
    ImGui::Text(
        "Hidden by the causal mask: %s comes after %s, so its score becomes −∞ before the softmax. "
        "exp(−∞) is exactly 0, so this weight is exactly 0, not just small.",
        key.c_str(), query.c_str());
    ImGui::TextDisabled("(Its raw score q·k = %s was computed, then thrown away.)", num(raw).c_str());
    ImGui::PopTextWrapPos();
    return;
  }
  ImGui::PopTextWrapPos();

  const bool by_column = mistake == Mistake::SoftmaxWrongAxis;
  const WeightsNumbers& n = state.views.weights;
  const std::size_t line = static_cast<std::size_t>(n.by_column ? col : row);
  const std::string axis = by_column ? "column" : "row";
  const double e = n.exps(row, col), weight = n.softmax(row, col);
  const bool zeroed_after = key_hidden_by_mask(t, row, col);  // the "mask after softmax" mistake
  const bool in_column = explanation_in_column();
  if (ImGui::BeginTable("##steps", 2, in_column ? ImGuiTableFlags_None : ImGuiTableFlags_SizingFixedFit)) {
    if (in_column) {  // the arithmetic wraps in what the names leave
      ImGui::TableSetupColumn("step", ImGuiTableColumnFlags_WidthFixed, ImGui::CalcTextSize("exp(s − row max)").x);
      ImGui::TableSetupColumn("arithmetic", ImGuiTableColumnFlags_WidthStretch);
    }
    if (mistake == Mistake::SwapKeysValues)
      step_row("raw score", "q·v = " + num(raw) + "   (matched against the value!)", true);
    else
      step_row("raw score", "q·k = " + num(raw));
    scaling_rows(state, raw, scaled);
    if (seen != scaled)  // only the "mask with 0" mistake changes a finite score
      step_row("causal mask", num(scaled) + " → " + num(seen) + "   (should be −∞)", true);
    step_row(("exp(s − " + axis + " max)").c_str(), "exp(" + num(seen) + " − " + num(n.line_max[line]) + ") = " + num(e));
    step_row(("÷ " + axis + " sum").c_str(), num(e) + " ÷ " + num(n.line_sum_of_exps[line]) + " = " + num(weight));
    if (zeroed_after) step_row("mask, too late", num(weight) + " → 0", true);
    step_row("weight", num(t.weights(row, col)));
    ImGui::EndTable();
  }
  ImGui::TextDisabled("The %s sum adds up the exps of every %s in this %s.", axis.c_str(), by_column ? "query" : "key",
                      axis.c_str());

  ImGui::PushTextWrapPos(wrap);
  ImGui::PushStyleColor(ImGuiCol_Text, warning_color());
  if (by_column)
    ImGui::TextUnformatted(
        "Mistake: the softmax ran down each column (over the queries), so the rows no "
        "longer add up to 1.");
  if (seen != scaled)
    ImGui::TextUnformatted(
        "Mistake: the mask wrote 0 instead of −∞. exp(0 − max) is not 0, so this future "
        "key still gets a share.");
  if (zeroed_after)
    ImGui::TextUnformatted(
        "Mistake: the mask came after the softmax. This future key already took its part "
        "of the row sum, then was set to 0, so the row adds up to less than 1.");
  ImGui::PopStyleColor();
  ImGui::PopTextWrapPos();
}

// What to look for in the matrix when a mistake is switched on.
const char* mistake_symptom(Mistake mistake) {
  switch (mistake) {
    case Mistake::None:
      return "";
    case Mistake::ForgetScale:
      return "without ÷ √d the scores are too far apart and rows turn nearly one-hot.";
    case Mistake::SoftmaxWrongAxis:
      return "each column adds up to 1 instead of each row; see the sums.";
    case Mistake::MaskAfterSoftmax:
      return "rows with hidden keys add up to less than 1; see the sums.";
    case Mistake::MaskWithZero:
      return "later keys got a score of 0 instead of −∞, so they still take weight.";
    case Mistake::SwapKeysValues:
      return "the query is matched against the values; hover a cell.";
  }
  return "";
}

// [SECTION] Layout helpers

// Axis labels for cells `cell` pixels apart: all of them when they fit, else every k-th one and
// always the selected one (`keep`), so that no two labels overlap.
std::vector<std::string> spaced_labels(const std::vector<std::string>& labels, float cell, float max_width, int keep) {
  const int count = static_cast<int>(labels.size());
  const int stride = std::max(1, static_cast<int>(std::ceil(ImGui::GetTextLineHeight() / cell)));
  std::vector<std::string> out(labels.size());
  for (int i = 0; i < count; ++i) {
    const bool near_keep = keep >= 0 && i != keep && std::abs(i - keep) < stride;
    if (i == keep || (i % stride == 0 && !near_keep)) out[i] = fit_text(labels[i], max_width);
  }
  return out;
}

float widest(const std::vector<std::string>& texts) {
  float w = 0;
  for (const std::string& s : texts) w = std::max(w, ImGui::CalcTextSize(s.c_str()).x);
  return w;
}

// Which query row the mouse is on, given the top of the grid and the cell size (-1: none).
int row_under_mouse(float grid_top, float cell, int rows) {
  const float y = ImGui::GetIO().MousePos.y - grid_top;
  if (y < 0) return -1;
  const int row = static_cast<int>(y / cell);
  return row < rows ? row : -1;
}

// [SECTION] The pieces of the view: row sums, selected row as bars

// The column right of the matrix: each row's sum, flagged when it is not 1.
void row_sums_column(const AppState& state, ImVec2 top_left, float header_height, float width, float cell,
                     AppInputs& next) {
  const std::vector<float>& sums = state.views.weights.row_sums;
  const int rows = static_cast<int>(sums.size());
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float line = ImGui::GetTextLineHeight();
  ImVec4 warning = warning_color();
  const ImU32 ok_color = ImGui::GetColorU32(ImGuiCol_TextDisabled), bad_color = ImGui::GetColorU32(warning);
  warning.w = 0.25f;
  const ImU32 bad_background = ImGui::GetColorU32(warning);

  ImGui::SetCursorScreenPos(top_left);
  ImGui::InvisibleButton("##row_sums", ImVec2(width, header_height + cell * rows));
  const bool hovered = ImGui::IsItemHovered(), clicked = ImGui::IsItemClicked();
  const float grid_top = top_left.y + header_height, left = top_left.x + ImGui::GetStyle().ItemSpacing.x;

  const char* header = "sum";
  dl->AddText(ImVec2(left, grid_top - line - ImGui::GetStyle().ItemSpacing.y * 0.5f), ok_color, header);
  for (int i = 0; i < rows; ++i) {
    const float sum = sums[static_cast<std::size_t>(i)];
    const bool off = std::fabs(sum - 1.0f) > kRowSumTolerance;
    const float y = grid_top + cell * i;
    if (cell >= line) {
      const std::string text = number_text(sum, 2);
      const float pad = ImGui::GetFontSize() * 0.12f;
      if (off)
        dl->AddRectFilled(ImVec2(left - pad, y + pad),
                          ImVec2(left + ImGui::CalcTextSize(text.c_str()).x + pad, y + cell - pad), bad_background);
      dl->AddText(ImVec2(left, y + (cell - line) * 0.5f), off ? bad_color : ok_color, text.c_str());
    } else {  // too small for digits: a mark per row, red where the sum is not 1
      dl->AddRectFilled(ImVec2(left, y), ImVec2(left + line, y + std::max(1.0f, cell - 1)),
                        off ? bad_color : ImGui::GetColorU32(ImGuiCol_FrameBg));
    }
  }
  const int row = hovered ? row_under_mouse(grid_top, cell, rows) : -1;
  explain_parts("##row_sums", rows, row, -1, [&](int r) {
    ImGui::Text("Row %s adds up to %s.%s", in_quotes(state.model.queries.tokens[r].text).c_str(),
                number_text(sums[static_cast<std::size_t>(r)], 4).c_str(),
                std::fabs(sums[static_cast<std::size_t>(r)] - 1.0f) > kRowSumTolerance
                    ? "\nA row of weights should add up to exactly 1: a mistake is switched on."
                    : "\nEvery row of weights adds up to 1: a token shares out all of its attention.");
  });
  if (row >= 0 && clicked) next.token = row;
}

// The selected row as one bar per key: "animal ██████ 0.43".
void selected_row_bars(const AppState& state, const std::vector<std::string>& keys) {
  const AttentionTrace& t = state.model.trace;
  const int row = state.inputs.token, cols = static_cast<int>(t.weights.cols());
  const float font = ImGui::GetFontSize(), line = ImGui::GetTextLineHeight();
  const ImGuiStyle& style = ImGui::GetStyle();

  int best = 0;
  for (int j = 1; j < cols; ++j)
    if (t.weights(row, j) > t.weights(row, best)) best = j;
  heading(("How " + in_quotes(state.model.queries.tokens[row].text) + " shares out its attention (row " +
           std::to_string(row + 1) + ")").c_str());
  hint("Bar length = weight. Hover a bar for the arithmetic behind it.");

  std::vector<std::string> labels(keys.size());
  for (int j = 0; j < cols; ++j) labels[j] = fit_text(keys[j], font * 7.0f);
  const float label_width = widest(labels) + style.ItemSpacing.x;
  const float number_width = ImGui::CalcTextSize("0.000").x + style.ItemSpacing.x;
  const float bar_width =
      std::clamp(ImGui::GetContentRegionAvail().x - label_width - number_width, font * 4.0f, font * 22.0f);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), highlight = ImGui::GetColorU32(ImGuiCol_PlotLinesHovered);

  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(style.ItemSpacing.x, font * 0.15f));
  int hovered_bar = -1;
  for (int j = 0; j < cols; ++j) {
    ImGui::PushID(j);
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::InvisibleButton("##bar", ImVec2(label_width + bar_width + number_width, line));
    if (ImGui::IsItemHovered()) hovered_bar = j;
    const ImVec2 label_size = ImGui::CalcTextSize(labels[j].c_str());
    dl->AddText(ImVec2(p.x + label_width - style.ItemSpacing.x - label_size.x, p.y), j == best ? highlight : text,
                labels[j].c_str());
    const ImVec2 track(p.x + label_width, p.y + line * 0.15f), track_end(track.x + bar_width, p.y + line * 0.85f);
    const float w = t.weights(row, j);
    if (key_hidden_by_mask(t, row, j)) {
      draw_masked_cell(dl, track, ImVec2(track.x + font * 1.5f, track_end.y));
      dl->AddText(ImVec2(track.x + font * 2.0f, p.y), ImGui::GetColorU32(ImGuiCol_TextDisabled),
                  link_cut(t, row, j) ? "cut by you" : "hidden (masked)");
    } else {
      dl->AddRectFilled(track, track_end, ImGui::GetColorU32(ImGuiCol_FrameBg));
      dl->AddRectFilled(track, ImVec2(track.x + bar_width * std::clamp(w, 0.0f, 1.0f), track_end.y),
                        color_sequential(0.35f + 0.65f * w));
      dl->AddText(ImVec2(track_end.x + style.ItemSpacing.x, p.y), text, number_text(w, 2).c_str());
    }
    ImGui::PopID();
  }
  ImGui::PopStyleVar();
  explain_parts("##bars", cols, hovered_bar, -1, [&](int j) { cell_explanation(state, row, j); });
}

// Where the selected row rests on the first token and that token's value is short: the sink's
// reading ("look nowhere"), "" elsewhere. Read off the row the view shows (the switches included).

// [SECTION] Weights are not influence: the value-weighted and rollout readings

// Which matrix the view draws (input weights_show); rollout only for a loaded model.
void draw_reading_switch(const AppState& state, AppInputs& next) {
  const bool real = current_loaded_model(state) != nullptr;
  const char* names[] = {"weights α", real ? "α × ‖v·W_O‖ (value-weighted)" : "α × ‖v‖ (value-weighted)",
                         "rollout to this layer"};
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Show:");
  explain_item("A weight says where a query looks, not what it takes: a large weight on a key whose value is small "
               "sends little. Value-weighted: each weight times the length of what its key sends. Rollout: how much of "
               "each token can reach each position through all the layers so far.");
  for (int k = 0; k < (real ? 3 : 2); ++k) {
    same_line_if_fits(button_width(names[k]) + ImGui::GetFrameHeight());
    if (ImGui::RadioButton(names[k], state.inputs.weights_show == static_cast<WeightsShow>(k)))
      next.weights_show = static_cast<WeightsShow>(k);
    publish_item_rect(k == 0 ? "weights:show_weights" : k == 1 ? "weights:show_value_weighted" : "weights:show_rollout");
  }
}

// What the reading shows and assumes, and where it disagrees with the weights on the selected row.
// The hovered cell of a reading: its number and where it comes from.
void reading_cell(const AppState& state, int row, int col) {
  const AppModel::Influence& influence = *state.model.influence;
  const AttentionTrace& t = state.model.trace;
  const std::string query = in_quotes(state.model.queries.tokens[static_cast<std::size_t>(row)].text);
  const std::string key = in_quotes(key_labels(state)[static_cast<std::size_t>(col)]);
  ImGui::Text("%s (row %d) and %s (column %d)", query.c_str(), row + 1, key.c_str(), col + 1);
  ImGui::Separator();
  if (state.inputs.weights_show == WeightsShow::Rollout)
    ImGui::Text("Share of %s in %s's stream after layer %d, by rollout: %s", key.c_str(), query.c_str(),
                state.inputs.layer + 1, number_text(influence.values(row, col), 3).c_str());
  else
    ImGui::Text("weight %s × value length %s = %s", number_text(t.weights(row, col), 3).c_str(),
                number_text(influence.value_norms[col], 3).c_str(), number_text(influence.values(row, col), 3).c_str());
}

// [SECTION] Cutting a link

// A link cut by hand: a cross over the cell's hatching, in the warning colour.
void draw_cut_mark(ImDrawList* dl, ImVec2 a, ImVec2 b) {
  const float side = std::min(b.x - a.x, b.y - a.y), inset = side * 0.2f;
  const ImVec2 c((a.x + b.x) * 0.5f, (a.y + b.y) * 0.5f), r(side * 0.5f - inset, side * 0.5f - inset);
  const ImU32 red = ImGui::GetColorU32(warning_color());
  const float thick = std::max(1.5f, side * 0.08f);
  dl->AddLine(ImVec2(c.x - r.x, c.y - r.y), ImVec2(c.x + r.x, c.y + r.y), red, thick);
  dl->AddLine(ImVec2(c.x - r.x, c.y + r.y), ImVec2(c.x + r.x, c.y - r.y), red, thick);
}

// The selected query loses one key: in the chosen head, or (a loaded model) in every head of its layer.
// The model answers without the link; the cell is crossed out.
void draw_cut_control(const AppState& state, AppInputs& next, const std::vector<std::string>& queries,
                      const std::vector<std::string>& keys) {
  const AttentionTrace& t = state.model.trace;
  const int row = state.inputs.token, cols = static_cast<int>(t.weights.cols());
  const bool real = current_loaded_model(state) != nullptr;
  if (state.inputs.mistake != Mistake::None) return;  // the cuts are for the right attention
  const int layer = real ? state.inputs.layer : 0;
  ImGui::Spacing();
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(("Cut a link: hide a key from " + in_quotes(queries[static_cast<std::size_t>(row)])).c_str());
  explain_item("The key's score becomes −∞ before the softmax, as the causal mask does it, and the row shares its "
               "weight among the keys left. With a loaded model the whole model then answers without the link (the "
               "next-token strip). A row's last key cannot be cut: a query must see something.");
  const std::string here = real ? "in L" + std::to_string(layer + 1) + " H" + std::to_string(state.inputs.head + 1) : "in this head";
  const std::string all = "in every head of L" + std::to_string(layer + 1);
  for (int scope = 0; scope < (real ? 2 : 1); ++scope) {
    const std::string& label = scope == 0 ? here : all;
    const float width = ImGui::CalcTextSize(label.c_str()).x + ImGui::GetFrameHeight() * 1.5f;
    same_line_if_fits(width);  // (a phone: under the words)
    ImGui::SetNextItemWidth(width);
    ImGui::PushID(scope);
    if (ImGui::BeginCombo("##cut", label.c_str())) {
      for (int j = 0; j < cols; ++j) {
        if (key_hidden_by_mask(t, row, j)) continue;
        ImGui::PushID(j);
        if (ImGui::Selectable(in_quotes(keys[static_cast<std::size_t>(j)]).c_str()))
          next.cuts.push_back({layer, scope == 0 && real ? state.inputs.head : scope == 0 ? 0 : -1, row, j});
        ImGui::PopID();
      }
      ImGui::EndCombo();
    }
    ImGui::PopID();
    publish_item_rect(scope == 0 ? "weights:cut" : "weights:cut_layer");
  }
  if (!real) intervention_list(state, next);
}

}  // namespace


// [SECTION] The view

void draw_weights_panel(const AppState& state, Action& action, UiState&) {
  AppInputs& next = action.inputs;
  const AttentionTrace& t = state.model.trace;
  const int rows = static_cast<int>(t.weights.rows()), cols = static_cast<int>(t.weights.cols());
  const int selected = state.inputs.token;
  const float font = ImGui::GetFontSize();
  const ImGuiStyle& style = ImGui::GetStyle();

  const bool explain = panel_intro("All the attention weights at once; they follow every control.");
  head_banner(state);
  if (explain) paragraph(cross_shown(state)
                      ? "Rows: the query tokens (first sentence), doing the looking. Columns: the key tokens (second "
                        "sentence), being looked at. A row is how one query spreads its attention over the keys."
                      : "Rows: the tokens doing the looking (queries). Columns: the tokens being looked at (keys). "
                        "A row is how one token spreads its attention.");
  if (explain) hint("Click a row or a cell to select its token; hover a cell to see how its number was computed.");
  if (const std::string sink = sink_note(state); !sink.empty()) hint(sink.c_str());
  if (const std::string both_ways = both_ways_note(state); !both_ways.empty()) hint(both_ways.c_str());

  const AppModel::Influence* influence = state.model.influence.get();
  const WeightsShow reading = influence ? state.inputs.weights_show : WeightsShow::Weights;
  if (!layout().short_height) draw_reading_switch(state, next);  // (a small embed: under the matrix, which comes first)
  HeatmapStyle heat;
  heat.range = 1.0f;
  if (reading == WeightsShow::ValueWeighted) heat.range = std::max(1e-6f, influence->values.maxCoeff());
  legend(reading == WeightsShow::ValueWeighted ? "weight × value size" : reading == WeightsShow::Rollout ? "share reaching" : "weight",
         heat, font * 8.0f);
  // the axes in the query and key hues of every view
  const Palette& p = palette();
  // (not in a small embed: there the matrix must fit the height, and its labels carry the hues)
  if (!layout().short_height) {
    const char* rows_are = "rows: queries", *cols_are = "columns: keys";
    same_line_if_fits(ImGui::CalcTextSize(rows_are).x, font * 1.5f);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(color(p.query)), "%s", rows_are);
    same_line_if_fits(ImGui::CalcTextSize(cols_are).x, font);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(color(p.key)), "%s", cols_are);
  }
  if (causal_shown(state)) {
    ImGui::SameLine(0, font * 1.5f);
    masked_legend("hidden by the causal mask");
  }
  if (!t.options.cuts.empty()) {
    const char* caption = "cut by you";
    const float h = ImGui::GetTextLineHeight();
    same_line_if_fits(h * 1.5f + style.ItemSpacing.x + ImGui::CalcTextSize(caption).x, font * 1.5f);
    const ImVec2 at = ImGui::GetCursorScreenPos(), end(at.x + h * 1.5f, at.y + h);
    draw_masked_cell(ImGui::GetWindowDrawList(), at, end);
    draw_cut_mark(ImGui::GetWindowDrawList(), at, end);
    ImGui::Dummy(ImVec2(h * 1.5f, h));
    ImGui::SameLine();
    ImGui::TextUnformatted(caption);
  }

  // Sizes: the cells share what is left of the width once labels and the sums column are placed.
  const std::vector<std::string> queries = query_labels(state), keys = key_labels(state);
  const bool fit_height = layout().short_height;  // a small embed: the whole matrix on screen first
  const float max_label = font * (fit_height ? 4.0f : 6.0f);
  std::vector<std::string> fitted(queries.size());
  for (std::size_t i = 0; i < queries.size(); ++i) fitted[i] = fit_text(queries[i], max_label);
  const float label_width = widest(fitted) + style.ItemSpacing.x;
  const float sums_width = ImGui::CalcTextSize("0.00").x + style.ItemSpacing.x * 2.0f;
  // Cells shrink to fit the width, and to leave room below for the bars, but not below the size
  // that still shows "0.00" unless the width forces it (then the tooltip carries the numbers).
  const float room = ImGui::GetContentRegionAvail().x - label_width - sums_width - style.ItemSpacing.x;
  const float line = ImGui::GetTextLineHeight();
  const float bars_height = (cols + 3) * (line + font * 0.15f);
  const float by_width = room / static_cast<float>(cols);
  // With little height the whole matrix comes first, numbers or not, under its column labels
  // (turned upright, up to max_label long); the bars follow.
  const float by_height = fit_height
      ? (ImGui::GetContentRegionAvail().y - max_label - line * 2.0f) / static_cast<float>(rows)
      : (ImGui::GetContentRegionAvail().y - line * 3.0f - bars_height) / static_cast<float>(rows);
  const float shows_numbers = ImGui::CalcTextSize("0.00").x + font * 0.3f;
  const float cell = std::clamp(std::min(by_width, fit_height ? by_height : std::max(by_height, shows_numbers)),
                                font * 0.4f, font * 2.8f);

  // Masked cells go to the heatmap as −∞ so it hatches them instead of printing a 0.00 look-alike.
  // (Rollout mixes through every layer: only the causal mask's future stays out of reach.)
  Matrix shown = influence ? influence->values : t.weights;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      if (reading == WeightsShow::Rollout ? causal_shown(state) && j > i : key_hidden_by_mask(t, i, j))
        shown(i, j) = -std::numeric_limits<float>::infinity();

  const std::vector<std::string> row_labels = spaced_labels(queries, cell, max_label, selected);
  const std::vector<std::string> col_labels = spaced_labels(keys, cell, max_label, -1);
  heat.cell = cell;
  heat.show_values = true;
  heat.value_decimals = 2;
  heat.highlight_row = selected;
  heat.row_labels = &row_labels;
  heat.col_labels = &col_labels;
  heat.label_width = label_width;
  heat.row_label_color = color(p.query);
  heat.col_label_color = color(p.key);

  ImGui::Spacing();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 size = heatmap_size(rows, cols, heat);
  const float header_height = size.y - cell * rows;
  const HeatmapHover hover = heatmap("##weights", shown.data(), rows, cols, heat);
  publish_picture_rect(View::Weights);
  const bool matrix_hovered = ImGui::IsItemHovered(), matrix_clicked = ImGui::IsItemClicked();
  const ImVec2 after_matrix = ImGui::GetCursorScreenPos();
  const float grid_top = origin.y + header_height;

  // Hovering a cell explains it, a row label offers the row; a click selects the row (and pins the
  // cell's explanation). Parts: the cells row by row, then the row labels. Presentation mode shows
  // where the selected token looks most.
  const int row = matrix_hovered ? row_under_mouse(grid_top, cell, rows) : -1;
  const bool on_label = row >= 0 && hover.row < 0 && ImGui::GetIO().MousePos.x < origin.x + label_width;
  const int cells = rows * cols, token = state.inputs.token;
  int strongest = 0;
  for (int j = 1; j < cols; ++j)
    if (shown(token, j) > shown(token, strongest)) strongest = j;
  explain_parts("##weights", cells + rows, hover.row >= 0 ? hover.row * cols + hover.col : on_label ? cells + row : -1,
                token * cols + strongest, [&](int part) {
                  if (part < cells && reading != WeightsShow::Weights) reading_cell(state, part / cols, part % cols);
                  else if (part < cells) cell_explanation(state, part / cols, part % cols);
                  else ImGui::Text("Click to select %s", in_quotes(queries[part - cells]).c_str());
                });
  if (matrix_hovered && row >= 0) ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
  if (matrix_clicked && row >= 0) next.token = row;

  // the links cut by hand, crossed out over their hatching
  for (const auto& [i, j] : t.options.cuts) {
    const ImVec2 a(origin.x + label_width + cell * static_cast<float>(j), grid_top + cell * static_cast<float>(i));
    draw_cut_mark(ImGui::GetWindowDrawList(), a, ImVec2(a.x + cell - 1.0f, a.y + cell - 1.0f));
  }
  if (reading == WeightsShow::Weights)  // (the other readings' rows need not sum to 1)
    row_sums_column(state, ImVec2(origin.x + size.x, origin.y), header_height, sums_width, cell, next);
  ImGui::SetCursorScreenPos(after_matrix);
  if (layout().short_height) draw_reading_switch(state, next);
  if (reading != WeightsShow::Weights) paragraph(reading_text(state).c_str());
  draw_cut_control(state, next, queries, keys);

  if (state.inputs.mistake != Mistake::None) {
    ImGui::PushStyleColor(ImGuiCol_Text, warning_color());
    const std::string warning = std::string("A mistake is switched on (") + mistake_name(state.inputs.mistake) +
                                "), so these weights are wrong on purpose: " + mistake_symptom(state.inputs.mistake);
    paragraph(warning.c_str());
    ImGui::PopStyleColor();
  }
  ImGui::Spacing();
  ImGui::Separator();
  ImGui::Spacing();
  selected_row_bars(state, keys);
}

}  // namespace attn::ui
