// The break view: the lesson's Break exercise, scores with and without ÷√d side by side, and why the
// unscaled rows go one-hot and stop passing gradient back. Not the experiment: core/break_experiment.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../api/compute_json.h"
#include "layout.h"
#include "panels.h"
#include "widgets.h"

namespace attn::ui {

namespace {

constexpr float kOneHotThreshold = 0.99f;  // the experiment's "almost one-hot" line (break_experiment.h)

// "1.2 × 10⁻¹⁷": a gradient norm spans twenty orders of magnitude, so it is shown as a power of ten.
std::string scientific_text(double v) {
  if (v == 0) return "0";
  if (!std::isfinite(v)) return "—";
  int exponent = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  double mantissa = v / std::pow(10.0, exponent);
  if (std::fabs(mantissa) >= 9.95) {  // 9.97 would print as "10.0"
    mantissa /= 10;
    ++exponent;
  }
  char buf[64];
  if (exponent == 0) {
    std::snprintf(buf, sizeof buf, "%.1f", mantissa);
    return buf;
  }
  static const char* const kSuperscriptDigits[10] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
  std::string power = exponent < 0 ? "⁻" : "";
  for (char c : std::to_string(std::abs(exponent))) power += kSuperscriptDigits[c - '0'];
  std::snprintf(buf, sizeof buf, "%.1f × 10%s", mantissa, power.c_str());
  return buf;
}

std::string times_text(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof buf, ratio >= 10 ? "%.0f×" : "%.1f×", ratio);
  return buf;
}

// [SECTION] Controls

void draw_break_controls(const AppState& state, AppInputs& next) {
  const float font = ImGui::GetFontSize();
  const float slider_width = std::min(font * 12.0f, ImGui::GetContentRegionAvail().x);
  ImGui::SetNextItemWidth(slider_width);
  ImGui::SliderInt("##break_d", &next.break_d, 1, 512, "d = %d",
                   ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp);
  publish_item_rect("break:d");
  explain_item("d: the length of each query and key vector");
  for (int preset : {2, 8, 64, 512}) {
    const std::string label = std::to_string(preset);
    same_line_if_fits(ImGui::CalcTextSize(label.c_str()).x + ImGui::GetStyle().FramePadding.x * 2);
    const bool current = state.inputs.break_d == preset;
    if (current) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
    if (ImGui::Button(label.c_str())) next.break_d = preset;
    if (current) ImGui::PopStyleColor();
    publish_item_rect(("break:d" + label).c_str());
  }

  ImGui::SetNextItemWidth(slider_width);
  ImGui::SliderInt("##break_T", &next.break_T, 1, 64, "T = %d tokens", ImGuiSliderFlags_AlwaysClamp);
  publish_item_rect("break:T");
  explain_item("T: how many tokens (rows of q and of k)");
  same_line_if_fits(font * 11.0f);
  ImGui::SetNextItemWidth(font * 7.0f);
  if (ImGui::InputInt("seed", &next.break_seed)) next.break_seed = std::clamp(next.break_seed, 0, 1000000);
  publish_item_rect("break:seed");
  explain_item("Another seed draws other random q, k and g");

  if (ImGui::Button("Lesson's setting: d = 512, T = 64")) {
    next.break_d = 512;
    next.break_T = 64;
  }
  publish_item_rect("break:lesson");
}

// [SECTION] The comparison table

void draw_stats_table(const BreakResult& r, float width) {
  const ImGuiTableFlags flags =
      ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("##break_stats", 3, flags, ImVec2(width, 0))) return;
  ImGui::PushTextWrapPos(0.0f);  // in a cell: wrap at the column's edge, not the view's
  ImGui::TableSetupColumn("##measure", ImGuiTableColumnFlags_WidthStretch, 1.8f);
  ImGui::TableSetupColumn("÷√d (scaled)", ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableSetupColumn("no ÷√d", ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableHeadersRow();

  char label[160];
  const auto row = [](const char* what, const char* detail, const std::string& scaled, const std::string& unscaled) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextWrapped("%s", what);
    if (detail) hint(detail);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(scaled.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(unscaled.c_str());
  };
  const auto percent = [](double share) { return number_text(static_cast<float>(100.0 * share), 0) + " %"; };
  const auto plain = [](double v, int decimals) { return number_text(static_cast<float>(v), decimals); };

  std::snprintf(label, sizeof label, "√d = √%d ≈ %.1f expected without ÷√d", r.d, std::sqrt(static_cast<double>(r.d)));
  row("spread of the scores (std)", label, plain(r.scaled.score_std, 2), plain(r.unscaled.score_std, 2));
  row("rows almost one-hot", "largest weight > 0.99", percent(r.scaled.frac_one_hot), percent(r.unscaled.frac_one_hot));
  std::snprintf(label, sizeof label, "in nats; evenly spread: log T = %.2f, one-hot: 0",
                std::log(static_cast<double>(r.T)));
  row("mean entropy of a row", label, plain(r.scaled.mean_entropy, 2), plain(r.unscaled.mean_entropy, 2));
  row("median row gradient, to the softmax input", "what a row sends back to the scores its softmax saw (q·k/√d or q·k)",
      scientific_text(r.scaled.median_row_grad), scientific_text(r.unscaled.median_row_grad));
  row("smallest row gradient, to the softmax input", nullptr, scientific_text(r.scaled.min_row_grad),
      scientific_text(r.unscaled.min_row_grad));
  std::snprintf(label, sizeof label, "one step further back, to q·k itself: the scaled side is also divided by √%d", r.d);
  row("median row gradient, to the raw q·k", label, scientific_text(r.scaled.median_row_grad_raw),
      scientific_text(r.unscaled.median_row_grad_raw));
  row("total gradient into q", "all rows together, |dL/dq|: what training actually moves",
      scientific_text(r.scaled.q_grad_norm), scientific_text(r.unscaled.q_grad_norm));
  ImGui::PopTextWrapPos();
  ImGui::EndTable();
}

void draw_verdict(const BreakResult& r, const BreakRatioRange& range) {
  const double ratio = break_gradient_ratio(r, false), ratio_raw = break_gradient_ratio(r, true);
  const double root_d = std::sqrt(static_cast<double>(r.d));
  char text[600];
  if (ratio < 0)
    std::snprintf(text, sizeof text,
                  "With T = 1 a row holds a single weight, always exactly 1: no row can learn either way.");
  else if (r.d == 1)
    std::snprintf(text, sizeof text, "At d = 1, √d = 1: dividing by it changes nothing. Try d = 512.");
  else if (range.min >= 1.5)
    std::snprintf(text, sizeof text,
                  "Without ÷√d the typical row sends %s to %s less gradient back to its softmax input (seeds %d–%d; "
                  "median %s). This draw (seed %d): %.0f %% of the rows almost one-hot, %s less.",
                  times_text(range.min).c_str(), times_text(range.max).c_str(), static_cast<int>(range.first_seed),
                  static_cast<int>(range.first_seed) + range.seeds - 1, times_text(range.median).c_str(),
                  static_cast<int>(r.seed), 100.0 * r.unscaled.frac_one_hot, times_text(ratio).c_str());
  else
    std::snprintf(text, sizeof text,
                  "At d = %d the unscaled scores spread only about √%d ≈ %.1f: the weights get sharper (entropy %.2f "
                  "instead of %.2f), but only %.0f %% of the rows are one-hot and the typical row still sends gradient "
                  "back. Try d = 512.",
                  r.d, r.d, root_d, r.unscaled.mean_entropy, r.scaled.mean_entropy, 100.0 * r.unscaled.frac_one_hot);
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_PlotLinesHovered));
  ImGui::TextWrapped("%s", text);
  ImGui::PopStyleColor();
  if (ratio < 0 || r.d == 1 || range.min < 1.5) return;
  std::snprintf(text, sizeof text,
                "Which gradient? Those factors compare each side at its own softmax input. One step further back, at "
                "the raw q·k, the scaled side's gradient is also divided by √d = %.1f, so the gap shrinks to %s–%s "
                "(this draw: %s)%s.",
                root_d, times_text(range.min_raw).c_str(), times_text(range.max_raw).c_str(),
                times_text(ratio_raw).c_str(), range.min_raw < 1.0 ? "; below 1× the unscaled row even sends more" : "");
  paragraph(text);
  std::snprintf(text, sizeof text,
                "And the total gradient into q is not smaller at all without ÷√d (here %s against %s): the few rows "
                "that are not saturated get huge gradients and dominate. Training is then driven by a handful of "
                "rows while the saturated ones are frozen: unstable, not merely slow.",
                scientific_text(r.unscaled.q_grad_norm).c_str(), scientific_text(r.scaled.q_grad_norm).c_str());
  paragraph(text);
}

// [SECTION] Histogram and heatmap of one side

// Bars of how many rows have their largest weight in each bin, coloured as the heatmap colours
// that weight; the dashed line marks 0.99 (right of it: almost one-hot).
void draw_row_max_histogram(const char* id, const std::vector<int>& counts, int y_max, float width) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImGuiStyle& style = ImGui::GetStyle();
  const float font = ImGui::GetFontSize(), line = ImGui::GetTextLineHeight();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), axis = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float height = font * 9.0f;

  const std::string top = std::to_string(y_max), middle = std::to_string(y_max / 2);
  const float tick = font * 0.3f;
  const float left = ImGui::CalcTextSize(top.c_str()).x + tick + style.ItemSpacing.x * 0.5f;
  const float right_pad = ImGui::CalcTextSize("1").x;  // the "1" tick label is centred on the edge
  const ImVec2 plot_min(origin.x + left, origin.y + line + style.ItemSpacing.y);
  const ImVec2 plot_max(origin.x + width - right_pad, origin.y + height - 2.0f * line - style.ItemSpacing.y);
  const float plot_w = plot_max.x - plot_min.x, plot_h = plot_max.y - plot_min.y;
  const auto x_at = [&](float w) { return plot_min.x + plot_w * w; };
  const auto y_at = [&](float count) { return plot_max.y - plot_h * count / static_cast<float>(y_max); };

  ImGui::InvisibleButton(id, ImVec2(width, height));
  dl->AddText(ImVec2(origin.x, origin.y), text, "rows");
  for (int b = 0; b < kHistogramBins; ++b) {
    if (counts[b] == 0) continue;
    const float lo = static_cast<float>(b) / kHistogramBins, hi = static_cast<float>(b + 1) / kHistogramBins;
    dl->AddRectFilled(ImVec2(x_at(lo) + 1, y_at(static_cast<float>(counts[b]))), ImVec2(x_at(hi) - 1, plot_max.y),
                      color_sequential((lo + hi) * 0.5f));
  }
  for (float y = plot_min.y; y < plot_max.y; y += font * 0.6f) {  // the 0.99 line, dashed, seen on any bar
    const ImVec2 a(x_at(kOneHotThreshold), y), b(a.x, std::min(y + font * 0.35f, plot_max.y));
    dl->AddLine(a, b, IM_COL32(0, 0, 0, 200), 3.0f);
    dl->AddLine(a, b, IM_COL32(255, 255, 255, 220), 1.0f);
  }

  dl->AddLine(plot_min, ImVec2(plot_min.x, plot_max.y), axis);
  dl->AddLine(ImVec2(plot_min.x, plot_max.y), plot_max, axis);
  for (int v : {0, y_max / 2, y_max}) {
    if (v == y_max / 2 && (y_max < 4)) continue;
    const std::string s = std::to_string(v);
    const float y = y_at(static_cast<float>(v));
    dl->AddLine(ImVec2(plot_min.x - tick, y), ImVec2(plot_min.x, y), axis);
    dl->AddText(
        ImVec2(plot_min.x - tick - style.ItemSpacing.x * 0.5f - ImGui::CalcTextSize(s.c_str()).x, y - line * 0.5f),
        text, s.c_str());
  }
  const bool narrow = plot_w < ImGui::CalcTextSize("0.25").x * 7.0f;
  for (float w : {0.0f, 0.25f, 0.5f, 0.75f, 1.0f}) {
    if (narrow && (w == 0.25f || w == 0.75f)) continue;
    const std::string s = w == 0.0f ? "0" : w == 1.0f ? "1" : number_text(w, 2);
    const float x = x_at(w);
    dl->AddLine(ImVec2(x, plot_max.y), ImVec2(x, plot_max.y + tick), axis);
    dl->AddText(ImVec2(x - ImGui::CalcTextSize(s.c_str()).x * 0.5f, plot_max.y + tick), text, s.c_str());
  }
  const char* x_label = "largest weight in a row";
  dl->AddText(ImVec2(plot_min.x + (plot_w - ImGui::CalcTextSize(x_label).x) * 0.5f, plot_max.y + tick + line), text,
              x_label);

  int hovered_bin = -1;
  if (ImGui::IsItemHovered()) {
    const float w = (ImGui::GetIO().MousePos.x - plot_min.x) / plot_w;
    if (w >= 0 && w <= 1) hovered_bin = std::min(static_cast<int>(w * kHistogramBins), kHistogramBins - 1);
  }
  explain_parts(id, kHistogramBins, hovered_bin, -1, [&](int b) {
    ImGui::Text("largest weight %.2f – %.2f: %d rows", static_cast<double>(b) / kHistogramBins,
                static_cast<double>(b + 1) / kHistogramBins, counts[b]);
  });
}

void draw_weight_heatmap(const char* id, const Matrix& weights, float width) {
  const int T = static_cast<int>(weights.rows());
  HeatmapStyle style;
  const float side = std::min(width, ImGui::GetFontSize() * 22.0f);  // whole pattern visible without scrolling far
  style.cell = std::clamp(std::floor(side / static_cast<float>(T)), 1.0f, ImGui::GetFontSize() * 2.6f);
  style.show_values = style.cell >= ImGui::GetFontSize() * 2.2f;  // only a handful of tokens: numbers fit
  const HeatmapHover hover = heatmap(id, weights.data(), T, T, style);
  explain_parts(id, T * T, hover.row >= 0 ? hover.row * T + hover.col : -1, -1, [&](int cell) {
    ImGui::Text("query %d, key %d: weight %.4f", cell / T + 1, cell % T + 1, static_cast<double>(weights(cell / T, cell % T)));
  });
}

// One side of the comparison: its title, histogram and weight matrix, in a column `width` wide.
void draw_side(const char* title, const char* id, const std::vector<int>& histogram, int y_max, const Matrix& weights,
               float width) {
  ImGui::TextUnformatted(title);
  ImGui::PushID(id);
  draw_row_max_histogram("##histogram", histogram, y_max, width);
  ImGui::Spacing();
  const int T = static_cast<int>(weights.rows());
  char caption[96];
  std::snprintf(caption, sizeof caption, "weights (T, T) = (%d, %d): a row per query", T, T);
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
  hint(caption);
  ImGui::PopTextWrapPos();
  draw_weight_heatmap("##weights", weights, width);
  ImGui::PopID();
}

// [SECTION] Why

void draw_explanation(const BreakResult& r) {
  ImGui::Separator();
  ImGui::TextUnformatted("Why it happens");
  char text[640];
  std::snprintf(text, sizeof text,
                "1. The scores grow with d. Every entry of q and k has variance 1, and a score q·k adds up d = %d "
                "such products, so its variance is d and its spread (std) is √d = %.1f. Measured here without "
                "÷√d: %.1f.",
                r.d, std::sqrt(static_cast<double>(r.d)), r.unscaled.score_std);
  paragraph(text);
  std::snprintf(text, sizeof text,
                "2. Softmax all but crowns one winner. It weighs scores through exp, so two scores only 5 apart already "
                "get weights about 150 times apart. With scores spread by about %.0f, nearly all of a row's "
                "weight goes to its largest score: the row is almost one-hot.",
                r.unscaled.score_std);
  paragraph(text);
  paragraph(
      "3. A one-hot row stops learning. On the way back, softmax gives score i the gradient "
      "wᵢ(gᵢ − Σⱼ wⱼgⱼ), with g the gradient arriving at the weights. If one weight is ≈ 1 and the rest "
      "≈ 0, the winner's bracket is ≈ gᵢ − gᵢ = 0 and every other term is multiplied by a weight ≈ 0. "
      "Almost nothing flows back to the scores, so the row cannot learn to look at another token.");
  std::snprintf(text, sizeof text,
                "4. Dividing by √d brings the spread back to about 1 (measured: %.2f). Softmax then spreads the "
                "weight over several keys and every row keeps sending gradient back.",
                r.scaled.score_std);
  paragraph(text);
}

}  // namespace

void draw_break_panel(const AppState& state, Action& action, UiState&) {
  AppInputs& next = action.inputs;
  const BreakResult& r = state.model.saturation;
  const float view_width = ImGui::GetContentRegionAvail().x;
  panel_intro(
      "The lesson's Break exercise: random q, k of shape (T, d) drawn from N(0, 1), scored with and "
      "without ÷√d. Try d = 2, then d = 512.");
  // With little height (a small embed, a phone on its side) the pictures come first, the controls after.
  const bool pictures_first = layout().short_height;
  if (!pictures_first) {
    draw_break_controls(state, next);
    ImGui::Spacing();
    draw_stats_table(r, view_width);
    draw_verdict(r, state.model.saturation_range);
    ImGui::Spacing();
  }

  const std::vector<int> histogram_scaled = row_max_histogram(r.row_max_scaled),
                         histogram_unscaled = row_max_histogram(r.row_max_unscaled);
  int y_max = 1;  // one scale for both, so the bars can be compared
  for (int c : histogram_scaled) y_max = std::max(y_max, c);
  for (int c : histogram_unscaled) y_max = std::max(y_max, c);

  const float font = ImGui::GetFontSize(), gap = font * 1.5f;
  const float avail = ImGui::GetContentRegionAvail().x;
  const bool side_by_side = (avail - gap) * 0.5f >= font * 14.0f;
  const float column = side_by_side ? (avail - gap) * 0.5f : std::min(avail, font * 24.0f);
  const float left_x = ImGui::GetCursorPosX();
  const float top_y = ImGui::GetCursorPosY();
  ImGui::BeginGroup();
  draw_side("÷√d (scaled)", "scaled", histogram_scaled, y_max, r.weights_scaled, column);
  ImGui::EndGroup();
  publish_picture_rect(View::Break);
  if (side_by_side) {
    ImGui::SetCursorPos(ImVec2(left_x + column + gap, top_y));
  } else {
    ImGui::Spacing();
  }
  ImGui::BeginGroup();
  draw_side("no ÷√d (unscaled)", "unscaled", histogram_unscaled, y_max, r.weights_unscaled, column);
  ImGui::EndGroup();
  HeatmapStyle legend_style;
  legend("weight", legend_style, std::min(font * 10.0f, avail * 0.4f));
  hint("The dashed line in each histogram marks 0.99: rows to its right are almost one-hot.");
  if (pictures_first) {
    ImGui::Spacing();
    draw_break_controls(state, next);
    ImGui::Spacing();
    draw_stats_table(r, view_width);
    draw_verdict(r, state.model.saturation_range);
  }
  draw_explanation(r);
}

}  // namespace attn::ui
