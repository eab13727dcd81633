// The flow view: the lesson's picture X → Q, K, V → scores → weights → output, drawn live, the selected token lit.
// Not a calculator: every number it shows comes from the core's trace (AppState::model.trace) or from
// state.views.flow, and what each box shows and says from src/state/flow_view.h; it only lays out.
//
// [SECTION] Nodes: the boxes with their place
// [SECTION] Layout: one cell size for every heatmap, boxes placed in five columns
// [SECTION] Drawing: arrows, boxes, tooltips, the change pulse
// [SECTION] Legend and readout
// [SECTION] draw_flow_panel
#include <imgui.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "../state/flow_view.h"
#include "layout.h"
#include "model_ui.h"
#include "family_panels.h"
#include "panels.h"
#include "widgets.h"

namespace attn::ui {

namespace {

// One change travels X → Q/K/V → scores → weights → output in this time.
constexpr double kPulseSeconds = 1.2;
constexpr int kStageCount = 5;  // X, Q/K/V, scores, weights, output

// The widest a squeezed matrix is drawn, in font sizes (its columns then share this width).
constexpr float kSqueezedWidth = 6.0f;

// ---------------------------------------------------------------------------------------------
// [SECTION] Nodes: the boxes with their place
// ---------------------------------------------------------------------------------------------

// A box of the picture (flow_view.h) with its place once laid out, in pixels relative to the
// diagram's origin.
struct FlowNode : FlowBox {
  const Rgb* hue = nullptr;  // Q, K and V: the query/key/value hue (name and border)
  float cell_w = 0;  // its column width once laid out (= the cell size unless squeezed)
  ImVec2 pos, size;
  ImVec2 grid;  // top-left of the heatmap cells

  ImVec2 max() const { return ImVec2(pos.x + size.x, pos.y + size.y); }
  float center_y() const { return pos.y + size.y * 0.5f; }
};

struct FlowNodes {
  FlowNode x, x_kv, q, k, v, scores, weights, output;
  bool cross = false;
  // Every box in drawing order; x_kv only in cross-attention.
  std::vector<FlowNode*> all() {
    std::vector<FlowNode*> list = {&x, &q, &k, &v, &scores, &weights, &output};
    if (cross) list.insert(list.begin() + 1, &x_kv);
    return list;
  }
};

FlowNodes make_nodes(const AppState& state) {
  const FlowBoxes b = flow_boxes(state);
  FlowNodes n;
  n.cross = b.cross;
  const std::pair<FlowNode*, const FlowBox*> pairs[] = {{&n.x, &b.x}, {&n.x_kv, &b.x_kv}, {&n.q, &b.q}, {&n.k, &b.k},
                                                        {&n.v, &b.v}, {&n.scores, &b.scores}, {&n.weights, &b.weights},
                                                        {&n.output, &b.output}};
  for (const auto& [node, box] : pairs) static_cast<FlowBox&>(*node) = *box;
  n.q.hue = &palette().query;
  n.k.hue = &palette().key;
  n.v.hue = &palette().value;
  return n;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Layout: one cell size for every heatmap, boxes placed in five columns
// ---------------------------------------------------------------------------------------------

struct FlowLayout {
  float cell = 0;
  // Compact: for narrow windows (800×600 leaves ~520 px). The header gets three short lines
  // (name, shape, recipe) instead of two long ones, gaps shrink, and the arrow label and the
  // output's name tag go (the weights box then says "softmax" itself).
  bool compact = false;
  float pad = 0, header = 0, footer = 0, row_label_width = 0;
  float inner_label_width = 0;  // the boxes after X: the same names, narrower (X is where they enter)
  float gap = 0, softmax_gap = 0, column_gap_v = 0;
  float output_tag_width = 0;  // room right of the output box for the selected token's name
  float v_route_y = 0;         // height at which the V → output arrow passes under scores/weights
  // Vertical: for a phone (layout().narrow). Top to bottom: X | Q K V | scores → weights | output,
  // and V reaches the output down the right-hand side, at v_route_x.
  bool vertical = false;
  float v_route_x = 0;
  ImVec2 total;
  bool show_row_labels = true;
};

// The text lines at the top of a box.
std::vector<std::string> header_lines(const FlowNode& node, bool compact) {
  if (compact) return {node.name, node.shape, node.formula_short};
  return {node.name + "  " + node.shape, node.formula};
}

// Box sizes for a cell size, then positions: X | Q K V | scores | weights | output.
// Q, K, V stack in one column; scores and weights sit between Q and K (they are made from them);
// output sits between weights and the V arrow, the two things it is made from.
FlowLayout layout_nodes_vertical(FlowNodes& n, FlowLayout L);

FlowLayout layout_nodes(FlowNodes& n, float cell, bool compact, float widest_token, bool vertical, bool inner_labels) {
  const float font = ImGui::GetFontSize();
  const float line = ImGui::GetTextLineHeight();
  FlowLayout L;
  L.cell = cell;
  L.compact = compact;
  L.pad = font * 0.35f;
  L.header = line * (compact ? 3.0f : 2.0f) + font * 0.2f;
  L.footer = line + font * 0.3f;  // the box's own colour scale
  L.gap = font * (compact ? 1.4f : 2.2f);
  L.softmax_gap = compact ? L.gap : ImGui::CalcTextSize("softmax").x + font * 1.2f;
  L.column_gap_v = font * 0.7f;
  L.show_row_labels = cell >= font * 0.45f;  // below that, only the selected token keeps its name

  const float label_width = std::min(widest_token, font * (compact ? 4.0f : 6.0f));
  L.row_label_width = label_width + font * 0.4f;
  L.inner_label_width = inner_labels ? std::min(widest_token, font * (compact ? 3.0f : 4.0f)) + font * 0.4f : 0.0f;
  L.output_tag_width = compact ? 0.0f : font * 1.2f + label_width;

  for (FlowNode* node : n.all()) {
    const float label = node == &n.x || node == &n.x_kv ? L.row_label_width : L.inner_label_width;
    // a squeezed matrix is as wide as ten cells, within 2.5 and kSqueezedWidth font sizes
    const float squeezed = std::clamp(cell * 10.0f, font * 2.5f, font * kSqueezedWidth);
    node->cell_w = node->squeeze ? std::min(cell, squeezed / static_cast<float>(node->col_count())) : cell;
    float width = label + node->cell_w * node->col_count();
    for (const std::string& text : header_lines(*node, compact))
      width = std::max(width, ImGui::CalcTextSize(text.c_str()).x);
    node->size = ImVec2(L.pad * 2 + width, L.pad * 2 + L.header + cell * node->row_count() + L.footer);
    node->grid = ImVec2(L.pad + label, L.pad + L.header);  // relative to the box until placed
  }

  if (vertical) return layout_nodes_vertical(n, L);

  auto column_width = [](std::initializer_list<const FlowNode*> nodes) {
    float w = 0;
    for (const FlowNode* node : nodes) w = std::max(w, node->size.x);
    return w;
  };
  const float x0 = 0;
  const float x1 = x0 + column_width({&n.x, n.cross ? &n.x_kv : &n.x}) + L.gap;
  const float x2 = x1 + column_width({&n.q, &n.k, &n.v}) + L.gap;
  const float x3 = x2 + n.scores.size.x + L.softmax_gap;
  const float x4 = x3 + n.weights.size.x + L.gap;

  n.q.pos = ImVec2(x1, 0);
  n.k.pos = ImVec2(x1, n.q.max().y + L.column_gap_v);
  n.v.pos = ImVec2(x1, n.k.max().y + L.column_gap_v);

  auto center_at = [](FlowNode& node, float x, float center_y) { node.pos = ImVec2(x, center_y - node.size.y * 0.5f); };
  if (n.cross) {  // X feeds Q; X_kv feeds K and V
    center_at(n.x, x0, n.q.center_y());
    center_at(n.x_kv, x0, (n.k.center_y() + n.v.center_y()) * 0.5f);
    n.x_kv.pos.y = std::max(n.x_kv.pos.y, n.x.max().y + L.column_gap_v);
  } else {
    center_at(n.x, x0, n.k.center_y());
  }
  center_at(n.scores, x2, (n.q.center_y() + n.k.center_y()) * 0.5f);
  n.weights.pos = ImVec2(x3, n.scores.pos.y);
  L.v_route_y = std::max(n.v.center_y(), std::max(n.scores.max().y, n.weights.max().y) + L.column_gap_v);
  center_at(n.output, x4, (n.weights.center_y() + L.v_route_y) * 0.5f);

  // Nothing above the origin: shift everything down by the highest overshoot.
  float top = 0;
  for (FlowNode* node : n.all()) top = std::min(top, node->pos.y);
  for (FlowNode* node : n.all()) node->pos.y -= top;
  L.v_route_y -= top;

  L.total = ImVec2(0, L.v_route_y + L.pad);
  for (FlowNode* node : n.all()) {
    node->grid = ImVec2(node->pos.x + node->grid.x, node->pos.y + node->grid.y);
    L.total.x = std::max(L.total.x, node->max().x);
    L.total.y = std::max(L.total.y, node->max().y);
  }
  L.total.x += L.output_tag_width;
  return L;
}

// The boxes are sized (node->size, node->grid relative to the box); this places them in rows.
FlowLayout layout_nodes_vertical(FlowNodes& n, FlowLayout L) {
  L.vertical = true;
  L.output_tag_width = 0;  // the V arrow runs where the tag would be; the output row stays highlighted
  const float gap = L.gap, side = L.column_gap_v;
  auto place_row = [&](std::initializer_list<FlowNode*> row, float y, float x_gap) {
    float x = 0, bottom = y;
    for (FlowNode* node : row) {
      node->pos = ImVec2(x, y);
      x += node->size.x + x_gap;
      bottom = std::max(bottom, node->max().y);
    }
    return bottom;
  };
  float y = n.cross ? place_row({&n.x, &n.x_kv}, 0, side) : place_row({&n.x}, 0, side);
  y = place_row({&n.q, &n.k, &n.v}, y + gap, side);
  y = place_row({&n.scores, &n.weights}, y + gap, L.softmax_gap);
  n.output.pos = ImVec2(n.weights.pos.x, y + gap);
  float right = 0;
  for (FlowNode* node : n.all()) right = std::max(right, node->max().x);
  L.v_route_x = right + gap * 0.5f;
  L.total = ImVec2(L.v_route_x + gap * 0.3f, n.output.max().y);
  for (FlowNode* node : n.all()) node->grid = ImVec2(node->pos.x + node->grid.x, node->pos.y + node->grid.y);
  return L;
}

// The largest cell size (whole pixels) that fits the width, in the normal layout if it can fit
// at all, else in the compact one. It also fits the height unless that would make cells smaller
// than half a line: there, scrolling down reads better than specks.
FlowLayout fit_layout(FlowNodes& n, const AppState& state, ImVec2 avail, bool vertical) {
  const float font = ImGui::GetFontSize();
  const float largest = std::floor(font * 1.5f), smallest = std::max(1.0f, std::floor(font * 0.2f));
  const float height_floor = font * 0.5f;
  float widest_token = 0;  // measured once: the loop below lays out up to ~40 times
  for (const auto* tokens : {&state.model.queries.tokens, &state.model.keys.tokens})
    for (const Token& t : *tokens) widest_token = std::max(widest_token, ImGui::CalcTextSize(t.text.c_str()).x);
  // Token names beside every box while the cells stay big enough to show them; where they would
  // squeeze the cells below that (a small embed, a phone), only X keeps its names column.
  const float named_cells = font * 0.6f;
  FlowLayout L;
  for (const bool inner_labels : {true, false})
    for (const bool compact : {false, true})
      for (float cell = largest; cell >= (inner_labels ? named_cells : smallest); cell -= 1.0f) {
        L = layout_nodes(n, cell, compact, widest_token, vertical, inner_labels);
        const bool fits_width = L.total.x <= avail.x;
        // Top to bottom, the diagram is meant to be scrolled through: only the width must fit.
        const bool fits_height = vertical || L.total.y <= avail.y || cell <= height_floor;
        if (fits_width && fits_height) return L;
      }
  return L;  // compact with the smallest cells: the view scrolls
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Drawing: arrows, boxes, tooltips, the change pulse
// ---------------------------------------------------------------------------------------------

// A connection: a polyline whose last segment ends in an arrow head. The change pulse runs along
// it while travelling from its source's stage to its target's.
struct FlowArrow {
  std::vector<ImVec2> points;
  int from_stage = 0, to_stage = 1;
  const char* label = nullptr;  // written above the middle of the first segment
};

ImVec2 point_along(const std::vector<ImVec2>& points, float t) {
  float total = 0;
  for (std::size_t i = 1; i < points.size(); ++i)
    total += std::hypot(points[i].x - points[i - 1].x, points[i].y - points[i - 1].y);
  float left = std::clamp(t, 0.0f, 1.0f) * total;
  for (std::size_t i = 1; i < points.size(); ++i) {
    const ImVec2 a = points[i - 1], b = points[i];
    const float len = std::hypot(b.x - a.x, b.y - a.y);
    if (left <= len && len > 0) return ImVec2(a.x + (b.x - a.x) * left / len, a.y + (b.y - a.y) * left / len);
    left -= len;
  }
  return points.back();
}

// How far the change pulse has travelled: 0 at the change, kStageCount when it has passed output.
// With reduced motion asked for (prefers-reduced-motion), there is no pulse at all.
float pulse_position(const AppState& state) {
  if (state.inputs.reduced_motion) return -1.0f;
  const double elapsed = ImGui::GetTime() - state.changed_at;
  if (elapsed < 0 || elapsed > kPulseSeconds) return -1.0f;
  return static_cast<float>(elapsed / kPulseSeconds * kStageCount);
}

// 1 when the pulse just reached `stage`, fading to 0 as it moves on to the next one.
float stage_glow(float pulse, int stage) {
  if (pulse < static_cast<float>(stage)) return 0.0f;
  return std::max(0.0f, 1.0f - (pulse - static_cast<float>(stage)));
}

std::vector<FlowArrow> make_vertical_arrows(const FlowNodes& n, const FlowLayout& L, ImVec2 o);

// An arrow from one node to another along the given points (its stages light up with the steps).
FlowArrow flow_arrow(const FlowNode& from, const FlowNode& to, std::vector<ImVec2> points) {
  FlowArrow a;
  a.points = std::move(points);
  a.from_stage = from.stage;
  a.to_stage = to.stage;
  return a;
}

std::vector<FlowArrow> make_arrows(const FlowNodes& n, const FlowLayout& L, ImVec2 o) {
  if (L.vertical) return make_vertical_arrows(n, L, o);
  auto at = [o](float x, float y) { return ImVec2(o.x + x, o.y + y); };
  auto left_at = [&](const FlowNode& node, float fraction) {
    return at(node.pos.x, node.pos.y + node.size.y * fraction);
  };
  auto right_mid = [&](const FlowNode& node) { return at(node.max().x, node.center_y()); };
  std::vector<FlowArrow> arrows;
  const FlowNode& k_source = n.cross ? n.x_kv : n.x;
  arrows.push_back(flow_arrow(n.x, n.q, {right_mid(n.x), left_at(n.q, 0.5f)}));
  arrows.push_back(flow_arrow(k_source, n.k, {right_mid(k_source), left_at(n.k, 0.5f)}));
  arrows.push_back(flow_arrow(k_source, n.v, {right_mid(k_source), left_at(n.v, 0.5f)}));
  arrows.push_back(flow_arrow(n.q, n.scores, {right_mid(n.q), left_at(n.scores, 0.35f)}));
  arrows.push_back(flow_arrow(n.k, n.scores, {right_mid(n.k), left_at(n.scores, 0.65f)}));
  arrows.push_back(flow_arrow(n.scores, n.weights, {right_mid(n.scores), left_at(n.weights, 0.5f)}));
  if (!L.compact) arrows.back().label = "softmax";
  arrows.push_back(flow_arrow(n.weights, n.output, {right_mid(n.weights), left_at(n.output, 0.35f)}));
  // V → output passes under scores and weights, then turns up into the output box. It spans
  // three stages, so its pulse moves slower and arrives with the one coming through weights.
  const float turn_x = n.output.pos.x - L.gap * 0.5f;
  FlowArrow v_to_output = flow_arrow(n.v, n.output, {right_mid(n.v)});
  if (L.v_route_y > n.v.center_y() + 0.5f) {
    const float drop_x = n.v.max().x + L.gap * 0.4f;
    v_to_output.points.push_back(at(drop_x, n.v.center_y()));
    v_to_output.points.push_back(at(drop_x, L.v_route_y));
  }
  v_to_output.points.push_back(at(turn_x, L.v_route_y));
  v_to_output.points.push_back(left_at(n.output, 0.65f));
  arrows.push_back(v_to_output);
  return arrows;
}

// Top to bottom: each arrow leaves the bottom of its source and enters the top of its target;
// scores → weights goes sideways, and V → output down the right-hand side into the output's side.
std::vector<FlowArrow> make_vertical_arrows(const FlowNodes& n, const FlowLayout& L, ImVec2 o) {
  auto at = [o](float x, float y) { return ImVec2(o.x + x, o.y + y); };
  auto bottom_at = [&](const FlowNode& node, float fraction) {
    return at(node.pos.x + node.size.x * fraction, node.max().y);
  };
  auto top_at = [&](const FlowNode& node, float fraction) { return at(node.pos.x + node.size.x * fraction, node.pos.y); };
  const FlowNode& k_source = n.cross ? n.x_kv : n.x;
  std::vector<FlowArrow> arrows;
  arrows.push_back(flow_arrow(n.x, n.q, {bottom_at(n.x, 0.5f), top_at(n.q, 0.5f)}));
  arrows.push_back(flow_arrow(k_source, n.k, {bottom_at(k_source, 0.5f), top_at(n.k, 0.5f)}));
  arrows.push_back(flow_arrow(k_source, n.v, {bottom_at(k_source, 0.5f), top_at(n.v, 0.5f)}));
  arrows.push_back(flow_arrow(n.q, n.scores, {bottom_at(n.q, 0.5f), top_at(n.scores, 0.35f)}));
  arrows.push_back(flow_arrow(n.k, n.scores, {bottom_at(n.k, 0.5f), top_at(n.scores, 0.65f)}));
  arrows.push_back(flow_arrow(n.scores, n.weights, {at(n.scores.max().x, n.scores.center_y()), at(n.weights.pos.x, n.weights.center_y())}));
  if (!L.compact) arrows.back().label = "softmax";
  arrows.push_back(flow_arrow(n.weights, n.output, {bottom_at(n.weights, 0.5f), top_at(n.output, 0.5f)}));
  arrows.push_back(flow_arrow(n.v, n.output, {at(n.v.max().x, n.v.center_y()), at(L.v_route_x, n.v.center_y()),
                                        at(L.v_route_x, n.output.center_y()), at(n.output.max().x, n.output.center_y())}));
  return arrows;
}

void draw_arrows(ImDrawList* dl, const std::vector<FlowArrow>& arrows, float pulse) {
  const float font = ImGui::GetFontSize();
  const float thickness = std::max(1.0f, font * 0.09f);
  const ImU32 idle = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const ImU32 lit = ImGui::GetColorU32(ImGuiCol_PlotLinesHovered);
  for (const FlowArrow& a : arrows) {
    const float travel = (pulse - static_cast<float>(a.from_stage)) / static_cast<float>(a.to_stage - a.from_stage);
    const bool moving = travel >= 0 && travel < 1;
    const ImU32 color = moving ? lit : idle;
    for (std::size_t i = 1; i + 1 < a.points.size(); ++i) dl->AddLine(a.points[i - 1], a.points[i], color, thickness);
    arrow(dl, a.points[a.points.size() - 2], a.points.back(), color, thickness);
    if (moving) dl->AddCircleFilled(point_along(a.points, travel), font * 0.22f, lit);
    if (a.label) {
      const ImVec2 mid((a.points[0].x + a.points[1].x) * 0.5f, (a.points[0].y + a.points[1].y) * 0.5f);
      const ImVec2 size = ImGui::CalcTextSize(a.label);
      dl->AddText(ImVec2(mid.x - size.x * 0.5f, mid.y - size.y - font * 0.2f), ImGui::GetColorU32(ImGuiCol_Text),
                  a.label);
    }
  }
}

// Token names left of the rows. Names that would collide with the one above are skipped; the
// selected token's name is always drawn (in the highlight colour) and keeps its neighbours off.
void draw_row_labels(ImDrawList* dl, const FlowNode& node, ImVec2 grid, const FlowLayout& L,
                     const std::vector<std::string>& labels, int selected, float label_width) {
  const float line = ImGui::GetTextLineHeight();
  const float right = grid.x - ImGui::GetFontSize() * 0.3f;
  const float max_width = label_width - ImGui::GetFontSize() * 0.4f;
  auto label_top = [&](int i) { return grid.y + L.cell * (static_cast<float>(i) + 0.5f) - line * 0.5f; };
  const bool has_selected = selected >= 0 && selected < node.row_count();
  float next_free = -1e9f;
  for (int i = 0; i < node.row_count() && i < static_cast<int>(labels.size()); ++i) {
    const bool is_selected = i == selected;
    if (!is_selected) {
      if (!L.show_row_labels) continue;
      if (label_top(i) < next_free) continue;
      if (has_selected && std::fabs(label_top(i) - label_top(selected)) < line) continue;
    }
    const std::string text = fit_text(labels[static_cast<std::size_t>(i)], max_width);
    const float w = ImGui::CalcTextSize(text.c_str()).x;
    const ImU32 color = ImGui::GetColorU32(is_selected ? ImGuiCol_PlotLinesHovered : ImGuiCol_Text);
    dl->AddText(ImVec2(right - w, label_top(i)), color, text.c_str());
    if (!is_selected) next_free = label_top(i) + line;
  }
}

void node_explanation(const FlowNode& node, const HeatmapHover& hover, const AppState& state,
                      const std::vector<std::string>& query_tokens, const std::vector<std::string>& key_tokens) {
  const auto& row_tokens = node.rows == RowsAre::QueryTokens ? query_tokens : key_tokens;
  ImGui::PushTextWrapPos(explanation_wrap(24.0f));
  ImGui::TextUnformatted(node.meaning.c_str());
  if (!node.detail.empty()) hint(node.detail.c_str());
  ImGui::Separator();
  // The row to list: the selected token's where rows are query tokens; the hovered key otherwise.
  const bool query_rows = node.rows == RowsAre::QueryTokens;
  const int row = query_rows ? state.inputs.token : hover.row;
  if (row >= 0 && row < node.row_count()) {
    ImGui::Text("%s “%s”:", query_rows ? "Selected token" : "Key", token_name(row_tokens, row).c_str());
    ImGui::TextUnformatted(row_entries(*node.matrix, row, node.col_names, 8).c_str());
  } else {
    hint("Hover a row to see that key token's numbers.");
  }
  if (hover.row >= 0) {
    const float value = (*node.matrix)(hover.row, hover.col);
    ImGui::Text("Under the mouse: %s → %s = %s", token_name(row_tokens, hover.row).c_str(),
                node.col_names[static_cast<std::size_t>(hover.col)].c_str(), number_text(value, 2).c_str());
    if (node.selectable) hint("Click to follow this token.");
  }
  ImGui::PopTextWrapPos();
}

// One box: background, title, recipe, the heatmap and its row labels. Returns the hovered cell.
HeatmapHover draw_node(ImDrawList* dl, const FlowNode& node, const FlowLayout& L, ImVec2 o, const AppState& state,
                       const std::vector<std::string>& row_tokens, float glow) {
  const float font = ImGui::GetFontSize();
  // whole pixels: the hue borders stay crisp lines of their colour, not blends with the background
  const ImVec2 box_min(std::floor(o.x + node.pos.x), std::floor(o.y + node.pos.y));
  const ImVec2 box_max(std::floor(o.x + node.max().x), std::floor(o.y + node.max().y));
  const Palette& p = palette();
  dl->AddRectFilled(box_min, box_max, color(p.box_bg), font * 0.25f);
  // Q, K and V keep their hue in every view: here the border and the name
  dl->AddRect(box_min, box_max, node.hue ? color(*node.hue) : color(p.box_border), font * 0.25f, 0,
              node.hue ? std::max(2.0f, std::round(font * 0.12f)) : 1.0f);
  // Header: the name (and shape) bright, the recipe dimmed.
  const auto lines = header_lines(node, L.compact);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const bool recipe = i + 1 == lines.size();
    const ImU32 c = recipe ? ImGui::GetColorU32(ImGuiCol_TextDisabled) : node.hue ? color(*node.hue) : color(p.text);
    dl->AddText(ImVec2(box_min.x + L.pad, box_min.y + L.pad + ImGui::GetTextLineHeight() * static_cast<float>(i)), c,
                lines[i].c_str());
  }

  const ImVec2 grid(o.x + node.grid.x, o.y + node.grid.y);
  const int selected = node.highlight_selected ? state.inputs.token : -1;
  if (grid.x - box_min.x > L.pad + 1.0f) draw_row_labels(dl, node, grid, L, row_tokens, selected, grid.x - box_min.x - L.pad);

  // A faint backing under the cells: the 1-px gaps between them then read as grid lines on any
  // theme (on a white box, near-zero cells would otherwise merge with the background).
  const ImVec2 grid_max(grid.x + node.cell_w * node.col_count(), grid.y + L.cell * node.row_count());
  dl->AddRectFilled(grid, grid_max, ImGui::GetColorU32(ImGuiCol_Text, 0.25f));

  HeatmapStyle style;
  style.cell = L.cell;
  style.cell_width = node.cell_w;
  style.signed_values = node.signed_values;
  style.range = node.range;
  style.highlight_row = selected;
  ImGui::SetCursorScreenPos(grid);
  const HeatmapHover hover = heatmap(node.id, node.matrix->data(), node.row_count(), node.col_count(), style);
  // This box's colour scale: the same colour means the same number only within one box
  scale_bar(dl, ImVec2(box_min.x + L.pad, grid_max.y + font * 0.2f), box_max.x - box_min.x - L.pad * 2.0f, style);

  if (glow > 0) {  // the change pulse has just reached this box
    const ImVec4 accent = ImGui::GetStyleColorVec4(ImGuiCol_PlotLinesHovered);
    dl->AddRect(box_min, box_max, ImGui::GetColorU32(ImVec4(accent.x, accent.y, accent.z, glow)), font * 0.25f, 0,
                std::max(1.5f, font * 0.14f));
  }
  return hover;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Legend and readout
// ---------------------------------------------------------------------------------------------

void draw_legends(const AppState& state, float right_edge) {
  const float font = ImGui::GetFontSize();
  const float bar = font * 5.0f;
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  qkv_legend();
  HeatmapStyle signed_style;
  signed_style.signed_values = true;
  same_line_if_fits(ImGui::CalcTextSize("values−+").x + bar + spacing * 3, font * 1.5f, right_edge);
  legend("values", signed_style, bar, true);
  const char* per_box = "each box's own range is under it";
  same_line_if_fits(ImGui::CalcTextSize(per_box).x, spacing, right_edge);
  hint(per_box);

  // legend() draws: caption, "0", the bar, "1", with item spacing between them.
  const HeatmapStyle weight_style;
  const float weights_width = ImGui::CalcTextSize("weights01").x + bar + spacing * 3;
  same_line_if_fits(weights_width, font * 1.5f, right_edge);
  legend("weights", weight_style, bar);
  if (causal_shown(state)) {
    // a sliding-window layer also hides the keys before its window
    const char* masked = state.model.family->window > 0 ? "masked: a later token, or one before the window (−∞)"
                                                        : "masked: a later token (−∞)";
    const float masked_width = ImGui::CalcTextSize(masked).x + ImGui::GetTextLineHeight() * 1.5f + spacing;
    same_line_if_fits(masked_width, font * 1.5f, right_edge);
    masked_legend(masked);
  }
}


// The selected token, in words: what it looks for, whom it reads from, what it comes away with.
void draw_readout(const AppState& state, const std::vector<std::string>& query_tokens,
                  const std::vector<std::string>& key_tokens) {
  const AttentionTrace& t = state.model.trace;
  const int token = state.inputs.token;
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_PlotLinesHovered));
  ImGui::TextWrapped("Selected: “%s”, token %d of %d", query_tokens[static_cast<std::size_t>(token)].c_str(), token + 1,
                     static_cast<int>(query_tokens.size()));
  ImGui::PopStyleColor();

  const int q_cols = static_cast<int>(t.query.cols()), v_cols = static_cast<int>(t.output.cols());
  ImGui::TextWrapped("Its query q (what it looks for): %s",
                     row_entries(t.query, token, column_names(state, Columns::Query, q_cols), 4).c_str());

  ImGui::TextWrapped("It attends most to%s: %s", cross_shown(state) ? " (in the second sentence)" : "",
                     strongest_keys_text(state.views.flow.strongest, key_tokens).c_str());

  ImGui::TextWrapped("Its output (what it takes away): %s",
                     row_entries(t.output, token, column_names(state, Columns::Value, v_cols), 4).c_str());
}

// A real model's head: its slices of the layer's W_Q, W_K, W_V (C × head width), as images.
void draw_head_projections(const AppState& state) {
  const HeadProjections* head = state.model.answer ? state.model.answer->projections.get() : nullptr;
  if (!current_loaded_model(state) || !head) return;
  const float font = ImGui::GetFontSize();
  ImGui::TextUnformatted("This head's projections: its columns of the layer's W_Q, W_K and W_V");
  hint(("Q = " + projection_formula(state, 'q', "X") + ", K = " + projection_formula(state, 'k', "X") + ", V = " +
        projection_formula(state, 'v', "X") + ". Rows: X's columns; columns: the head's dimensions.")
           .c_str());
  const char* names[3] = {"W_Q", "W_K", "W_V"};
  const float height = font * 6.0f, width = font * 5.0f;
  for (int which = 0; which < 3; ++which) {
    const Matrix& w = head->weights[which];
    if (which) ImGui::SameLine(0, font * 1.5f);
    ImGui::BeginGroup();
    ImGui::Text("%s  %s", names[which], shape_text(w).c_str());
    HeatmapStyle style;
    style.signed_values = true;
    style.range = max_abs_finite(w);
    style.cell = height / static_cast<float>(std::max<Eigen::Index>(1, w.rows()));
    style.cell_width = width / static_cast<float>(std::max<Eigen::Index>(1, w.cols()));
    ImGui::PushID(which);
    const int rows = static_cast<int>(w.rows()), cols = static_cast<int>(w.cols());
    const HeatmapHover hover = heatmap("##head_w", w.data(), rows, cols, style);
    explain_parts("##head_w", rows * cols, hover.row >= 0 ? hover.row * cols + hover.col : -1, -1, [&](int cell) {
      const int r = cell / cols, c = cell % cols;
      ImGui::Text("%s[%d, %d] = %s  (row: X's dim %d; column: the head's dim %d)", names[which], r, c,
                  number_text(w(r, c), 3).c_str(), r, c);
    });
    ImGui::PopID();
    ImGui::EndGroup();
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] draw_flow_panel
// ---------------------------------------------------------------------------------------------

// One labelled bar of a length (or a signed share when `signed_range`): label, bar, number.
// Returns whether the mouse is over the row.
bool length_bar(const std::string& label, float value, float range, ImU32 fill, const std::string& number,
                float label_width, bool signed_range = false) {
  const float font = ImGui::GetFontSize(), line = ImGui::GetTextLineHeight();
  const ImGuiStyle& style = ImGui::GetStyle();
  const float bar_width = std::clamp(ImGui::GetContentRegionAvail().x - label_width - font * 6.0f, font * 4.0f, font * 16.0f);
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImGui::Dummy(ImVec2(label_width + bar_width + font * 6.0f, line));
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const std::string shown = fit_text(label, label_width - style.ItemSpacing.x);
  dl->AddText(ImVec2(p.x + label_width - style.ItemSpacing.x - ImGui::CalcTextSize(shown.c_str()).x, p.y),
              ImGui::GetColorU32(ImGuiCol_Text), shown.c_str());
  const ImVec2 a(p.x + label_width, p.y + line * 0.15f), b(a.x + bar_width, p.y + line * 0.85f);
  dl->AddRectFilled(a, b, ImGui::GetColorU32(ImGuiCol_FrameBg));
  const float r = std::max(range, 1e-12f);
  if (signed_range) {
    const float mid = (a.x + b.x) * 0.5f, end = mid + (b.x - a.x) * 0.5f * std::clamp(value / r, -1.0f, 1.0f);
    dl->AddRectFilled(ImVec2(std::min(mid, end), a.y), ImVec2(std::max(mid, end), b.y), fill);
    dl->AddLine(ImVec2(mid, a.y - line * 0.1f), ImVec2(mid, b.y + line * 0.1f), ImGui::GetColorU32(ImGuiCol_Text));
  } else {
    dl->AddRectFilled(a, ImVec2(a.x + (b.x - a.x) * std::clamp(value / r, 0.0f, 1.0f), b.y), fill);
  }
  dl->AddText(ImVec2(b.x + style.ItemSpacing.x, p.y), ImGui::GetColorU32(ImGuiCol_Text), number.c_str());
  return hovered;
}

// Around the chosen head (a loaded model): the heads joined, W_O, the residual stream, the MLP.
void draw_around_head(const AppState& state) {
  const AroundHeadView& a = state.model.around;
  if (!a.loaded) return;
  const float font = ImGui::GetFontSize();
  const int H = static_cast<int>(a.head_parts.size());
  const std::string token = "“" + state.model.queries.tokens[static_cast<std::size_t>(a.token)].text + "”";
  ImGui::TextUnformatted(("Around this head: what layer " + std::to_string(state.inputs.layer + 1) + " does with it, at " +
                          token).c_str());
  paragraph(("A head's output is not the layer's output. The layer sets its " + std::to_string(H) +
             " heads' outputs side by side, multiplies them by W_O and adds the result to the residual stream: the "
             "running sum of vectors that every layer reads and adds to. The MLP then reads the stream (after its "
             "norm) and adds its own update, and the next layer reads the sum. Lengths of these vectors at " + token +
             " (the model's own run, before any switch of the controls):").c_str());
  const float label_width = font * 9.0f;
  ImGui::BeginGroup();
  const float longest = std::max({a.stream_in, a.attention_update, a.mlp_update, a.stream_out});
  const ImU32 stream = color(palette().text_dim), update = color(palette().value);
  const float lengths[4] = {a.stream_in, a.attention_update, a.mlp_update, a.stream_out};
  static const char* const kLengthLabels[4] = {"stream in", "+ attention", "+ MLP", "= stream out"};
  static const char* const kLengthMeanings[4] = {
      "The residual stream entering the layer (the embedding plus what every earlier layer added)",
      ("What the attention adds (the heads' outputs side by side, times W_O; plus b_O, and normed again, where the "
       "model has them)"),
      "What the MLP adds (it reads the stream after the attention's update)",
      "The stream leaving the layer (the next layer's input)"};
  int hovered = -1;
  for (int i = 0; i < 4; ++i)
    if (length_bar(kLengthLabels[i], lengths[i], longest, i == 0 || i == 3 ? stream : update, number_text(lengths[i], 2),
                   label_width))
      hovered = i;
  ImGui::EndGroup();
  publish_item_rect("flow:around");
  explain_parts("##around_lengths", 4, hovered, 1, [&](int i) {
    ImGui::TextWrapped("%s at %s: length %s (its Euclidean norm). An update much shorter than the stream changes it "
                       "little.", kLengthMeanings[i], token.c_str(), number_text(lengths[i], 2).c_str());
  });
  ImGui::Spacing();
  ImGui::TextUnformatted(a.shares_add_up ? "Each head's share of the attention's update (along its direction)"
                                         : "Each head's part of the attention's output, by length");
  float range = 0;
  const std::vector<float>& values = a.shares_add_up ? a.head_shares : a.head_parts;
  for (float v : values) range = std::max(range, std::fabs(v));
  ImGui::BeginGroup();
  int hovered_head = -1;
  for (int h = 0; h < H; ++h) {
    const float v = values[static_cast<std::size_t>(h)];
    const bool chosen = h == a.head;
    if (length_bar((chosen ? "→ head " : "head ") + std::to_string(h + 1), v, range,
                   color(chosen ? palette().accent : palette().value, chosen ? 1.0f : 0.55f),
                   a.shares_add_up ? number_text(v * 100.0f, 0) + "%" : number_text(v, 2), label_width, a.shares_add_up))
      hovered_head = h;
  }
  ImGui::EndGroup();
  publish_item_rect("flow:head_shares");
  explain_parts("##around_heads", H, hovered_head, a.head, [&](int h) {
    ImGui::TextWrapped("Head %d at %s: its part of the attention's output has length %s%s", h + 1, token.c_str(),
                       number_text(a.head_parts[static_cast<std::size_t>(h)], 2).c_str(),
                       a.shares_add_up ? (", " + number_text(a.head_shares[static_cast<std::size_t>(h)] * 100.0f, 0) +
                                          "% of the update along its direction.").c_str()
                                       : ".");
  });
  hint(around_text(state).c_str());
}

void draw_flow_panel(const AppState& state, Action& action, UiState&) {
  AppInputs& next = action.inputs;
  // The visible width, with a vertical scrollbar's room kept free. Wrapped text must stop here:
  // by default ImGui wraps at the scrolled content's width, past the visible edge.
  // Measured from the window, not from the region left beside a scrollbar: with the region, the
  // scrollbar's coming and going resized the boxes, which brought it back or sent it away (the
  // layout flipped between two sizes for a few frames after each change).
  const float scrollbar = ImGui::GetStyle().ScrollbarSize;
  const float visible_width =
      ImGui::GetWindowWidth() - ImGui::GetStyle().WindowPadding.x - ImGui::GetCursorPosX() - scrollbar;
  const float right_edge = ImGui::GetCursorScreenPos().x + visible_width;
  ImGui::PushTextWrapPos(ImGui::GetCursorPos().x + visible_width);

  panel_intro(
      "Token vectors flow left to right: into queries, keys and values, then scores, weights and each token's "
      "output. Hover a box for its formula and numbers; click a row to follow that token.");
  head_banner(state);
  if (state.inputs.mistake != Mistake::None) {
    const std::string note = std::string("Showing the mistake “") + mistake_name(state.inputs.mistake) +
                             "”: the boxes hold its numbers, the labels name the correct recipe.";
    hint(note.c_str());
  }
  draw_legends(state, right_edge);
  ImGui::Spacing();

  const auto query_tokens = query_labels(state), key_tokens = key_labels(state);
  FlowNodes nodes = make_nodes(state);
  // Room for the readout (four lines) under the diagram.
  const ImVec2 avail(visible_width, ImGui::GetContentRegionAvail().y - ImGui::GetTextLineHeightWithSpacing() * 5.0f);
  const FlowLayout layout = fit_layout(nodes, state, avail, attn::ui::layout().narrow);

  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float pulse = pulse_position(state);
  draw_arrows(dl, make_arrows(nodes, layout, origin), pulse);

  const bool window_hovered = ImGui::IsWindowHovered();
  for (FlowNode* node : nodes.all()) {
    const auto& row_tokens = node->rows == RowsAre::QueryTokens ? query_tokens : key_tokens;
    const HeatmapHover hover = draw_node(dl, *node, layout, origin, state, row_tokens, stage_glow(pulse, node->stage));
    if (node->selectable && hover.row >= 0) {
      ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
      if (ImGui::IsItemClicked()) next.token = hover.row;
    }
    const ImVec2 box_min(origin.x + node->pos.x, origin.y + node->pos.y);
    const ImVec2 box_max(origin.x + node->max().x, origin.y + node->max().y);
    // every box as "flow:NAME"; the X box, where the picture starts, is the view's picture ("flow:X")
    if (node == &nodes.x) publish_picture_rect(View::Flow, box_min, box_max);
    else publish_rect(("flow:" + node->name).c_str(), box_min, box_max);
    // Parts: the cells row by row, then the box itself (its formula, the selected token's row).
    const int cols = node->col_count(), cells = node->row_count() * cols;
    const int part = !window_hovered || !ImGui::IsMouseHoveringRect(box_min, box_max) ? -1
                     : hover.row >= 0                                                 ? hover.row * cols + hover.col
                                                                                      : cells;
    // Presentation mode explains the weights' box first: the softmax's result, the lesson's core.
    explain_parts(node->id, cells + 1, part, node->name == "weights" ? cells : -1, [&](int p) {
      HeatmapHover cell;
      if (p < cells) cell = HeatmapHover{p / cols, p % cols};
      node_explanation(*node, cell, state, query_tokens, key_tokens);
    });
  }

  // The selected token's name right of its output row: where it ends up.
  if (layout.output_tag_width > 0) {
    const float font = ImGui::GetFontSize();
    const FlowNode& out = nodes.output;
    const int token = state.inputs.token;
    const std::string tag =
        "← " + fit_text(query_tokens[static_cast<std::size_t>(token)], layout.output_tag_width - font * 1.2f);
    const float row_center = origin.y + out.grid.y + layout.cell * (static_cast<float>(token) + 0.5f);
    dl->AddText(ImVec2(origin.x + out.max().x + font * 0.3f, row_center - ImGui::GetTextLineHeight() * 0.5f),
                ImGui::GetColorU32(ImGuiCol_PlotLinesHovered), tag.c_str());
  }

  // Reserve the diagram's area so the window scrolls to it and the readout starts below.
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(layout.total);
  ImGui::Spacing();
  draw_readout(state, query_tokens, key_tokens);
  if (real_model(state)) {
    ImGui::Spacing();
    draw_head_projections(state);
    ImGui::Spacing();
    draw_around_head(state);
  } else {
    ImGui::Spacing();
    hint("In a real model this head would be one of many: their outputs are joined, multiplied by W_O and added "
         "to a residual stream, and an MLP follows. The hand-made model has one head and stops at its output; "
         "load a model (or choose the trained one) to see what happens around a head.");
  }
  ImGui::PopTextWrapPos();
}


}  // namespace attn::ui
