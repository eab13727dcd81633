// The steps view: the lesson's seven steps of attention one at a time, each with a small flow
// diagram (its part lit), its formula, and that formula filled in with the selected token's numbers.
// Not the maths: every number is read from the core's trace or from state.views.steps (the softmax
// row's exps, step 6's row with and without the division by √d: view_numbers.h); this file draws them.
//
// [SECTION] Sizes (the seven steps and the numbers they show: src/state/steps_view.h)
// [SECTION] Small drawing helpers: formula box, heatmap rows, tables
// [SECTION] The flow diagram
// [SECTION] One function per step
// [SECTION] draw_steps_panel
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "../state/steps_view.h"
#include "model_ui.h"
#include "family_panels.h"
#include "panels.h"
#include "widgets.h"

namespace attn::ui {

namespace {

using nlohmann::json;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
// A mistake's note: the theme's warning colour.
ImVec4 mistake_color() { return ImGui::ColorConvertU32ToFloat4(color(palette().warning)); }

// ---------------------------------------------------------------------------------------------
// [SECTION] Sizes (the steps, their formulas and numbers: src/state/steps_view.h)
// ---------------------------------------------------------------------------------------------

std::string shape_text(long long rows, long long cols) {
  return "(" + std::to_string(rows) + ", " + std::to_string(cols) + ")";
}

// Column width that squeezes a wide matrix (a real model's head: 64 columns) into `width` pixels.
float squeezed_cell_width(int cols, float width, float cell) {
  return cols > 16 ? std::min(cell, width / static_cast<float>(cols)) : 0.0f;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Small drawing helpers
// ---------------------------------------------------------------------------------------------

// The width a view may fill. The view scrolls sideways, and such an ImGui window counts the room
// under its vertical scrollbar as free: leave that room out, or text and heatmaps slide under it.
float usable_width() { return ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize; }

// A formula on a tinted band, wrapped to the view's width.
void formula_box(const char* formula) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float pad = ImGui::GetFontSize() * 0.5f;
  const float wrap = std::max(usable_width() - pad * 2.0f, ImGui::GetFontSize() * 8.0f);
  const ImVec2 text_size = ImGui::CalcTextSize(formula, nullptr, false, wrap);
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const ImVec2 end(p.x + text_size.x + pad * 2.0f, p.y + text_size.y + pad * 1.2f);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(p, end, color(palette().box_bg), style.FrameRounding);
  dl->AddRect(p, end, color(palette().accent), style.FrameRounding);
  dl->AddText(nullptr, 0.0f, ImVec2(p.x + pad, p.y + pad * 0.6f), ImGui::GetColorU32(ImGuiCol_Text), formula, nullptr,
              wrap);
  ImGui::Dummy(ImVec2(end.x - p.x, end.y - p.y));
  publish_rect("steps:formula", p, end);  // (tests check its fill follows the theme)
}

void section_heading(const char* text) { heading(text); }

// One heatmap in a row of them: its matrix, an operator drawn before it ("·", "="), a caption under it.
struct RowMap {
  const char* id;
  const Matrix* matrix;
  HeatmapStyle style;
  std::string caption;
  const char* op_before = nullptr;
  const std::vector<std::string>* hover_rows = nullptr;  // names for the tooltip
  const std::vector<std::string>* hover_cols = nullptr;
};

// Heatmaps side by side with their grids' top edges aligned (their column labels differ in
// height), wrapping to a new line when the next one does not fit. Hover a cell for its value.
void heatmap_row(std::vector<RowMap> maps) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float line = ImGui::GetTextLineHeight();
  const float left = ImGui::GetCursorScreenPos().x;
  const float right = left + usable_width();
  std::size_t first = 0;
  while (first < maps.size()) {
    // As many maps as fit on this line (at least one).
    std::size_t last = first;
    float width = 0, header = 0, body = 0;
    for (std::size_t k = first; k < maps.size(); ++k) {
      const RowMap& m = maps[k];
      const ImVec2 size = heatmap_size(static_cast<int>(m.matrix->rows()), static_cast<int>(m.matrix->cols()), m.style);
      const float op = (k > first && m.op_before) ? ImGui::CalcTextSize(m.op_before).x + style.ItemSpacing.x * 2 : 0;
      const float caption = ImGui::CalcTextSize(m.caption.c_str()).x;
      const float w = op + std::max(size.x, caption) + (k > first ? style.ItemSpacing.x * 2 : 0);
      if (k > first && left + width + w > right) break;
      width += w;
      const float cell = m.style.cell > 0 ? m.style.cell : ImGui::GetFrameHeight();
      const float grid_height = cell * static_cast<float>(m.matrix->rows());
      header = std::max(header, size.y - grid_height);
      body = std::max(body, grid_height);
      last = k;
    }
    const float top = ImGui::GetCursorScreenPos().y;
    float x = left;
    for (std::size_t k = first; k <= last; ++k) {
      const RowMap& m = maps[k];
      const int rows = static_cast<int>(m.matrix->rows()), cols = static_cast<int>(m.matrix->cols());
      const ImVec2 size = heatmap_size(rows, cols, m.style);
      const float cell = m.style.cell > 0 ? m.style.cell : ImGui::GetFrameHeight();
      const float own_header = size.y - cell * static_cast<float>(rows);
      if (k > first) x += style.ItemSpacing.x * 2;
      if (k > first && m.op_before) {
        const float op_width = ImGui::CalcTextSize(m.op_before).x;
        const ImVec2 op_pos(x + style.ItemSpacing.x, top + header + (body - line) * 0.5f);
        if (std::string(m.op_before) == "·")  // a text dot is too small to see between two big grids
          ImGui::GetWindowDrawList()->AddCircleFilled(ImVec2(op_pos.x + op_width * 0.5f, op_pos.y + line * 0.5f),
                                                      line * 0.15f, ImGui::GetColorU32(ImGuiCol_Text));
        else
          ImGui::GetWindowDrawList()->AddText(op_pos, ImGui::GetColorU32(ImGuiCol_Text), m.op_before);
        x += op_width + style.ItemSpacing.x * 2;
      }
      ImGui::SetCursorScreenPos(ImVec2(x, top + header - own_header));
      const HeatmapHover hover = heatmap(m.id, m.matrix->data(), rows, cols, m.style);
      explain_parts(m.id, rows * cols, hover.row >= 0 ? hover.row * cols + hover.col : -1, -1, [&](int cell) {
        const int row = cell / cols, col = cell % cols;
        const std::string r = m.hover_rows ? in_quotes((*m.hover_rows)[row]) : "row " + std::to_string(row + 1);
        const std::string c = m.hover_cols ? in_quotes((*m.hover_cols)[col]) : "column " + std::to_string(col + 1);
        const float value = (*m.matrix)(row, col);
        ImGui::Text("%s, %s: %s", r.c_str(), c.c_str(),
                    std::isfinite(value) ? number_text(value, 3).c_str() : "hidden by the causal mask");
      });
      const float caption_width = ImGui::CalcTextSize(m.caption.c_str()).x;
      const float cell_w = m.style.cell_width > 0 ? m.style.cell_width : cell;
      const float grid_left = x + size.x - cell_w * static_cast<float>(cols);
      const float caption_x = std::max(x, grid_left + (cell_w * static_cast<float>(cols) - caption_width) * 0.5f);
      ImGui::GetWindowDrawList()->AddText(ImVec2(caption_x, top + header + body + style.ItemSpacing.y * 0.5f),
                                          ImGui::GetColorU32(ImGuiCol_TextDisabled), m.caption.c_str());
      x += std::max(size.x, caption_x + caption_width - x);
    }
    ImGui::SetCursorScreenPos(ImVec2(left, top));
    ImGui::Dummy(ImVec2(x - left, header + body + line + style.ItemSpacing.y));
    first = last + 1;
  }
}

// Cell size for `cols` cells in `width` pixels, readable but never huge.
float cell_for(float width, int cols) {
  const float font = ImGui::GetFontSize();
  return std::clamp(width / static_cast<float>(std::max(cols, 1)), ImGui::GetTextLineHeight() + 1.0f, font * 2.4f);
}

// A labelled numbers table; scrolls (clipping rows) when it has many rows, and sideways in a box of
// its own where it is wider than the view (a phone). Call end_numbers_table after it, whatever it returned.
bool begin_numbers_table(const char* id, int columns, int rows) {
  begin_sideways_box(id);
  const int visible = 12;
  const float row_height = ImGui::GetTextLineHeight() + ImGui::GetStyle().CellPadding.y * 2.0f;
  ImGuiTableFlags flags = ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                          ImGuiTableFlags_NoHostExtendX;
  ImVec2 outer(0, 0);
  if (rows > visible) {
    flags |= ImGuiTableFlags_ScrollY;
    outer.y = row_height * static_cast<float>(visible + 1.5f);
  }
  if (!ImGui::BeginTable(id, columns, flags, outer)) return false;
  ImGui::TableSetupScrollFreeze(0, 1);
  return true;
}

void end_numbers_table(bool began) {
  if (began) ImGui::EndTable();
  end_sideways_box();
}

void cell_text(const std::string& text, bool strong = false) {
  ImGui::TableNextColumn();
  if (strong)
    ImGui::TextColored(ImGui::GetStyleColorVec4(ImGuiCol_PlotLinesHovered), "%s", text.c_str());
  else
    ImGui::TextUnformatted(text.c_str());
}

// A button that changes one input; publishes its rect for browser tests.
bool action_button(const char* label, const char* published_name) {
  const bool pressed = ImGui::Button(label);
  publish_item_rect(published_name);
  return pressed;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The flow diagram
// ---------------------------------------------------------------------------------------------

enum Part { kX, kQ, kK, kV, kScores, kMask, kSoftmax, kOutput, kPartCount };
enum Edge {
  kXtoQ,
  kXtoK,
  kXtoV,
  kQtoScores,
  kKtoScores,
  kScoresToMask,
  kMaskToSoftmax,
  kSoftmaxToOutput,
  kVtoOutput,
  kEdgeCount
};
constexpr unsigned bit(int i) { return 1u << i; }
constexpr unsigned kAll = ~0u;

struct Lit {
  unsigned parts, edges;
};

// Which boxes and arrows each step is about.
constexpr Lit kLit[kStepCount] = {
    {bit(kX) | bit(kQ) | bit(kK) | bit(kV), bit(kXtoQ) | bit(kXtoK) | bit(kXtoV)},
    {bit(kQ) | bit(kK) | bit(kScores), bit(kQtoScores) | bit(kKtoScores)},
    {bit(kScores) | bit(kSoftmax), bit(kScoresToMask) | bit(kMaskToSoftmax)},
    {bit(kSoftmax) | bit(kV) | bit(kOutput), bit(kSoftmaxToOutput) | bit(kVtoOutput)},
    {kAll, kAll},
    {bit(kQ) | bit(kK) | bit(kScores), bit(kQtoScores) | bit(kKtoScores)},
    {bit(kMask), bit(kScoresToMask) | bit(kMaskToSoftmax)},
};

struct FlowBox {
  std::string name, shape;
  std::string meaning;  // tooltip
  ImVec2 min, max;
  bool one_line = false;  // name and shape on one line (the stacked Q, K, V)
};

void flow_diagram(const AppState& state, int step) {
  const AttentionTrace& t = state.model.trace;
  const float font = ImGui::GetFontSize();
  const long long Tq = t.query.rows(), Tk = t.key.rows(), d = t.key.cols(), dv = t.value.cols();
  FlowBox boxes[kPartCount] = {
      {"X", shape_text(Tq, state.model.queries.x.cols()), "X: the token vectors, one row per token.", {}, {}},
      {"Q", shape_text(Tq, d), "Q = " + projection_formula(state, 'q', "X") + ": one query per token (what it looks for).", {}, {}, true},
      {"K", shape_text(Tk, d), "K = " + projection_formula(state, 'k', "X") + ": one key per token (what it offers for matching).", {}, {}, true},
      {"V", shape_text(Tk, dv), "V = " + projection_formula(state, 'v', "X") + ": one value per token (what it passes on).", {}, {}, true},
      {"scores", shape_text(Tq, Tk), score_formula(state, true) + ": every query against every key.", {}, {}},
      {"mask",
       causal_shown(state) ? "on" : "off",
       "The causal mask: −∞ on the scores of later tokens (switch it in the controls).",
       {},
       {}},
      {"softmax", "A " + shape_text(Tq, Tk), "Softmax along each row: the attention weights A.", {}, {}},
      {"output", shape_text(Tq, dv), "A·V: each token's weighted sum of the values.", {}, {}},
  };

  // Column widths from the texts; the shapes go when the window is too narrow for them, then (a
  // small phone) the arrows shorten, and last the whole picture and its text shrink to the width.
  const float avail = usable_width();
  const int column_of[kPartCount] = {0, 1, 1, 1, 2, 3, 4, 5};
  float scale = 1.0f;  // of the text and the boxes
  const auto text_width = [&](const std::string& text) { return ImGui::CalcTextSize(text.c_str()).x * scale; };
  auto box_width = [&](const FlowBox& b, bool shapes) {
    const float pad = font * 0.4f * scale;
    if (!shapes) return text_width(b.name) + pad * 2.0f;
    if (b.one_line) return text_width(b.name + " " + b.shape) + pad * 2.0f;
    return std::max(text_width(b.name), text_width(b.shape)) + pad * 2.0f;
  };
  float column_width[6] = {};
  const auto measure_columns = [&](bool shapes) {
    std::fill(std::begin(column_width), std::end(column_width), 0.0f);
    for (int p = 0; p < kPartCount; ++p)
      column_width[column_of[p]] = std::max(column_width[column_of[p]], box_width(boxes[p], shapes));
    return std::accumulate(std::begin(column_width), std::end(column_width), 0.0f);
  };
  const float shortest_gap = font * 0.8f;
  bool shapes = measure_columns(true) + font * 1.4f * 5.0f <= avail;
  if (!shapes) {
    const float widths = measure_columns(false);
    if (widths + shortest_gap * 5.0f > avail) {
      scale = std::max(0.6f, avail / (widths + shortest_gap * 5.0f));
      measure_columns(false);
    }
  }
  const float line = ImGui::GetTextLineHeight() * scale, pad = font * 0.4f * scale, text_size = font * scale;
  const float widths = std::accumulate(std::begin(column_width), std::end(column_width), 0.0f);
  const float gap = std::clamp((avail - widths) / 5.0f, shortest_gap * scale, font * 3.5f);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  float column_x[6];
  column_x[0] = origin.x + std::max(0.0f, (avail - widths - gap * 5.0f) * 0.5f);
  for (int c = 1; c < 6; ++c) column_x[c] = column_x[c - 1] + column_width[c - 1] + gap;

  // Q, K, V are stacked one line each; the other boxes are two lines (name, shape), level with
  // the middle of Q and K so the V → output arrow can pass underneath them.
  const float small_h = line + pad * 1.2f, stack_gap = font * 0.4f;
  const float big_h = shapes ? line * 2.0f + pad * 1.2f : small_h;
  const float height = small_h * 3.0f + stack_gap * 2.0f;
  const float middle = origin.y + small_h + stack_gap * 0.5f;
  for (int p = 0; p < kPartCount; ++p) {
    FlowBox& b = boxes[p];
    const float x = column_x[column_of[p]], w = column_width[column_of[p]];
    if (p == kQ || p == kK || p == kV) {
      const float y = origin.y + static_cast<float>(p - kQ) * (small_h + stack_gap);
      b.min = ImVec2(x, y);
      b.max = ImVec2(x + w, y + small_h);
    } else {
      const float center = p == kX ? origin.y + height * 0.5f : middle;
      b.min = ImVec2(x, center - big_h * 0.5f);
      b.max = ImVec2(x + w, center + big_h * 0.5f);
    }
  }

  ImDrawList* dl = ImGui::GetWindowDrawList();
  const Lit lit = kLit[step];
  const Palette& pal = palette();
  const ImU32 lit_color = color(pal.accent), dim_color = color(pal.box_border);
  // Q, K and V keep their own hue here too: their boxes' borders and the arrows into them
  auto hue_of = [&](int part) -> const Rgb* {
    return part == kQ ? &pal.query : part == kK ? &pal.key : part == kV ? &pal.value : nullptr;
  };
  const float thick = std::max(1.5f, font * 0.1f);
  auto edge_color = [&](Edge e) { return (lit.edges & bit(e)) ? lit_color : dim_color; };
  auto left_mid = [](const FlowBox& b) { return ImVec2(b.min.x, (b.min.y + b.max.y) * 0.5f); };
  auto right_mid = [](const FlowBox& b) { return ImVec2(b.max.x, (b.min.y + b.max.y) * 0.5f); };
  for (Part p : {kQ, kK, kV})
    arrow(dl, right_mid(boxes[kX]), left_mid(boxes[p]),
          (lit.edges & bit(static_cast<Edge>(kXtoQ + (p - kQ)))) ? color(*hue_of(p)) : dim_color, thick);
  const float score_left = boxes[kScores].min.x, score_mid = (boxes[kScores].min.y + boxes[kScores].max.y) * 0.5f;
  arrow(dl, right_mid(boxes[kQ]), ImVec2(score_left, score_mid - line * 0.25f), edge_color(kQtoScores), thick);
  arrow(dl, right_mid(boxes[kK]), ImVec2(score_left, score_mid + line * 0.25f), edge_color(kKtoScores), thick);
  arrow(dl, right_mid(boxes[kScores]), left_mid(boxes[kMask]), edge_color(kScoresToMask), thick);
  arrow(dl, right_mid(boxes[kMask]), left_mid(boxes[kSoftmax]), edge_color(kMaskToSoftmax), thick);
  arrow(dl, right_mid(boxes[kSoftmax]), left_mid(boxes[kOutput]), edge_color(kSoftmaxToOutput), thick);
  const ImVec2 v_start = right_mid(boxes[kV]);
  const float output_x = (boxes[kOutput].min.x + boxes[kOutput].max.x) * 0.5f;
  dl->AddLine(v_start, ImVec2(output_x, v_start.y), edge_color(kVtoOutput), thick);
  arrow(dl, ImVec2(output_x, v_start.y + thick * 0.5f), ImVec2(output_x, boxes[kOutput].max.y), edge_color(kVtoOutput),
        thick);

  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const bool window_hovered = ImGui::IsWindowHovered();
  int hovered_box = -1;
  for (int p = 0; p < kPartCount; ++p) {
    const FlowBox& b = boxes[p];
    const bool on = (lit.parts & bit(p)) != 0;
    const bool mask_off = p == kMask && !causal_shown(state);
    const Rgb* hue = hue_of(p);
    dl->AddRectFilled(b.min, b.max, color(on ? pal.box_lit_bg : pal.box_bg), font * 0.25f);
    const ImVec2 crisp_min(std::floor(b.min.x), std::floor(b.min.y)), crisp_max(std::floor(b.max.x), std::floor(b.max.y));
    dl->AddRect(crisp_min, crisp_max, hue ? color(*hue, on ? 1.0f : 0.6f) : on ? lit_color : dim_color, font * 0.25f,
                0, on ? std::round(thick * 1.5f) : 1.0f);
    const ImU32 text = on ? (hue ? color(*hue) : color(pal.text)) : color(pal.text_dim, mask_off ? 0.65f : 1.0f);
    const float w = b.max.x - b.min.x;
    if (b.one_line || !shapes) {
      const std::string label = shapes ? b.name + " " + b.shape : b.name;
      const float label_width = text_width(label);
      dl->AddText(ImGui::GetFont(), text_size, ImVec2(b.min.x + (w - label_width) * 0.5f, (b.min.y + b.max.y - line) * 0.5f),
                  text, label.c_str());
    } else {
      const float name = text_width(b.name), shape = text_width(b.shape);
      dl->AddText(ImGui::GetFont(), text_size, ImVec2(b.min.x + (w - name) * 0.5f, b.min.y + pad * 0.6f), text, b.name.c_str());
      dl->AddText(ImGui::GetFont(), text_size, ImVec2(b.min.x + (w - shape) * 0.5f, b.min.y + pad * 0.6f + line), text,
                  b.shape.c_str());
    }
    if (hue) publish_rect(("steps:" + b.name).c_str(), crisp_min, crisp_max);
    if (window_hovered && mouse.x >= b.min.x && mouse.x < b.max.x && mouse.y >= b.min.y && mouse.y < b.max.y)
      hovered_box = p;
  }
  explain_parts("##diagram", kPartCount, hovered_box, -1, [&](int p) { ImGui::TextUnformatted(boxes[p].meaning.c_str()); });
  ImGui::Dummy(ImVec2(boxes[kOutput].max.x - origin.x, height));
  publish_picture_rect(View::Steps);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] One function per step
// ---------------------------------------------------------------------------------------------

struct StepContext {
  const AppState& state;
  AppInputs& next;
  const AttentionTrace& t;
  int token;         // the selected query row
  std::string name;  // 'it'
  std::vector<std::string> queries, keys;
  float avail;  // width of the view
};

// "1 × W_Q['pronoun'] + …": the rows of a projection matrix that x actually picks up.
std::string picked_rows(const Matrix& x, int row, const char* matrix_name) {
  std::vector<int> features;
  for (Eigen::Index f = 0; f < x.cols(); ++f)
    if (x(row, f) != 0.0f) features.push_back(static_cast<int>(f));
  std::stable_sort(features.begin(), features.end(),
                   [&](int a, int b) { return std::fabs(x(row, a)) > std::fabs(x(row, b)); });
  if (features.empty()) return "0 (every feature of x is 0)";
  std::string out;
  const std::size_t shown = std::min<std::size_t>(features.size(), 2);
  for (std::size_t k = 0; k < shown; ++k)
    out += (k ? " + " : "") + compact(x(row, features[k])) + " × " + matrix_name + "['" + feature_names()[features[k]] +
           "']";
  if (features.size() > shown) out += " + … (" + std::to_string(features.size() - shown) + " more)";
  return out;
}

// A loaded model's projections: X is the layer's normalised input, its columns have no names.
void step_projections_real(StepContext& c) {
  const int d = static_cast<int>(c.t.key.cols());
  const Matrix& x = c.state.model.queries.x;
  const float font = ImGui::GetFontSize();
  char intro[600];
  std::snprintf(intro, sizeof intro,
                "Each token enters this layer as a vector x of %d numbers (the layer's input after its %s): "
                "one row of X. This head's three matrices, learned in training, turn it into three vectors of "
                "d = %d numbers: a query (what the token is looking for), a key (what it offers to be found by) "
                "and a value (what it hands on, in proportion to the weight it is given). Their dimensions have no names: the model "
                "found what to put in them.",
                static_cast<int>(x.cols()), input_norm_name(c.state).c_str(), d);
  paragraph(intro);
  formula_box(step_formula(c.state, 0).c_str());
  section_heading(("With the numbers of " + c.name).c_str());
  ImGui::TextWrapped("x(%s) = %s", c.queries[c.token].c_str(), vector_text(x.row(c.token).eval().data(), static_cast<int>(x.cols())).c_str());
  ImGui::TextWrapped("q = %s = %s", projection_formula(c.state, 'q', "x").c_str(),
                     vector_text(c.t.query.row(c.token).eval().data(), d).c_str());
  ImGui::TextWrapped("k = %s = %s", projection_formula(c.state, 'k', "x").c_str(),
                     vector_text(c.t.key.row(c.token).eval().data(), d).c_str());
  ImGui::TextWrapped("v = %s = %s", projection_formula(c.state, 'v', "x").c_str(),
                     vector_text(c.t.value.row(c.token).eval().data(), static_cast<int>(c.t.value.cols())).c_str());
  hint("Each entry of x·W_Q is x's numbers times one column of W_Q, added up: a weighted sum of all of them. "
       "The other parts of the formula, where this model has them, act on that sum.");

  section_heading("Every token at once: X, Q, K and V (as images: too many numbers to print)");
  HeatmapStyle s;
  s.signed_values = true;
  s.highlight_row = c.token;
  s.row_labels = &c.queries;
  s.cell = std::clamp(font * 12.0f / static_cast<float>(std::max<Eigen::Index>(1, x.rows())), 2.0f, font * 1.2f);
  HeatmapStyle xs = s, qs = s, ks = s, vs = s;
  xs.range = std::max(x.cwiseAbs().maxCoeff(), 1e-6f);
  xs.cell_width = squeezed_cell_width(static_cast<int>(x.cols()), font * 8.0f, s.cell);
  const float qkv_range = std::max({c.t.query.cwiseAbs().maxCoeff(), c.t.key.cwiseAbs().maxCoeff(), c.t.value.cwiseAbs().maxCoeff(), 1e-6f});
  for (HeatmapStyle* h : {&qs, &ks, &vs}) {
    h->range = qkv_range;
    h->row_labels = nullptr;
    h->cell_width = squeezed_cell_width(d, font * 5.0f, s.cell);
  }
  heatmap_row({{"##X", &x, xs, "X " + shape_text(x.rows(), x.cols()), nullptr, &c.queries, nullptr},
               {"##Q", &c.t.query, qs, "Q " + shape_text(c.t.query.rows(), d), nullptr, &c.queries, nullptr},
               {"##K", &c.t.key, ks, "K " + shape_text(c.t.key.rows(), d), nullptr, &c.keys, nullptr},
               {"##V", &c.t.value, vs, "V " + shape_text(c.t.value.rows(), c.t.value.cols()), nullptr, &c.keys, nullptr}});
}

void step_projections(StepContext& c) {
  if (real_model(c.state)) {
    step_projections_real(c);
    return;
  }
  const int d = static_cast<int>(c.t.key.cols());
  const Matrix& x = c.state.model.queries.x;
  char intro[512];
  std::snprintf(intro, sizeof intro,
                "Each token enters as a vector x of %d word features: one row of X. Three matrices, learned in "
                "training (set by hand here), turn it into three vectors of d = %d numbers: a query (what the "
                "token is looking for), a key (what it offers to be found by) and a value (what it hands on, "
                "in proportion to the weight it is given: nothing is picked, every value is blended in).",
                static_cast<int>(x.cols()), d);
  paragraph(intro);
  formula_box(step_formula(c.state, 0).c_str());

  section_heading(("With the numbers of " + c.name).c_str());
  const Matrix x_row = x.row(c.token);
  const std::vector<std::string> features(feature_names().begin(), feature_names().end());
  const std::vector<std::string> row_label = {"x(" + c.queries[c.token] + ")"};
  HeatmapStyle xs;
  xs.signed_values = true;
  xs.show_values = true;
  xs.value_decimals = 1;
  xs.col_labels = &features;
  xs.row_labels = &row_label;
  xs.cell = cell_for(c.avail - ImGui::CalcTextSize(row_label[0].c_str()).x - ImGui::GetFontSize(), x_row.cols());
  heatmap_row({{"##x_row", &x_row, xs, "x: one row of X " + shape_text(1, x.cols()), nullptr, &row_label, &features}});

  // x picks up the rows of W_Q (W_K, W_V) of its non-zero features: that is all a product x·W does.
  const bool self = !cross_shown(c.state);
  const Matrix q = c.t.query.row(c.token);
  ImGui::TextWrapped("q = x·W_Q = %s = %s", picked_rows(x, c.token, "W_Q").c_str(), vector_text(q.data(), d).c_str());
  if (self) {
    const Matrix k = c.t.key.row(c.token), v = c.t.value.row(c.token);
    ImGui::TextWrapped("k = x·W_K = %s = %s", picked_rows(x, c.token, "W_K").c_str(), vector_text(k.data(), d).c_str());
    ImGui::TextWrapped("v = x·W_V = %s = %s", picked_rows(x, c.token, "W_V").c_str(),
                       vector_text(v.data(), static_cast<int>(v.cols())).c_str());
  } else {
    hint("Cross-attention: the keys and values are made the same way, but from the second sentence's tokens.");
  }
  hint("A product x·W adds up the rows of W picked out by x's non-zero features, each times that feature's value.");

  section_heading("Every token at once: Q, K and V");
  const std::vector<std::string> q_dims(query_dim_names().begin(), query_dim_names().end());
  const std::vector<std::string> k_dims(key_dim_names().begin(), key_dim_names().end());
  const std::vector<std::string> v_dims(value_dim_names().begin(), value_dim_names().end());
  HeatmapStyle s;
  s.signed_values = true;
  s.range = std::max(
      {c.t.query.cwiseAbs().maxCoeff(), c.t.key.cwiseAbs().maxCoeff(), c.t.value.cwiseAbs().maxCoeff(), 1e-6f});
  s.show_values = true;
  s.value_decimals = 1;
  s.highlight_row = c.token;
  s.row_labels = &c.queries;
  const float labels = ImGui::CalcTextSize("because").x * 2.0f;
  s.cell = std::clamp((c.avail - labels - ImGui::GetFontSize() * 3.0f) / 12.0f, ImGui::GetFontSize() * 1.2f,
                      ImGui::GetFontSize() * 2.2f);
  HeatmapStyle qs = s, ks = s, vs = s;
  qs.col_label_color = color(palette().query);  // each matrix's dimensions in its own hue
  ks.col_label_color = color(palette().key);
  vs.col_label_color = color(palette().value);
  qs.col_labels = &q_dims;
  ks.col_labels = &k_dims;
  ks.row_labels = &c.keys;
  ks.highlight_row = self ? c.token : -1;
  vs.col_labels = &v_dims;
  vs.row_labels = self ? nullptr : &c.keys;  // beside K its rows are K's rows
  vs.highlight_row = ks.highlight_row;
  heatmap_row(
      {{"##Q", &c.t.query, qs, "Q " + shape_text(c.t.query.rows(), d), nullptr, &c.queries, &q_dims},
       {"##K", &c.t.key, ks, "K " + shape_text(c.t.key.rows(), d), nullptr, &c.keys, &k_dims},
       {"##V", &c.t.value, vs, "V " + shape_text(c.t.value.rows(), c.t.value.cols()), nullptr, &c.keys, &v_dims}});
  hint(
      "The columns of Q and K line up: a query's \"seeks creature\" meets a key's \"is creature\". "
      "That is why their dot product measures a match.");
}

// How the raw dot products become scores here: ÷ √d, ÷ temperature, or nothing (switch or mistake).
std::string scaling_text(const AppState& state) {
  const AttentionTrace& t = state.model.trace;
  const int d = static_cast<int>(t.key.cols());
  const std::string root = "√" + std::to_string(d) + " = " + compact(std::sqrt(static_cast<float>(d)));
  const std::string inverse = "1/√" + std::to_string(d) + " = " + number_text(1.0f / std::sqrt(static_cast<float>(d)), 3);
  const bool divided = state.inputs.scale && state.inputs.mistake != Mistake::ForgetScale;
  const Scaling how = trace_scaling(t, state.inputs.temperature);
  std::string text = divided && how == Scaling::ModelFactor
                         ? "This model multiplies each dot product by its own factor, not by " + inverse
                     : divided && how == Scaling::None ? "This model does not scale its dot products"
                     : divided ? "Each dot product is divided by " + root
                               : (state.inputs.scale ? "Not divided by √d: the \"forget √d\" mistake is on"
                                                     : "Not divided by √d: switched off in the controls");
  if (state.inputs.temperature != 1.0f) text += ", and by the temperature " + compact(state.inputs.temperature);
  return text + " (score = q·k × " + number_text(t.score_factor, 3) + ").";
}

// "3×2 + 1×0": the products of the query's non-zero entries with the key's (a real model's 64:
// the first few, then how many more).
std::string dot_written_out(const Matrix& query, const Matrix& matched, int row, int key) {
  std::string out;
  int written = 0, left = 0;
  for (Eigen::Index c = 0; c < query.cols(); ++c)
    if (query(row, c) != 0.0f) {
      if (written == 3 && query.cols() > kVectorShown) {
        ++left;
        continue;
      }
      out += (out.empty() ? "" : " + ") + compact(query(row, c)) + "×" + compact(matched(key, c));
      ++written;
    }
  if (left) out += " + … " + std::to_string(left) + " more";
  return out.empty() ? "0" : out;
}

void step_scores(StepContext& c) {
  paragraph(
      "The selected token compares its query with the key of every token, itself included. A dot product "
      "multiplies the two vectors entry by entry and adds the products: it is large when the query asks "
      "for what the key offers, 0 when they share nothing, and negative when they point opposite ways. "
      "Negative scores are common in trained models: they only mean a smaller weight after the softmax.");
  formula_box(step_formula(c.state, 1).c_str());

  const int d = static_cast<int>(c.t.key.cols()), keys = static_cast<int>(c.t.key.rows());
  const bool swapped = c.state.inputs.mistake == Mistake::SwapKeysValues;
  const Matrix& matched = swapped ? c.t.value : c.t.key;  // what the trace really multiplied
  section_heading(("With the numbers of " + c.name).c_str());
  ImGui::TextWrapped("q(%s) = %s", c.queries[c.token].c_str(),
                     vector_text(c.t.query.row(c.token).eval().data(), d).c_str());
  ImGui::TextWrapped("%s", scaling_text(c.state).c_str());
  if (swapped) ImGui::TextColored(mistake_color(), "Mistake on: the query is multiplied with the values, not the keys.");

  // with a soft-cap the softmax sees the capped scores (without one they are the scaled ones)
  const float cap = score_softcap(c.state);
  const Matrix& scores = c.t.capped_scores;
  if (cap > 0)
    ImGui::TextWrapped("This model then caps every score: %s·tanh(s / %s) stays between −%s and %s, nearly s itself "
                       "for small scores, flattened for large ones.",
                       compact(cap).c_str(), compact(cap).c_str(), compact(cap).c_str(), compact(cap).c_str());
  int best = 0;
  for (int j = 1; j < keys; ++j)
    if (scores(c.token, j) > scores(c.token, best)) best = j;
  const bool table_open = begin_numbers_table("##scores", cap > 0 ? 5 : 4, keys);
  if (table_open) {
    ImGui::TableSetupColumn("key");
    ImGui::TableSetupColumn(swapped ? "q·v written out" : "q·k written out");
    ImGui::TableSetupColumn(swapped ? "q·v" : "q·k");
    if (cap > 0) ImGui::TableSetupColumn("before the cap");
    ImGui::TableSetupColumn("score");
    ImGui::TableHeadersRow();
    ImGuiListClipper clipper;
    clipper.Begin(keys);
    while (clipper.Step())
      for (int j = clipper.DisplayStart; j < clipper.DisplayEnd; ++j) {
        ImGui::TableNextRow();
        cell_text(c.keys[j], j == best);
        cell_text(dot_written_out(c.t.query, matched, c.token, j));
        cell_text(number_text(c.t.raw_scores(c.token, j), 2));
        if (cap > 0) cell_text(number_text(c.t.scaled_scores(c.token, j), 2));
        cell_text(number_text(scores(c.token, j), 2), j == best);
      }
  }
  end_numbers_table(table_open);
  // the best score may be one the mask of step 7 hides (a later key, or one outside a window)
  const bool hidden = !std::isfinite(c.t.masked_scores(c.token, best));
  ImGui::TextWrapped("Best match: %s with a score of %s%s", in_quotes(c.keys[best]).c_str(),
                     number_text(scores(c.token, best), 2).c_str(),
                     hidden ? ", but the mask of step 7 hides that key: it will get no weight." : ".");
  if (causal_shown(c.state)) hint("The causal mask is on: step 7 shows which of these scores it hides.");
  hint("Why divide at all: step 6.");
}

void step_softmax(StepContext& c) {
  paragraph(
      "Softmax makes every score positive with exp, then divides each by their total, so the weights add "
      "up to 1. Because exp grows fast, a score that is a little higher gets a much larger share.");
  formula_box(step_formula(c.state, 2).c_str());

  const StepsNumbers& n = c.state.views.steps;
  const ExpRow& r = n.softmax;
  const int keys = static_cast<int>(n.softmax_scores.size());
  section_heading(("With the numbers of " + c.name).c_str());
  const std::string exp_header =
      r.shift != 0.0 ? "exp(score − " + compact(static_cast<float>(r.shift)) + ")" : "exp(score)";
  const bool table_open = begin_numbers_table("##softmax", 4, keys + 1);
  if (table_open) {
    ImGui::TableSetupColumn("key");
    ImGui::TableSetupColumn("score");
    ImGui::TableSetupColumn(exp_header.c_str());
    ImGui::TableSetupColumn("weight = exp ÷ sum");
    ImGui::TableHeadersRow();
    const int best = n.keys_by_weight.front();
    for (int j = 0; j < keys; ++j) {
      ImGui::TableNextRow();
      cell_text(c.keys[j], j == best);
      cell_text(number_text(n.softmax_scores[j], 2));
      cell_text(exp_text(r.exps[j]));
      cell_text(number_text(c.t.weights(c.token, j), 3), j == best);
    }
    ImGui::TableNextRow();
    ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, color(palette().box_lit_bg));
    cell_text("sum");
    cell_text("");
    cell_text(exp_text(r.sum_of_exps));
    cell_text(number_text(n.weights_sum, 3));
  }
  end_numbers_table(table_open);
  if (r.shift != 0.0)
    hint(
        "Scores this large make huge exps, so the row's largest score was subtracted first, as real code always "
        "does. It cancels out in the division: the weights are the same.");
  else
    hint(
        "Real code subtracts the row's largest score before exp: it cancels out in the division and keeps exp "
        "from overflowing.");

  const Matrix weights = weights_for_display(c.t).row(c.token);
  const std::vector<std::string> row_label = {c.queries[c.token]};
  HeatmapStyle s;
  s.show_values = true;
  s.row_labels = &row_label;
  s.col_labels = &c.keys;
  s.cell = cell_for(c.avail - ImGui::CalcTextSize(row_label[0].c_str()).x - ImGui::GetFontSize(), keys);
  heatmap_row(
      {{"##weights_row", &weights, s, "the weights of " + c.name + ": one row of A", nullptr, &row_label, &c.keys}});
}

void step_weighted_sum(StepContext& c) {
  paragraph(
      "The output of the token is a blend of every token's value vector: each value is multiplied by its "
      "weight, and the results are added up. Tokens with a large weight dominate the blend; the rest "
      "add a little each.");
  formula_box(step_formula(c.state, 3).c_str());

  const bool swapped = c.state.inputs.mistake == Mistake::SwapKeysValues;
  const Matrix& passed_on = swapped ? c.t.key : c.t.value;  // what the trace really blended
  const int keys = static_cast<int>(passed_on.rows()), dv = static_cast<int>(passed_on.cols());
  const std::vector<int>& order = c.state.views.steps.keys_by_weight;
  const Matrix output = c.t.output.row(c.token);

  section_heading(("With the numbers of " + c.name + ", largest weights first").c_str());
  const int top = std::min(keys, 3);
  std::string names = "output(" + c.queries[c.token] + ") = ", numbers = "= ";
  for (int k = 0; k < top; ++k) {
    const int j = order[k];
    names += (k ? " + " : "") + number_text(c.t.weights(c.token, j), 2) + " × v(" + c.keys[j] + ")";
    numbers += (k ? " + " : "") + number_text(c.t.weights(c.token, j), 2) + " × " +
               vector_text(passed_on.row(j).eval().data(), dv);
  }
  if (keys > top) {
    const std::string rest = " + … (" + std::to_string(keys - top) + " more)";
    names += rest;
    numbers += rest;
  }
  numbers += " = " + vector_text(output.data(), dv);
  ImGui::TextWrapped("%s", names.c_str());
  ImGui::TextWrapped("%s", numbers.c_str());
  if (swapped) ImGui::TextColored(mistake_color(), "Mistake on: the keys are blended here instead of the values.");

  const bool table_open = begin_numbers_table("##blend", 4, keys + 1);
  if (table_open) {
    ImGui::TableSetupColumn("key");
    ImGui::TableSetupColumn("weight");
    ImGui::TableSetupColumn("value v");
    ImGui::TableSetupColumn("weight × v");
    ImGui::TableHeadersRow();
    ImGuiListClipper clipper;
    clipper.Begin(keys);
    while (clipper.Step())
      for (int k = clipper.DisplayStart; k < clipper.DisplayEnd; ++k) {
        const int j = order[k];
        const Matrix v = passed_on.row(j), part = v * c.t.weights(c.token, j);
        ImGui::TableNextRow();
        cell_text(c.keys[j], k == 0);
        cell_text(number_text(c.t.weights(c.token, j), 2));
        cell_text(vector_text(v.data(), dv));
        cell_text(vector_text(part.data(), dv));
      }
    ImGui::TableNextRow();
    ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, color(palette().box_lit_bg));
    cell_text("sum");
    cell_text(number_text(c.state.views.steps.weights_sum, 2));
    cell_text("");
    cell_text(vector_text(output.data(), dv));
  }
  end_numbers_table(table_open);

  const std::vector<std::string> dims = column_names(c.state, Columns::Value, dv);
  const std::vector<std::string> row_label = {"output(" + c.queries[c.token] + ")"};
  HeatmapStyle s;
  s.show_values = true;
  s.signed_values = output.minCoeff() < 0;
  s.range = std::max(output.cwiseAbs().maxCoeff(), 1e-6f);
  s.row_labels = &row_label;
  s.col_labels = &dims;
  s.cell = ImGui::GetFontSize() * 2.6f;
  if (dv > 16) {  // a real model's head: a strip, not 64 labelled cells
    s.col_labels = nullptr;
    s.cell_width = squeezed_cell_width(dv, ImGui::GetFontSize() * 16.0f, s.cell);
    s.cell = ImGui::GetFontSize();
  }
  ImGui::Spacing();
  heatmap_row({{"##output_row", &output, s, "output " + shape_text(1, dv), nullptr, &row_label, &dims}});
  Eigen::Index largest = 0;
  output.row(0).cwiseAbs().maxCoeff(&largest);
  ImGui::TextWrapped("Its largest entry is %s (%s). The largest weight, %s, went to %s.",
                     in_quotes(dims[largest]).c_str(), number_text(output(0, largest), 2).c_str(),
                     number_text(c.t.weights(c.token, order.front()), 2).c_str(),
                     in_quotes(c.keys[order.front()]).c_str());
}

void step_matrix_form(StepContext& c) {
  const long long Tq = c.t.query.rows(), Tk = c.t.key.rows(), d = c.t.key.cols(), dv = c.t.value.cols();
  char intro[640];
  std::snprintf(intro, sizeof intro,
                "Steps 2 to 4 for one token are one row of a matrix product. Q·Kᵀ scores every query against every "
                "key at once; the softmax runs along each row and gives A, shape %s: row i holds token i's "
                "weights. A·V then gives every output at once. The rows do not depend on each other, so all %lld "
                "tokens are computed in parallel.",
                shape_text(Tq, Tk).c_str(), Tq);
  paragraph(intro);
  formula_box(step_formula(c.state, 4).c_str());
  const std::string scores_shapes = "Q " + shape_text(Tq, d) + " · Kᵀ " + shape_text(d, Tk) + " → scores " +
                                    shape_text(Tq, Tk) + " → softmax of each row → A " + shape_text(Tq, Tk);
  const std::string output_shapes =
      "A " + shape_text(Tq, Tk) + " · V " + shape_text(Tk, dv) + " → output " + shape_text(Tq, dv);
  ImGui::TextWrapped("%s", scores_shapes.c_str());
  ImGui::TextWrapped("%s", output_shapes.c_str());

  section_heading("A · V = output, with the numbers now");
  const std::vector<std::string> dims = column_names(c.state, Columns::Value, static_cast<int>(dv));
  const float font = ImGui::GetFontSize();
  const float label_width = ImGui::CalcTextSize("because").x * 2.0f + font * 4.0f;  // A's and V's row labels, operators
  HeatmapStyle a;
  a.show_values = true;
  a.highlight_row = c.token;
  a.row_labels = &c.queries;
  a.col_labels = &c.keys;
  a.cell = std::clamp((c.avail - label_width) / static_cast<float>(Tk + dv * 2), ImGui::GetTextLineHeight() + 1.0f,
                      font * 2.4f);
  HeatmapStyle v = a;
  v.signed_values = true;
  v.range = std::max(c.t.value.cwiseAbs().maxCoeff(), 1e-6f);
  v.highlight_row = -1;
  v.row_labels = &c.keys;
  v.col_labels = &dims;
  v.value_decimals = 1;
  HeatmapStyle out = v;
  out.range = std::max(c.t.output.cwiseAbs().maxCoeff(), 1e-6f);
  out.value_decimals = 2;
  out.highlight_row = c.token;
  out.row_labels = nullptr;  // the same rows as A, right beside it
  // Side by side only while the cells stay big enough for their numbers; else A gets the whole
  // width and V, output go underneath, with the same cells.
  if (a.cell < font * 1.9f) {
    a.cell = cell_for(c.avail - label_width * 0.5f, static_cast<int>(Tk));
    v.cell = out.cell = a.cell;
    out.row_labels = &c.queries;
  }
  if (dv > 16) {  // a real model's head: V and the output as narrow images beside A
    v.col_labels = out.col_labels = nullptr;
    v.show_values = out.show_values = false;
    v.cell_width = out.cell_width = squeezed_cell_width(static_cast<int>(dv), font * 5.0f, a.cell);
  }
  const Matrix shown_weights = weights_for_display(c.t);
  heatmap_row({{"##A", &shown_weights, a, "A " + shape_text(Tq, Tk), nullptr, &c.queries, &c.keys},
               {"##V_matrix", &c.t.value, v, "V " + shape_text(Tk, dv), "·", &c.keys, &dims},
               {"##output", &c.t.output, out, "output " + shape_text(Tq, dv), "=", &c.queries, &dims}});
  ImGui::TextWrapped(
      "The outlined row is %s: its row of A is the weights of step 3, and its row of the output is "
      "the vector of step 4.",
      c.name.c_str());
}

void step_scaling(StepContext& c) {
  const StepsNumbers& n = c.state.views.steps;
  const int d = static_cast<int>(c.t.key.cols());
  paragraph(
      "A dot product adds up d products. When the entries of q and k are about 1 in size, the spread "
      "(standard deviation) of that sum grows like √d. Softmax of scores that far apart hands nearly all "
      "the weight to the largest one: the row becomes almost one-hot. Then the softmax passes almost no "
      "gradient back, and that row stops learning. Dividing by √d brings the spread back to about 1.");
  formula_box(step_formula(c.state, 5).c_str());

  section_heading("Measured on the scores now");
  ImGui::TextWrapped("Spread of all the raw scores Q·Kᵀ: %s. Divided by √%d = %s: %s.",
                     number_text(n.std_raw, 2).c_str(), d, compact(n.sqrt_d).c_str(),
                     number_text(n.std_divided, 2).c_str());
  ImGui::TextWrapped(
      "For comparison, random vectors with entries of size 1 and d = 512 would give a spread of about "
      "√512 ≈ %s.",
      number_text(std::sqrt(512.0f), 1).c_str());

  const int keys = static_cast<int>(n.weights_divided.size());
  Matrix both(2, keys);
  for (int j = 0; j < keys; ++j) {
    both(0, j) = n.weights_divided[j];
    both(1, j) = n.weights_undivided[j];
  }
  // Masked keys go to the heatmap as −∞ so they are hatched, not shown as a 0.
  if (causal_shown(c.state))
    for (int j = c.token + 1; j < keys; ++j) both(0, j) = both(1, j) = kNegInf;
  section_heading(("The weights of " + c.name + ", both ways").c_str());
  const std::vector<std::string> row_labels = {"÷ √d", "not ÷ √d"};
  HeatmapStyle s;
  s.show_values = true;
  s.row_labels = &row_labels;
  s.col_labels = &c.keys;
  s.cell = cell_for(c.avail - ImGui::CalcTextSize("not ÷ √d").x - ImGui::GetFontSize(), keys);
  heatmap_row(
      {{"##both_ways", &both, s, "the row's softmax, both ways", nullptr, &row_labels, &c.keys}});
  const float max_divided = *std::max_element(n.weights_divided.begin(), n.weights_divided.end());
  const float max_undivided = *std::max_element(n.weights_undivided.begin(), n.weights_undivided.end());
  ImGui::TextWrapped("Largest weight: %s with the division, %s without it.", number_text(max_divided, 2).c_str(),
                     number_text(max_undivided, 2).c_str());
  if (c.state.inputs.temperature != 1.0f) hint("Both rows are also divided by the temperature set in the controls.");
  char scale_note[256];
  std::snprintf(scale_note, sizeof scale_note,
                "Here d is only %d, so leaving out the division multiplies the scores by just √%d = %s. At d = 512 it "
                "multiplies them by about 23: the Break view shows most rows turning one-hot.",
                d, d, compact(n.sqrt_d).c_str());
  hint(scale_note);
  if (action_button("Open the Break view (d = 512)", "step:open_break")) c.next.view = View::Break;
}


void step_mask(StepContext& c) {
  paragraph(
      "A GPT writes text one token at a time, so a token must not look at the tokens after it: in training, "
      "they are the answers it is learning to predict. The causal mask sets the score of every later token "
      "to −∞ before the softmax. exp(−∞) is exactly 0, so those tokens get a weight of 0, and the weights "
      "left over still add up to 1.");
  formula_box(step_formula(c.state, 6).c_str());

  const int rows = static_cast<int>(c.t.masked_scores.rows()), keys = static_cast<int>(c.t.masked_scores.cols());
  if (!causal_shown(c.state)) {
    ImGui::TextColored(mistake_color(), "The causal mask is off: every token sees the whole sentence.");
    if (action_button("Turn on the causal mask", "step:causal_on")) c.next.causal = true;
    // What the mask would add to the scores: 0 where a key may be seen, −∞ where it is hidden.
    Matrix mask = Matrix::Zero(rows, keys);
    apply_causal_mask(mask, kNegInf);
    section_heading(("The mask that would be added to the scores " + shape_text(rows, keys)).c_str());
    HeatmapStyle s;
    s.show_values = true;
    s.value_decimals = 0;
    s.highlight_row = c.token;
    s.row_labels = &c.queries;
    s.col_labels = &c.keys;
    s.cell = cell_for(c.avail - ImGui::CalcTextSize("because").x - ImGui::GetFontSize(), keys);
    heatmap_row({{"##mask_preview", &mask, s, "0 = may look, hatched = −∞", nullptr, &c.queries, &c.keys}});
    return;
  }

  const std::vector<float>& after_mask = c.state.views.steps.softmax_scores;
  section_heading(("With the numbers of " + c.name).c_str());
  ImGui::TextWrapped("%s", mask_row_text(c.state).c_str());
  if (cross_shown(c.state))
    hint(
        "Cross-attention: the mask compares positions in two different sentences. Real models use it within one "
        "sentence (self-attention).");
  const bool table_open = begin_numbers_table("##masked", 4, keys);
  if (table_open) {
    ImGui::TableSetupColumn("key");
    ImGui::TableSetupColumn("score");
    ImGui::TableSetupColumn("after the mask");
    ImGui::TableSetupColumn("weight");
    ImGui::TableHeadersRow();
    for (int j = 0; j < keys; ++j) {
      const bool masked = !std::isfinite(after_mask[j]);
      ImGui::TableNextRow();
      cell_text(c.keys[j], masked);
      cell_text(number_text(c.t.capped_scores(c.token, j), 2));
      cell_text(number_text(after_mask[j], 2), masked);
      cell_text(number_text(c.t.weights(c.token, j), 3));
    }
  }
  end_numbers_table(table_open);
  ImGui::TextWrapped("The visible weights add up to %s.", number_text(c.state.views.steps.weights_sum, 3).c_str());

  section_heading(("Scores after the mask, every token " + shape_text(rows, keys)).c_str());
  HeatmapStyle s;
  s.show_values = true;
  s.signed_values = true;
  float range = 1e-6f;
  for (Eigen::Index i = 0; i < c.t.masked_scores.size(); ++i)
    if (std::isfinite(c.t.masked_scores.data()[i])) range = std::max(range, std::fabs(c.t.masked_scores.data()[i]));
  s.range = range;
  s.value_decimals = 1;
  s.highlight_row = c.token;
  s.row_labels = &c.queries;
  s.col_labels = &c.keys;
  s.cell = cell_for(c.avail - ImGui::CalcTextSize("because").x - ImGui::GetFontSize(), keys);
  heatmap_row(
      {{"##masked_scores", &c.t.masked_scores, s, "hatched = −∞: hidden from that row", nullptr, &c.queries, &c.keys}});
  hint(
      "The upper triangle is hidden: row i sees only columns 1 to i. The Mistakes view shows what goes wrong when "
      "the mask uses 0 instead of −∞, or comes after the softmax.");
}

// ---------------------------------------------------------------------------------------------
// [SECTION] draw_steps_panel
// ---------------------------------------------------------------------------------------------

// Back, the seven numbered steps, Next.
void step_buttons(int step, AppInputs& next) {
  ImGui::BeginDisabled(step == 0);
  if (ImGui::Button("‹ Back")) next.step = step - 1;
  ImGui::EndDisabled();
  publish_item_rect("step:back");
  const float number_width = ImGui::GetFrameHeight() * 1.2f;
  for (int s = 0; s < kStepCount; ++s) {
    same_line_if_fits(number_width);  // a phone: the numbers go on over two lines
    const bool current = s == step;
    if (current) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
    const std::string label = std::to_string(s + 1);
    if (ImGui::Button(label.c_str(), ImVec2(number_width, 0))) next.step = s;
    if (current) ImGui::PopStyleColor();
    explain_item((label + ". " + kSteps[s].title).c_str(), false);  // the click opens the step, its title on top
  }
  same_line_if_fits(button_width("Next ›"));
  ImGui::BeginDisabled(step == kStepCount - 1);
  if (ImGui::Button("Next ›")) next.step = step + 1;
  ImGui::EndDisabled();
  publish_item_rect("step:next");
}

}  // namespace

void draw_steps_panel(const AppState& state, Action& action, UiState&) {
  AppInputs& next = action.inputs;
  const int step = std::clamp(state.inputs.step, 0, kStepCount - 1);
  StepContext c{state,         next, state.model.trace, state.inputs.token, "", query_labels(state), key_labels(state),
                usable_width()};
  c.name = in_quotes(c.queries[c.token]);
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + c.avail);

  panel_intro("The lesson's seven steps, one at a time, each with the numbers of the selected token.");
  head_banner(state);
  step_buttons(step, next);
  ImGui::Spacing();
  char title[200];
  std::snprintf(title, sizeof title, "Step %d of %d: %s", step + 1, kStepCount, kSteps[step].title);
  heading(title, color(palette().accent));
  flow_diagram(state, step);
  if (state.inputs.mistake != Mistake::None) {
    ImGui::PushStyleColor(ImGuiCol_Text, mistake_color());
    ImGui::TextWrapped(
        "The mistake \"%s\" is switched on (Mistakes view): the numbers below follow it, so some "
        "will look wrong.",
        mistake_label(state.inputs.mistake));
    ImGui::PopStyleColor();
    if (action_button("Switch the mistake off", "step:mistake_off")) next.mistake = Mistake::None;
  }
  ImGui::Spacing();
  switch (step) {
    case 0: step_projections(c); break;
    case 1: step_scores(c); break;
    case 2: step_softmax(c); break;
    case 3: step_weighted_sum(c); break;
    case 4: step_matrix_form(c); break;
    case 5: step_scaling(c); break;
    default: step_mask(c); break;
  }
  ImGui::PopTextWrapPos();
}


}  // namespace attn::ui
