// The heads view: every layer × head of the current model as a small weight matrix (bertviz's
// model view; click one to choose it), the chosen head's lines from the selected token to every
// key it may read (bertviz's head view), and a summary per head.
// Not the maths: the summaries (src/core/head_summary.h), their counts and the chosen head's largest
// weights are read from state.views.heads (view_numbers.h), the thumbnails from the forward, the
// summaries' words and the view's data from src/state/heads_view.h.
//
// [SECTION] Thumbnails (the model view)
// [SECTION] Lines from the selected token (the head view)
// [SECTION] The view and its data
#include <imgui.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "../core/head_summary.h"
#include "../gpu/matrix_image.h"
#include "../state/heads_view.h"
#include "family_panels.h"
#include "model_ui.h"
#include "panels.h"
#include "widgets.h"

namespace attn::ui {

namespace {

// [SECTION] Thumbnails (the model view)

// A thumbnail without the GPU image (no GL right now): at most 16 × 16 blocks, each the mean of
// its cells.
void draw_thumbnail_cells(ImDrawList* dl, const Matrix& w, ImVec2 a, float side) {
  const int rows = static_cast<int>(w.rows()), cols = static_cast<int>(w.cols());
  const int br = std::min(rows, 16), bc = std::min(cols, 16);
  for (int bi = 0; bi < br; ++bi)
    for (int bj = 0; bj < bc; ++bj) {
      const int r0 = bi * rows / br, r1 = (bi + 1) * rows / br, c0 = bj * cols / bc, c1 = (bj + 1) * cols / bc;
      double sum = 0;
      for (int i = r0; i < r1; ++i)
        for (int j = c0; j < c1; ++j) sum += std::isfinite(w(i, j)) ? w(i, j) : 0.0f;
      const float mean = static_cast<float>(sum / std::max(1, (r1 - r0) * (c1 - c0)));
      // a block of one cell shows its weight; bigger blocks are brightened so they do not fade out
      const float shown = (r1 - r0) * (c1 - c0) == 1 ? mean : std::min(1.0f, mean * static_cast<float>(c1 - c0));
      dl->AddRectFilled(ImVec2(a.x + side * bj / bc, a.y + side * bi / br),
                        ImVec2(a.x + side * (bj + 1) / bc, a.y + side * (bi + 1) / br), color_sequential(shown));
    }
}

struct GridLayout {
  float thumb = 0, gap = 0, label_width = 0, header = 0;
  ImVec2 size() const { return ImVec2(label_width + (thumb + gap) * static_cast<float>(heads), header + (thumb + gap) * static_cast<float>(layers)); }
  int layers = 0, heads = 0;
};

// The K/V group each query head reads, for the grid's second header line (grouped-query attention);
// 0 groups: every head has its own K/V head, or the hand-made model.
int kv_groups_shown(const AppState& state, const HeadGrid& g) {
  const LoadedModel* m = current_loaded_model(state);
  if (!m) return 0;
  const TransformerConfig& c = m->model->config;
  return c.kv_group() > 1 && c.n_head == g.heads ? c.n_kv_head : 0;
}

GridLayout layout_grid(const HeadGrid& g, float width, float height, int kv_groups) {
  const float font = ImGui::GetFontSize();
  GridLayout L;
  L.layers = g.layers;
  L.heads = g.heads;
  L.gap = std::max(2.0f, font * 0.2f);
  L.label_width = ImGui::CalcTextSize("L00").x + font * 0.4f;
  L.header = ImGui::GetTextLineHeightWithSpacing() * (kv_groups > 0 ? 2.0f : 1.0f);
  const float by_width = (width - L.label_width) / static_cast<float>(g.heads) - L.gap;
  const float by_height = (height - L.header) / static_cast<float>(g.layers) - L.gap;
  const float largest = g.layers * g.heads == 1 ? font * 10.0f : font * 5.0f;
  L.thumb = std::floor(std::clamp(std::min(by_width, std::max(by_height, font * 1.6f)), font * 1.0f, largest));
  return L;
}

// Draws the grid at the cursor; a click on a thumbnail chooses that layer and head.
void draw_thumbnails(const AppState& state, AppInputs& next, const HeadGrid& g, const GridLayout& L,
                     const std::vector<HeadSummary>& sums) {
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const ImU32 accent = ImGui::GetColorU32(ImGuiCol_PlotLinesHovered);
  const bool real = real_model(state);
  const int chosen_layer = real ? state.inputs.layer : 0, chosen_head = real ? state.inputs.head : 0;
  const float step = L.thumb + L.gap;
  // Column labels (heads) above, row labels (layers) to the left; only every k-th when crowded.
  const int label_every = std::max(1, static_cast<int>(std::ceil(ImGui::CalcTextSize("H00").x / step)));
  // Grouped-query attention: a first line names the K/V head each group of columns reads.
  const int groups = kv_groups_shown(state, g);
  const float heads_y = groups > 0 ? origin.y + ImGui::GetTextLineHeightWithSpacing() : origin.y;
  if (groups > 0) {
    const int per = g.heads / groups;
    const float line = ImGui::GetTextLineHeight();
    for (int k = 0; k < groups; ++k) {
      const float x0 = origin.x + L.label_width + step * (k * per), x1 = x0 + step * per - L.gap;
      char label[24];
      std::snprintf(label, sizeof label, x1 - x0 >= ImGui::CalcTextSize("K/V 00").x ? "K/V %d" : "%d", k + 1);
      const float w = ImGui::CalcTextSize(label).x;
      const ImU32 c = k == chosen_head / per ? accent : dim;
      dl->AddLine(ImVec2(x0, origin.y + line), ImVec2(x1, origin.y + line), c, 1.5f);
      if (w <= x1 - x0) dl->AddText(ImVec2((x0 + x1 - w) * 0.5f, origin.y), c, label);
    }
  }
  for (int h = 0; h < g.heads; ++h) {
    if (h % label_every && h != chosen_head) continue;
    char label[16];
    std::snprintf(label, sizeof label, "H%d", h + 1);
    const float w = ImGui::CalcTextSize(label).x;
    dl->AddText(ImVec2(origin.x + L.label_width + step * h + (L.thumb - w) * 0.5f, heads_y), h == chosen_head ? accent : dim, label);
  }
  int hovered_head = -1;  // l * heads + h
  for (int l = 0; l < g.layers; ++l) {
    char label[16];
    std::snprintf(label, sizeof label, "L%d", l + 1);
    const float y = origin.y + L.header + step * l;
    dl->AddText(ImVec2(origin.x, y + (L.thumb - ImGui::GetTextLineHeight()) * 0.5f), l == chosen_layer ? accent : dim, label);
    for (int h = 0; h < g.heads; ++h) {
      const Matrix& w = g.thumbnail(l, h);
      const ImVec2 a(origin.x + L.label_width + step * h, y), b(a.x + L.thumb, a.y + L.thumb);
      ImGui::SetCursorScreenPos(a);
      ImGui::PushID(l * g.heads + h);
      ImGui::InvisibleButton("##thumb", ImVec2(L.thumb, L.thumb));
      ImGui::PopID();
      char name[48];
      std::snprintf(name, sizeof name, "heads:thumb:%d:%d", l, h);
      publish_item_rect(name);
      const bool hovered = ImGui::IsItemHovered();
      if (ImGui::IsItemClicked() && real) {
        next.layer = l;
        next.head = h;
      }
      char key[40];
      std::snprintf(key, sizeof key, "heads:%d:%d", l, h);
      const ImTextureID image = w.size() > 0 ? gpu::matrix_image(key, w.data(), static_cast<int>(w.rows()),
                                                                  static_cast<int>(w.cols()), 0.0f, 1.0f,
                                                                  gpu::ColourMap::Sequential, state.model.forward_revision)
                                             : nullptr;
      if (image) dl->AddImage(image, a, b);
      else if (w.size() > 0) draw_thumbnail_cells(dl, w, a, L.thumb);
      if (real && head_ablated(state.inputs, l, h)) {  // switched off: dimmed and struck through
        dl->AddRectFilled(a, b, IM_COL32(0, 0, 0, 150));
        dl->AddLine(a, b, ImGui::GetColorU32(warning_color()), std::max(2.0f, L.thumb * 0.06f));
      }
      const bool chosen = l == chosen_layer && h == chosen_head;
      if (chosen) dl->AddRect(ImVec2(a.x - 2, a.y - 2), ImVec2(b.x + 2, b.y + 2), accent, 0, 0, std::max(2.0f, L.gap));
      if (hovered) {
        dl->AddRect(a, b, text, 0, 0, 1.5f);
        if (real) ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
        hovered_head = l * g.heads + h;
      }
    }
  }
  explain_parts("##thumbs", g.layers * g.heads, hovered_head, chosen_layer * g.heads + chosen_head, [&](int part) {
    const int l = part / g.heads, h = part % g.heads;
    const HeadSummary& s = sums[static_cast<std::size_t>(part)];
    ImGui::Text("Layer %d, head %d: %s", l + 1, h + 1, summary_label(state, s).c_str());
    ImGui::TextDisabled("%s", summary_numbers(s).c_str());
    if (real && head_ablated(state.inputs, l, h)) ImGui::TextDisabled("Switched off: its weights are drawn, its output is not used.");
    if (real && !(l == chosen_layer && h == chosen_head)) ImGui::TextDisabled("Click to show this head in every view.");
  });
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(L.size());
}

// [SECTION] Lines from the selected token (the head view)

// Switching the chosen head off (input ablate) and what "off" means (ablate_kind).
void draw_ablate_control(const AppState& state, AppInputs& next) {
  const int layer = state.inputs.layer, head = state.inputs.head;
  const std::string name = "L" + std::to_string(layer + 1) + " H" + std::to_string(head + 1);
  const bool off = head_ablated(state.inputs, layer, head);
  if (ImGui::Button(((off ? "Switch " + name + " back on" : "Switch " + name + " off") + "##ablate").c_str())) {
    if (off) next.ablate.erase(std::find(next.ablate.begin(), next.ablate.end(), HeadRef{layer, head}));
    else next.ablate.push_back({layer, head});
  }
  publish_item_rect("heads:ablate");
  explain_item("The model runs again from this layer without this head's output: the next-token strip, and every "
               "later layer's weights, show the answer without it.");
  const char* kinds[] = {"as zero", "as its mean so far"};
  int kind = state.inputs.ablate_kind == AblateKind::Zero ? 0 : 1;
  const float width = ImGui::CalcTextSize(kinds[1]).x + ImGui::GetFrameHeight() * 2.0f;
  same_line_if_fits(width);
  ImGui::SetNextItemWidth(width);
  if (ImGui::Combo("##ablate_kind", &kind, kinds, 2)) next.ablate_kind = kind == 0 ? AblateKind::Zero : AblateKind::Mean;
  publish_item_rect("heads:ablate_kind");
  explain_item("As zero: as if the head were not there. As its mean so far: at each position its average output over "
               "that position and the ones before it, so what the head always adds stays and what it says about this "
               "token goes (never a later position: the model still cannot see the future).");
}

// The chosen head's weights from the selected query token (left column) to every key (right
// column): line thickness and opacity = weight; masked keys get no line.
void draw_head_lines(const AppState& state, AppInputs& next, float width) {
  const AttentionTrace& t = state.model.trace;
  const auto& queries = state.model.queries.tokens;
  const auto& keys = state.model.keys.tokens;
  const int Tq = static_cast<int>(t.weights.rows()), Tk = static_cast<int>(t.weights.cols());
  const int row = std::clamp(state.inputs.token, 0, Tq - 1);
  const float font = ImGui::GetFontSize(), line = ImGui::GetTextLineHeight();
  const float column = std::min(font * 7.0f, width * 0.32f);
  const float gap = std::clamp(width - column * 2.0f, font * 3.0f, font * 14.0f);
  const float step = line + font * 0.1f;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const ImVec4 accent = ImGui::GetStyleColorVec4(ImGuiCol_PlotLinesHovered);
  const float rows_height = step * static_cast<float>(std::max(Tq, Tk));

  dl->AddText(origin, color(palette().query), "query");  // the query and key hues of every view
  const float key_x = origin.x + column + gap;
  dl->AddText(ImVec2(key_x, origin.y), color(palette().key), "key");
  const float top = origin.y + line + font * 0.3f;
  // lines first, so the words are drawn over them
  const float left_anchor = origin.x + column + font * 0.2f, right_anchor = key_x - font * 0.2f;
  const float from_y = top + step * row + line * 0.5f;
  for (int j = 0; j < Tk; ++j) {
    if (key_hidden_by_mask(t, row, j)) continue;
    const float w = std::clamp(t.weights(row, j), 0.0f, 1.0f);
    if (w < 0.002f) continue;
    const ImU32 c = ImGui::GetColorU32(ImVec4(accent.x, accent.y, accent.z, 0.15f + 0.85f * w));
    dl->AddLine(ImVec2(left_anchor, from_y), ImVec2(right_anchor, top + step * j + line * 0.5f), c,
                std::max(1.0f, font * 0.5f * w));
  }
  for (int i = 0; i < Tq; ++i) {
    const std::string label = fit_text(queries[static_cast<std::size_t>(i)].text, column);
    const float w = ImGui::CalcTextSize(label.c_str()).x;
    const ImVec2 p(origin.x + column - w, top + step * i);
    ImGui::SetCursorScreenPos(ImVec2(origin.x, p.y));
    ImGui::PushID(i);
    ImGui::InvisibleButton("##query", ImVec2(column, line));
    ImGui::PopID();
    if (ImGui::IsItemClicked()) next.token = i;
    if (ImGui::IsItemHovered()) ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
    if (i == row) dl->AddRectFilled(ImVec2(p.x - 2, p.y), ImVec2(p.x + w + 2, p.y + line), ImGui::GetColorU32(ImGuiCol_Header));
    dl->AddText(p, i == row ? ImGui::GetColorU32(accent) : text, label.c_str());
  }
  for (int j = 0; j < Tk; ++j) {
    const std::string label = fit_text(keys[static_cast<std::size_t>(j)].text, column);
    const bool hidden = key_hidden_by_mask(t, row, j);
    const float w = hidden ? 0.0f : std::clamp(t.weights(row, j), 0.0f, 1.0f);
    const ImVec2 p(key_x, top + step * j);
    if (w > 0.05f)
      dl->AddRectFilled(ImVec2(p.x - 2, p.y), ImVec2(p.x + ImGui::CalcTextSize(label.c_str()).x + 2, p.y + line),
                        ImGui::GetColorU32(ImVec4(accent.x, accent.y, accent.z, 0.35f * w)));
    dl->AddText(p, hidden ? dim : text, label.c_str());
  }
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(ImVec2(column * 2.0f + gap, line + font * 0.3f + rows_height));
}

void draw_chosen_head(const AppState& state, AppInputs& next, const HeadSummary& s, float width) {
  const AttentionTrace& t = state.model.trace;
  const int row = state.inputs.token;
  const std::string title = real_model(state) ? "Layer " + std::to_string(state.inputs.layer + 1) + ", head " +
                                                    std::to_string(state.inputs.head + 1)
                                              : std::string("The one head");
  ImGui::TextUnformatted(title.c_str());
  ImGui::SameLine();
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_PlotLinesHovered));
  ImGui::TextUnformatted(summary_label(state, s).c_str());
  ImGui::PopStyleColor();
  publish_item_rect("heads:summary");
  hint(summary_numbers(s).c_str());
  if (const std::string reading = summary_reading(state, s); !reading.empty()) hint(reading.c_str());
  const std::string from = "From " + state.model.queries.tokens[static_cast<std::size_t>(row)].text +
                           ", the largest weights:";
  ImGui::TextUnformatted(from.c_str());
  std::string list;
  for (int j : state.views.heads.top_keys) {
    if (key_hidden_by_mask(t, row, j) || t.weights(row, j) <= 0) continue;
    list += (list.empty() ? "" : ",  ") + key_text(state, j) + " " + number_text(t.weights(row, j), 2);
  }
  ImGui::TextWrapped("%s", list.c_str());
  if (real_model(state)) draw_ablate_control(state, next);
  ImGui::Spacing();
  draw_head_lines(state, next, width);
}


void draw_heads_sweep(const AppState& state, AppInputs& next) {
  const LoadedModel* m = find_model(state, state.inputs.model);
  if (!m || state.model.next.empty()) return;
  const SweepRun& r = state.heads_sweep;
  const TransformerConfig& c = m->model->config;
  ImGui::Spacing();
  ImGui::Separator();
  ImGui::TextUnformatted("Switch each head off: which heads does this answer need?");
  const std::string word = "'" + m->tokenizer->display(state.model.unchanged_next().front().id) + "'";
  std::string said = prediction_phrase(state, state.model.predict_position);
  said[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(said[0])));
  const std::string as_it_is = state.model.effect.shown ? " (as it is, without your changes)" : "";
  paragraph((said + as_it_is + " is " + word + ". Each head in turn is switched off (its "
             "output set to zero) and the model runs again from that head's layer: each square of the map is how much "
             "log p of " + word + " changes (blue: down, so the answer needs that head), " +
             std::to_string(c.n_layer * c.n_head) + " runs in all, " +
             (state.model_run.worker ? "in the model's worker while the page goes on." : "a few per frame."))
                .c_str());
  if (const bool on = sweep_controls(r, state.inputs.heads_sweep, "Switch every head off, one at a time", "heads:sweep");
      on != state.inputs.heads_sweep)
    next.heads_sweep = on;
  if (r.sweep.done == 0) return;
  std::vector<std::string> rows, cols;
  for (int l = 0; l < c.n_layer; ++l) rows.push_back("L" + std::to_string(l + 1));
  for (int h = 0; h < c.n_head; ++h) cols.push_back("H" + std::to_string(h + 1));
  sweep_map("heads:sweep_map", r, rows, cols, "change of log p", 0.05f, [&](int l, int h, float v) {
    const std::string cell = "L" + std::to_string(l + 1) + " H" + std::to_string(h + 1);
    return std::isnan(v) ? cell + ": not switched off yet" : cell + " off: log p of " + word + " changes by " + number_text(v, 3);
  });
  paragraph(sweep_text(state).c_str());
}


void draw_attribution(const AppState& state) {
  const LogitAttribution* a = state.model.attribution.get();
  const LoadedModel* m = find_model(state, state.inputs.model);
  if (const std::string note = attribution_note(state); !note.empty()) {
    ImGui::Spacing();
    ImGui::Separator();
    ImGui::TextUnformatted("What each head adds to the answer");
    paragraph(note.c_str());
    return;
  }
  if (!a || !m) return;
  const TransformerConfig& c = m->model->config;
  const float font = ImGui::GetFontSize();
  ImGui::Spacing();
  ImGui::Separator();
  ImGui::TextUnformatted("What each head adds to the answer");
  publish_item_rect("heads:attribution");
  std::vector<std::string> rows, cols;
  for (int l = 0; l < c.n_layer; ++l) rows.push_back("L" + std::to_string(l + 1));
  for (int h = 0; h < c.n_head; ++h) cols.push_back("H" + std::to_string(h + 1));
  HeatmapStyle s;
  s.signed_values = true;
  s.range = std::max(0.05f, a->heads.cwiseAbs().maxCoeff());
  s.show_values = true;
  s.row_labels = &rows;
  s.col_labels = &cols;
  s.cell = std::clamp((ImGui::GetContentRegionAvail().x - font * 3.0f) / static_cast<float>(c.n_head), font * 1.2f, font * 3.2f);
  legend("share of the logit", s, font * 7.0f);
  const HeatmapHover hover = heatmap("##attribution", a->heads.data(), c.n_layer, c.n_head, s);
  const int hovered = hover.row >= 0 ? hover.row * c.n_head + hover.col : -1;
  int largest = 0;
  for (int i = 1; i < static_cast<int>(a->heads.size()); ++i)
    if (std::fabs(a->heads.data()[i]) > std::fabs(a->heads.data()[largest])) largest = i;
  explain_parts("##attribution", static_cast<int>(a->heads.size()), hovered, largest, [&](int i) {
    ImGui::Text("L%d H%d writes %s into the logit", i / c.n_head + 1, i % c.n_head + 1, number_text(a->heads.data()[i], 3).c_str());
  });
  paragraph(attribution_text(state).c_str());
}

}  // namespace

// [SECTION] The view and its data

void draw_heads_panel(const AppState& state, Action& action, UiState&) {
  AppInputs& next = action.inputs;
  const float font = ImGui::GetFontSize();
  const HeadGrid grid = head_grid(state);
  const std::vector<HeadSummary>& sums = state.views.heads.summaries;
  if (sums.empty()) return;
  const bool real = real_model(state);
  if (real) {
    panel_intro("Every head of every layer at once: each square is one head's weight matrix for your text (rows: "
                "queries, columns: keys; bright = much weight). Click a square to show that head in every view.");
  } else {
    panel_intro("The hand-made model has one layer and one head, so there is one square here. Load a model in "
                "the controls to see a real model's many heads side by side.");
  }
  head_banner(state);
  draw_head_groups_line(state);
  draw_layer_strip(state, next);
  if (state.inputs.embed) next_token_strip(state, next);  // elsewhere the controls column shows it

  // Pattern counts: how many heads the rule names each way.
  if (real) {
    const HeadPattern order[] = {HeadPattern::PreviousToken, HeadPattern::NextToken, HeadPattern::FirstToken,
                                 HeadPattern::Itself, HeadPattern::OneToken, HeadPattern::LooksAhead,
                                 HeadPattern::SpreadOut, HeadPattern::Mixed, HeadPattern::TooFew};
    const char* names[] = {"previous token", "next token", "first token", "itself", "one other token", "looks ahead",
                           "spread out", "no single pattern", "too few tokens to call"};
    static_assert(sizeof order / sizeof order[0] == sizeof names / sizeof names[0], "one name per pattern");
    std::string counts;
    for (std::size_t k = 0; k < sizeof order / sizeof order[0]; ++k) {
      const int n = state.views.heads.pattern_counts[static_cast<int>(order[k])];
      if (n) counts += (counts.empty() ? "" : ", ") + std::string(names[k]) + " " + std::to_string(n);
    }
    const int sinks = state.views.heads.sinks;
    hint(("Heads by pattern: " + counts + (sinks ? " (" + std::to_string(sinks) + " of them sinks)" : "") +
          ". The rule: a head is named by the first pattern that gets at least half the weight on average, over at "
          "least " + std::to_string(kHeadMinRows) + " rows (a single key's share over at least half the rows); "
          "\"spread out\" when its rows are nearly even. A sink: a first-token head whose first value is small.")
             .c_str());
  }
  ImGui::Spacing();

  const float avail = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize;
  const float side_min = font * 16.0f;
  const bool side_by_side = avail >= side_min + font * 20.0f;
  const float grid_width = side_by_side ? std::min(avail - side_min - font, avail * 0.6f) : avail;
  const GridLayout L = layout_grid(grid, grid_width, ImGui::GetContentRegionAvail().y, kv_groups_shown(state, grid));
  const ImVec2 start = ImGui::GetCursorScreenPos();
  draw_thumbnails(state, next, grid, L, sums);
  publish_picture_rect(View::Heads, start, ImVec2(start.x + L.size().x, start.y + L.size().y));
  const int chosen = real ? state.inputs.layer * grid.heads + state.inputs.head : 0;
  const HeadSummary& s = sums[static_cast<std::size_t>(std::clamp(chosen, 0, static_cast<int>(sums.size()) - 1))];
  if (side_by_side) {
    const float x = start.x + L.size().x + font;
    ImGui::SetCursorScreenPos(ImVec2(x, start.y));
    ImGui::BeginGroup();
    ImGui::PushTextWrapPos(ImGui::GetCursorPos().x + (start.x + avail - x));
    draw_chosen_head(state, next, s, start.x + avail - x);
    ImGui::PopTextWrapPos();
    ImGui::EndGroup();
    // continue below the taller of the two columns
    const float bottom = std::max(ImGui::GetItemRectMax().y, start.y + L.size().y);
    ImGui::SetCursorScreenPos(ImVec2(start.x, bottom + ImGui::GetStyle().ItemSpacing.y));
  } else {
    ImGui::Spacing();
    draw_chosen_head(state, next, s, avail);
  }
  HeatmapStyle heat;
  legend("weight", heat, font * 6.0f);
  draw_heads_sweep(state, next);
  draw_attribution(state);
  draw_family_sections(state, next);
}


}  // namespace attn::ui
