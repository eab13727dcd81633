// What a model family adds to a head, drawn in the Heads view (groups, layer strip, positions, window,
// soft-cap, q/k norm) and the Cost view (the K/V cache). Not the maths: every number comes from
// state.model.family (family_views.h), computed once per input change; these functions only draw.
//
// [SECTION] Small drawing helpers
// [SECTION] Heads: groups and the layer strip
// [SECTION] Positions
// [SECTION] The window, soft-capping, q/k norm
// [SECTION] Cost: the K/V cache
// [SECTION] Data for getState() and the screen-reader mirror (the Heads view's: family_view_data, src/state/heads_view.cpp)
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "family_panels.h"
#include "layout.h"
#include "model_ui.h"
#include "panels.h"
#include "widgets.h"

namespace attn::ui {

namespace {

// [SECTION] Small drawing helpers

const FamilyViews& family(const AppState& state) { return *state.model.family; }
const TransformerConfig* config_of(const AppState& state) {
  const LoadedModel* m = current_loaded_model(state);
  return m ? &m->model->config : nullptr;
}

std::string token_text(const AppState& state, int t) {
  const auto& tokens = state.model.queries.tokens;
  return t >= 0 && t < static_cast<int>(tokens.size()) ? tokens[static_cast<std::size_t>(t)].text : "?";
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// The view's width that can be drawn in without a sideways scroll.
float view_width() { return ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize; }

// A bulleted line that wraps at the view's width (ImGui::BulletText never wraps: on a phone it
// pushed the Cost view sideways).
void bullet_line(const char* text) {
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + view_width());
  ImGui::Bullet();
  ImGui::SameLine();
  ImGui::TextWrapped("%s", text);
  ImGui::PopTextWrapPos();
}

float largest_abs(const Matrix& m) {
  float r = 0;
  for (Eigen::Index i = 0; i < m.size(); ++i)
    if (std::isfinite(m.data()[i])) r = std::max(r, std::fabs(m.data()[i]));
  return r > 0 ? r : 1.0f;
}

// A matrix as a small signed heatmap with a caption above, `width` wide at most.
void small_heatmap(const char* id, const char* caption, const Matrix& m, float range, float width, int highlight_row) {
  ImGui::BeginGroup();
  ImGui::TextUnformatted(caption);
  HeatmapStyle s;
  s.signed_values = true;
  s.range = range;
  const float font = ImGui::GetFontSize();
  s.cell_width = std::clamp(width / static_cast<float>(std::max<Eigen::Index>(1, m.cols())), 1.0f, font);
  s.cell = std::clamp(font * 8.0f / static_cast<float>(std::max<Eigen::Index>(1, m.rows())), 1.0f, font * 0.8f);
  s.highlight_row = highlight_row;
  heatmap(id, m.data(), static_cast<int>(m.rows()), static_cast<int>(m.cols()), s);
  ImGui::EndGroup();
}

// Two pictures side by side when both fit, else one under the other (a phone).
template <typename A, typename B>
void side_by_side(float each, A&& left, B&& right) {
  left();
  same_line_if_fits(each, ImGui::GetFontSize());
  right();
}

// [SECTION] Positions

// One vector's dimension pairs as dials: the thin line before the rotation, the arrow after.
void draw_dials(const char* caption, const Vector& before, const Vector& after, ImU32 hue, float width) {
  const int pairs = static_cast<int>(before.size()) / 2;
  if (pairs <= 0) return;
  const float font = ImGui::GetFontSize();
  const float dial = std::max(font * 2.2f, std::min(font * 3.2f, width / 8.0f));
  const int per_row = std::max(1, static_cast<int>(width / (dial + font * 0.3f)));
  const int shown = std::min(pairs, std::max(per_row, std::min(16, per_row * 2)));
  ImGui::TextUnformatted(caption);
  float longest = 1e-12f;
  for (int p = 0; p < shown; ++p)
    longest = std::max(longest, std::hypot(before[p], before[p + pairs]));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 ring = ImGui::GetColorU32(ImGuiCol_Border), dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float label_h = ImGui::GetTextLineHeight();
  for (int p = 0; p < shown; ++p) {
    const int r = p / per_row, c = p % per_row;
    const ImVec2 centre(origin.x + c * (dial + font * 0.3f) + dial * 0.5f, origin.y + r * (dial + label_h) + dial * 0.5f);
    const float radius = dial * 0.42f;
    dl->AddCircle(centre, radius, ring, 24, 1.0f);
    // screen y grows downwards: the second dimension of the pair points up
    const float sb = radius / longest;
    const ImVec2 b(centre.x + before[p] * sb, centre.y - before[p + pairs] * sb);
    const ImVec2 a(centre.x + after[p] * sb, centre.y - after[p + pairs] * sb);
    dl->AddLine(centre, b, dim, std::max(1.0f, font * 0.08f));
    arrow(dl, centre, a, hue, std::max(1.5f, font * 0.12f));
    char label[16];
    std::snprintf(label, sizeof label, "%d", p + 1);
    const float w = ImGui::CalcTextSize(label).x;
    dl->AddText(ImVec2(centre.x - w * 0.5f, centre.y + dial * 0.5f), dim, label);
  }
  const int rows = (shown + per_row - 1) / per_row;
  ImGui::Dummy(ImVec2(std::min(width, per_row * (dial + font * 0.3f)), rows * (dial + label_h)));
  if (shown < pairs) hint(("Pairs 1–" + std::to_string(shown) + " of " + std::to_string(pairs) + " shown; the later ones turn ever more slowly.").c_str());
}

// The score of the same two vectors against their distance: a line, a dot at their real distance.
void draw_distance_plot(const PositionsView& p, float width) {
  const std::vector<float>& y = p.by_distance;
  if (y.empty()) return;
  const float font = ImGui::GetFontSize();
  const float height = std::clamp(width * 0.45f, font * 8.0f, font * 13.0f);
  const float left = ImGui::CalcTextSize("−00.00").x + font * 0.4f, bottom = ImGui::GetTextLineHeight() * 2.2f;
  const ImVec2 o = ImGui::GetCursorScreenPos();
  ImGui::Dummy(ImVec2(width, height));
  publish_rect("heads:distance_plot", o, ImVec2(o.x + width, o.y + height));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const ImU32 line = color(palette().line_blue), mark = ImGui::GetColorU32(ImGuiCol_PlotLinesHovered);
  float lo = *std::min_element(y.begin(), y.end()), hi = *std::max_element(y.begin(), y.end());
  lo = std::min(lo, 0.0f), hi = std::max(hi, 0.0f);
  if (hi - lo < 1e-6f) hi = lo + 1;
  const float x0 = o.x + left, x1 = o.x + width - font * 0.5f, y0 = o.y + font * 0.5f, y1 = o.y + height - bottom;
  const int n = static_cast<int>(y.size());
  auto X = [&](int d) { return n > 1 ? x0 + (x1 - x0) * d / static_cast<float>(n - 1) : (x0 + x1) * 0.5f; };
  auto Y = [&](float v) { return y1 - (y1 - y0) * (v - lo) / (hi - lo); };
  dl->AddRect(ImVec2(x0, y0), ImVec2(x1, y1), ImGui::GetColorU32(ImGuiCol_Border));
  dl->AddLine(ImVec2(x0, Y(0)), ImVec2(x1, Y(0)), dim, 1.0f);  // score 0
  const float tick_room = ImGui::GetTextLineHeight();
  for (float v : {0.0f, lo, hi}) {
    if (v != 0.0f && std::fabs(Y(v) - Y(0)) < tick_room) continue;  // too close to the 0 label
    const std::string t = number_text(v, 2);
    dl->AddText(ImVec2(x0 - ImGui::CalcTextSize(t.c_str()).x - font * 0.2f, Y(v) - ImGui::GetTextLineHeight() * 0.5f), dim, t.c_str());
  }
  for (int d : {0, n - 1}) {
    const std::string t = std::to_string(d);
    dl->AddText(ImVec2(X(d) - ImGui::CalcTextSize(t.c_str()).x * 0.5f, y1 + 2), dim, t.c_str());
  }
  const char* x_label = "distance d (query position − key position)";
  dl->AddText(ImVec2(std::max(x0, (x0 + x1 - ImGui::CalcTextSize(x_label).x) * 0.5f), y1 + ImGui::GetTextLineHeight() + 2), text, x_label);
  for (int d = 1; d < n; ++d) dl->AddLine(ImVec2(X(d - 1), Y(y[d - 1])), ImVec2(X(d), Y(y[d])), line, std::max(1.5f, font * 0.1f));
  const float dot = std::max(2.0f, std::min(font * 0.25f, (x1 - x0) / (3.0f * n)));
  for (int d = 0; d < n; ++d) dl->AddCircleFilled(ImVec2(X(d), Y(y[d])), dot, line);
  const int real = p.query_token - p.key_token;
  if (real >= 0 && real < n) {
    const ImVec2 c(X(real), Y(y[real]));
    dl->AddCircle(c, dot + font * 0.3f, mark, 16, std::max(2.0f, font * 0.12f));
    const std::string t = "d = " + std::to_string(real) + ": " + number_text(y[real], 2);
    const float tw = ImGui::CalcTextSize(t.c_str()).x;
    // beside the ring, not over the line: right of it where it fits, else left
    const float ring = dot + font * 0.3f;
    const float tx = c.x + ring + 4 + tw <= x1 ? c.x + ring + 4 : std::max(x0 + 2, c.x - ring - 4 - tw);
    const float ty = std::clamp(c.y - ImGui::GetTextLineHeight() - ring * 0.5f, y0, y1 - ImGui::GetTextLineHeight());
    dl->AddText(ImVec2(tx, ty), mark, t.c_str());
  }
}

void draw_positions(const AppState& state) {
  const FamilyViews& f = family(state);
  const PositionsView& p = f.positions;
  heading("Positions");
  paragraph(kWhyPositions);
  if (!f.loaded) {
    paragraph("The hand-made model gives its tokens no positions at all: the same words in another order get "
              "the same scores.");
    return;
  }
  if (!p.rope) {
    if (p.learned)
      paragraph("This model learned one vector per position and added it to each token's vector before the first "
                "layer. So q and k carry where a token stands inside their content; nothing in the head turns or "
                "moves them, and there is no separate rule for distance to draw here.");
    else
      paragraph("This model adds no position information to q and k.");
    return;
  }
  const float width = std::min(view_width(), ImGui::GetFontSize() * 34.0f);
  const std::string qi = token_text(state, p.query_token), kj = token_text(state, p.key_token);
  paragraph(("No position vectors are added to X here. Instead every head turns its q and k by their positions "
             "(RoPE): dimensions i and i + " + std::to_string(p.head_dim / 2) +
             " form a pair that turns by position × that pair's frequency, the first pairs fastest "
             "(base θ = " + fmt("%g", p.theta) + ").").c_str());
  const float each = std::min(width, ImGui::GetFontSize() * 17.0f);
  side_by_side(each, [&] {
    ImGui::BeginGroup();
    draw_dials(("q of " + qi + " at position " + std::to_string(p.query_token)).c_str(), p.q_before, p.q_after,
               color(palette().query), each);
    ImGui::EndGroup();
  }, [&] {
    ImGui::BeginGroup();
    draw_dials(("k of " + kj + " at position " + std::to_string(p.key_token)).c_str(), p.k_before, p.k_after,
               color(palette().key), each);
    ImGui::EndGroup();
  });
  hint("Thin line: the pair before the rotation; arrow: after it. Position 0 does not turn.");
  ImGui::Spacing();
  ImGui::TextUnformatted(("Score of the same two vectors at distances 0 … " + std::to_string(f.T - 1)).c_str());
  draw_distance_plot(p, width);
  paragraph(("Take q of " + qi + " and k of " + kj + " before the rotation and place them d positions apart: "
             "their score is this line, wherever the pair stands in the text. Turning both by the same extra "
             "angle leaves their dot product unchanged; only the difference of their positions counts. The ring "
             "marks their real distance, whose score is the one this head used.").c_str());
}

// [SECTION] The window, soft-capping, q/k norm

constexpr int kMaskShownMax = 48;  // tokens of the mask drawn cell by cell

void draw_window(const AppState& state) {
  const FamilyViews& f = family(state);
  if (!f.loaded || f.window <= 0) return;
  heading(("The window of layer " + std::to_string(f.layer + 1)).c_str());
  const int w = f.window, T = f.T;
  paragraph(("This layer sees the last " + std::to_string(w) + " tokens: query i reads keys i − " +
             std::to_string(w - 1) + " … i and nothing older, so its mask is a band along the diagonal.").c_str());
  if (w >= T)
    hint(("Your text has " + std::to_string(T) + " tokens, no more than the window: here the band is the whole "
          "causal triangle. Type a longer text to see it cut.").c_str());
  const int n = std::min(T, kMaskShownMax);
  const float font = ImGui::GetFontSize();
  const float cell = std::clamp(std::min(view_width(), font * 20.0f) / static_cast<float>(n), 2.0f, font);
  const ImVec2 o = ImGui::GetCursorScreenPos();
  ImGui::Dummy(ImVec2(cell * n, cell * n));
  publish_rect("heads:window_band", o, ImVec2(o.x + cell * n, o.y + cell * n));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 seen = color(palette().accent), old = color(palette().text_dim, 0.35f);
  const int row = std::clamp(state.inputs.token, 0, T - 1);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const ImVec2 a(o.x + cell * j, o.y + cell * i), b(a.x + cell - (cell >= 6 ? 1 : 0), a.y + cell - (cell >= 6 ? 1 : 0));
      if (j > i) draw_masked_cell(dl, a, b);
      else if (i - j >= w) dl->AddRectFilled(a, b, old);
      else dl->AddRectFilled(a, b, seen);
    }
  if (row < n) dl->AddRect(ImVec2(o.x, o.y + cell * row), ImVec2(o.x + cell * n, o.y + cell * (row + 1)),
                           ImGui::GetColorU32(ImGuiCol_Text), 0, 0, 1.5f);
  if (T > n) hint(("The first " + std::to_string(n) + " of " + std::to_string(T) + " tokens.").c_str());
  // legend
  auto swatch = [&](ImU32 c, bool hatched, const char* text) {
    const ImVec2 a = ImGui::GetCursorScreenPos();
    const float s = ImGui::GetTextLineHeight();
    ImGui::Dummy(ImVec2(s, s));
    if (hatched) draw_masked_cell(dl, a, ImVec2(a.x + s, a.y + s));
    else dl->AddRectFilled(a, ImVec2(a.x + s, a.y + s), c);
    ImGui::SameLine();
    ImGui::TextUnformatted(text);
  };
  swatch(seen, false, "seen: in the window");
  same_line_if_fits(ImGui::CalcTextSize("older than the window").x + font * 2);
  swatch(old, false, ("older than the window (" + std::to_string(w) + " or more back)").c_str());
  same_line_if_fits(ImGui::CalcTextSize("future (causal mask)").x + font * 2);
  swatch(0, true, "future (causal mask)");
}

void draw_softcap(const AppState& state) {
  const FamilyViews& f = family(state);
  if (!f.loaded || !f.softcap.on) return;
  const SoftcapView& s = f.softcap;
  const AttentionTrace& t = state.model.trace;
  heading("Soft-capping the scores");
  paragraph(("Before the mask this model passes every score through tanh(s / c) · c with c = " + fmt("%g", s.cap) +
             ": small scores come through almost unchanged, large ones flatten towards ±" + fmt("%g", s.cap) +
             ", so no key can win by an extreme score alone.").c_str());
  // both with the mask's hidden cells hatched, as the softmax sees them
  Matrix before = t.scaled_scores, after = t.capped_scores;
  for (Eigen::Index i = 0; i < before.rows(); ++i)
    for (Eigen::Index j = 0; j < before.cols(); ++j)
      if (mask_hides(t.options, i, j)) before(i, j) = after(i, j) = -std::numeric_limits<float>::infinity();
  const float range = std::max(largest_abs(before), 1e-6f);
  const float each = std::min(view_width(), ImGui::GetFontSize() * 16.0f);
  side_by_side(each, [&] { small_heatmap("##uncapped", "scaled scores", before, range, each, state.inputs.token); },
               [&] { small_heatmap("##capped", ("capped at " + fmt("%g", s.cap)).c_str(), after, range, each, state.inputs.token); });
  publish_item_rect("heads:softcap");
  HeatmapStyle legend_style;
  legend_style.signed_values = true;
  legend_style.range = range;
  legend("score (both on one scale)", legend_style, ImGui::GetFontSize() * 8.0f);
  hint(("Largest |score| " + number_text(s.largest_scaled, 3) + " before the cap, " + number_text(s.largest_capped, 3) +
        " after; the cap changed a score by at most " + number_text(s.largest_change, 3) + ".").c_str());
}

void draw_qk_norm(const AppState& state) {
  const FamilyViews& f = family(state);
  if (!f.loaded || !f.qk_norm.on) return;
  const QkNormView& n = f.qk_norm;
  heading("Q/K norm");
  paragraph("Each head's q and k are divided by their root mean square (then multiplied by a learned weight per "
            "dimension) before the rotation: every row comes out about the same size, so a score cannot grow just "
            "because one vector is long.");
  const float each = std::min(view_width(), ImGui::GetFontSize() * 16.0f);
  const int row = std::clamp(state.inputs.token, 0, f.T - 1);
  const float qr = std::max(largest_abs(n.q_before), largest_abs(n.q_after));
  const float kr = std::max(largest_abs(n.k_before), largest_abs(n.k_after));
  side_by_side(each, [&] { small_heatmap("##qbefore", "q before the norm", n.q_before, qr, each, row); },
               [&] { small_heatmap("##qafter", "q after", n.q_after, qr, each, row); });
  publish_item_rect("heads:qk_norm");
  side_by_side(each, [&] { small_heatmap("##kbefore", "k before the norm", n.k_before, kr, each, row); },
               [&] { small_heatmap("##kafter", "k after", n.k_after, kr, each, row); });
  const std::string tok = token_text(state, row);
  const std::size_t r = static_cast<std::size_t>(row);
  hint(("Rows: tokens; columns: the head's " + std::to_string(n.q_before.cols()) + " dimensions; one colour scale for "
        "q, one for k. Root mean square of " + tok + "'s q: " + number_text(n.q_rms_before[r], 2) + " before, " +
        number_text(n.q_rms_after[r], 2) + " after; of its k: " + number_text(n.k_rms_before[r], 2) + " before, " +
        number_text(n.k_rms_after[r], 2) + " after.").c_str());
}

// [SECTION] Cost: the K/V cache

}  // namespace

// [SECTION] Heads: groups and the layer strip

void draw_head_groups_line(const AppState& state) {
  const TransformerConfig* c = config_of(state);
  if (!c) return;
  std::string text = head_groups_text(*c);
  if (c->kv_group() > 1)
    text += " Grouped-query attention: the heads of a group score their own queries against the same keys and mix "
            "the same values; the columns below are grouped that way.";
  hint(text.c_str());
  publish_item_rect("heads:groups");
}

void draw_layer_strip(const AppState& state, AppInputs& next) {
  const TransformerConfig* c = config_of(state);
  if (!c || !c->any_window()) return;
  int local = 0;
  for (const LayerSpec& l : c->layers) local += l.window > 0;
  const int global = c->n_layer - local;
  std::string text = "Layers: " + std::to_string(local) + " local (each sees only the last few tokens) and " +
                     std::to_string(global) + " global (sees the whole text).";
  hint(text.c_str());
  const float font = ImGui::GetFontSize();
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(font * 0.2f, font * 0.2f));
  for (int l = 0; l < c->n_layer; ++l) {
    const int w = c->layers[static_cast<std::size_t>(l)].window;
    char label[48];
    if (w > 0) std::snprintf(label, sizeof label, "%d local %d##layer%d", l + 1, w, l);
    else std::snprintf(label, sizeof label, "%d global##layer%d", l + 1, l);
    if (l > 0) same_line_if_fits(button_width(label));
    const bool chosen = l == state.inputs.layer;
    ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(chosen ? ImGuiCol_ButtonActive : ImGuiCol_FrameBg));
    if (ImGui::Button(label)) next.layer = l;
    ImGui::PopStyleColor();
    char name[32];
    std::snprintf(name, sizeof name, "heads:layer:%d", l);
    publish_item_rect(name);
  }
  ImGui::PopStyleVar();
  hint("A number after \"local\" is the layer's window in tokens. Click a layer to show it in every view.");
}

void draw_family_sections(const AppState& state, AppInputs& next) {
  (void)next;
  ImGui::Spacing();
  draw_positions(state);
  draw_window(state);
  draw_softcap(state);
  draw_qk_norm(state);
}

namespace {
// What a new token computes with the cache, and the measured times of the last forward (model_run.h):
// the lines the Cost view writes and getState's view_data reads.
struct KvUpdateTexts {
  std::string computes, measured;
  double new_token_score_macs = 0, full_score_macs = 0;  // per layer: one query row per head, or every row
};
KvUpdateTexts kv_update_texts(const AppState& state, const TransformerConfig& c, int T) {
  KvUpdateTexts t;
  const double H = c.n_head, hd = c.head_dim, t_keys = T;
  t.new_token_score_macs = H * t_keys * hd;                  // q·k for every cached key, per head
  t.full_score_macs = H * hd * t_keys * (t_keys + 1) / 2.0;  // every row again, each against the keys before it
  char line[400];
  if (c.causal) {
    std::snprintf(line, sizeof line,
                  "A new token computes its own row in every layer: one query per head against the %d keys held "
                  "(%s multiply-adds of scores per layer), where the whole text again would be %s, and its MLP row alone.",
                  T, grouped_digits(static_cast<std::int64_t>(t.new_token_score_macs)).c_str(),
                  grouped_digits(static_cast<std::int64_t>(t.full_score_macs)).c_str());
  } else {
    std::snprintf(line, sizeof line, "An encoder reads both ways: a new token changes every earlier row, so each change "
                                     "computes the whole text again (no cache helps it).");
  }
  t.computes = line;
  const ModelRun& r = state.model_run;
  if (r.last_ms < 0) return t;
  const std::string where = r.last_where == "worker" ? "in the model's worker" : "in the page";
  std::string m;
  if (r.incremental_from >= r.last_T) {
    std::snprintf(line, sizeof line, "Measured: the last change (T = %d) needed no new rows: %.1f ms %s.", r.last_T, r.last_ms,
                  where.c_str());
    m = line;
  } else if (r.incremental_from > 0) {
    std::snprintf(line, sizeof line, "Measured: the last change (T = %d) computed rows %d to %d again: %.1f ms %s.", r.last_T,
                  r.incremental_from + 1, r.last_T, r.last_ms, where.c_str());
    m = line;
  } else {
    std::snprintf(line, sizeof line, "Measured: the last change (T = %d) computed every row: %.1f ms %s.", r.last_T, r.last_ms,
                  where.c_str());
    m = line;
  }
  if (r.full_ms >= 0 && r.incremental_from != 0) {
    std::snprintf(line, sizeof line, " The last full forward (T = %d): %.1f ms.", r.full_T, r.full_ms);
    m += line;
  }
  t.measured = m;
  return t;
}
}  // namespace

void draw_kv_cache_section(const AppState& state) {
  const TransformerConfig* c = config_of(state);
  heading("The K/V cache");
  if (!c) {
    paragraph("While a model writes text it keeps every earlier token's keys and values (the K/V cache), so each new "
              "token computes only its own. Load a model in the controls to see how much its cache holds.");
    return;
  }
  const KvCacheView& v = family(state).cache;
  const std::string bpn = std::to_string(v.bytes_per_number);
  paragraph(("While a model writes, it keeps every earlier token's key and value in each layer (the K/V cache), so "
             "a new token only computes its own. For " + state.inputs.model + " at your T = " + std::to_string(v.T) +
             " tokens, " + bpn + " bytes a number (the width its weights are stored in):").c_str());
  char line[256];
  std::snprintf(line, sizeof line, "per token and layer: 2 × %d K/V heads × %d = %s numbers", v.n_kv_head, v.head_dim,
                grouped_digits(v.per_token_layer).c_str());
  bullet_line(line);
  if (v.n_kv_head != v.n_head) {
    std::snprintf(line, sizeof line, "without sharing it would be 2 × %d heads × %d = %s (%d× as many)", v.n_head,
                  v.head_dim, grouped_digits(v.per_token_layer_unshared).c_str(), v.n_head / std::max(1, v.n_kv_head));
    bullet_line(line);
  }
  std::snprintf(line, sizeof line, "all %d layers: %s numbers = %s", v.n_layer, grouped_digits(v.numbers).c_str(),
                bytes_text(static_cast<double>(v.bytes())).c_str());
  bullet_line(line);
  publish_item_rect("cost:kv_cache");
  // bars: what is held, against without sharing and without windows
  const float font = ImGui::GetFontSize(), width = std::min(view_width(), font * 28.0f);
  const double top = static_cast<double>(std::max({v.bytes(), v.bytes_unshared(), v.bytes_no_window(), std::uint64_t{1}}));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  auto bar = [&](const char* caption, std::uint64_t bytes, Rgb hue) {
    const std::string text = std::string(caption) + ": " + bytes_text(static_cast<double>(bytes));
    ImGui::TextUnformatted(text.c_str());
    const ImVec2 a = ImGui::GetCursorScreenPos();
    const float h = font * 0.7f;
    ImGui::Dummy(ImVec2(width, h));
    dl->AddRectFilled(a, ImVec2(a.x + width, a.y + h), ImGui::GetColorU32(ImGuiCol_FrameBg));
    dl->AddRectFilled(a, ImVec2(a.x + std::max(1.0f, width * static_cast<float>(static_cast<double>(bytes) / top)), a.y + h), color(hue));
  };
  bar("this model's cache", v.bytes(), palette().line_blue);
  if (v.n_kv_head != v.n_head) bar("if every head kept its own K and V", v.bytes_unshared(), palette().line_orange);
  if (v.bytes_no_window() != v.bytes()) bar("if no layer had a window", v.bytes_no_window(), palette().line_green);
  if (c->any_window()) {
    int local = 0, w = 0;
    for (const LayerSpec& l : c->layers)
      if (l.window > 0) ++local, w = std::max(w, l.window);
    hint(("A sliding-window layer keeps at most its window's tokens: here " + std::to_string(local) + " of " +
          std::to_string(v.n_layer) + " layers keep at most " + std::to_string(w) + " each, however long the text.")
             .c_str());
  }
  hint("Doubling T doubles the cache of every layer without a window: it grows like T, not T².");
  const KvUpdateTexts u = kv_update_texts(state, *c, v.T);
  paragraph(u.computes.c_str());
  if (!u.measured.empty()) paragraph(u.measured.c_str());
  if (state.model_run.pending) hint("updating… the model's worker computes your change");
  publish_item_rect("cost:kv_update");
}

// [SECTION] Data for getState() and the screen-reader mirror (the Heads view's: family_view_data, src/state/heads_view.cpp)

nlohmann::json kv_cache_view_data(const AppState& state) {
  const FamilyViews& f = family(state);
  if (!f.loaded) return {{"available", false}};
  const KvCacheView& v = f.cache;
  const KvUpdateTexts u = kv_update_texts(state, *config_of(state), v.T);
  return {{"available", true},
          {"T", v.T},
          {"layers", v.n_layer},
          {"heads", v.n_head},
          {"kv_heads", v.n_kv_head},
          {"head_dim", v.head_dim},
          {"bytes_per_number", v.bytes_per_number},
          {"per_token_layer", v.per_token_layer},
          {"per_token_layer_unshared", v.per_token_layer_unshared},
          {"tokens_held", v.tokens_held},
          {"numbers", v.numbers},
          {"bytes", v.bytes()},
          {"bytes_unshared", v.bytes_unshared()},
          {"bytes_no_window", v.bytes_no_window()},
          {"new_token", {{"text", u.computes}, {"score_macs_per_layer", u.new_token_score_macs},
                         {"full_score_macs_per_layer", u.full_score_macs}}},
          {"measured", u.measured}};
}

}  // namespace attn::ui
