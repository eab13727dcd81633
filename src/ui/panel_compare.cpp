// The compare view: attention depends on the input. One query word in two sentences (the lesson's
// tired / wide twins by default), or two query words of one sentence, each with its row of weights
// and the difference between them. Not a model: it reads AppModel's trace and compare trace.
//
// [SECTION] The two rows and their difference
// [SECTION] Drawing
// [SECTION] The view and its data
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "layout.h"
#include "model_ui.h"
#include "panels.h"
#include "widgets.h"

namespace attn::ui {

namespace {

// [SECTION] The two rows and their difference

struct CompareSide {
  std::string title;              // "A: the sentence in the controls", "B: ..."
  std::string sentence;
  int query = 0;                  // the query row
  std::string query_text;
  std::vector<std::string> keys;  // key token texts
  std::vector<float> weights;     // that row's weights (−∞ where the causal mask hides a key)
  int best = 0;                   // the largest weight's key (the first of a tie)
  int tied = 1;                   // how many keys share the largest weight
};

struct Comparison {
  bool tokens = false;              // two query tokens of one sentence (else two sentences)
  CompareSide a, b;
  // B − A per key position where the two rows line up: the same key token there, or two sentences
  // of the same length (the twins differ in one word: "tired/wide"); NaN where they do not.
  std::vector<float> difference;
  std::vector<std::string> difference_keys;  // "street", or "tired/wide" where the words differ
  int largest_change = -1;          // the key of A with the largest |B − A| ≥ kVisibleChange, or -1
  bool top_moved = false;           // the best key's text differs between A and B (both without a tie)
};

// A change of a weight smaller than this does not show at two decimals: two forwards of different
// lengths can differ in the last float bits (the kernels' blocks follow T) where the maths is equal.
constexpr float kVisibleChange = 0.005f;

CompareSide side(const AttentionTrace& t, const EmbeddedSentence& keys, int query, const std::string& query_text,
                 const std::string& title, const std::string& sentence) {
  CompareSide s;
  s.title = title;
  s.sentence = sentence;
  s.query = query;
  s.query_text = query_text;
  for (const Token& k : keys.tokens) s.keys.push_back(k.text);
  float top = -1;
  for (int j = 0; j < static_cast<int>(t.weights.cols()); ++j) {
    const bool hidden = key_hidden_by_mask(t, query, j);
    const float w = t.weights(query, j);
    s.weights.push_back(hidden ? -std::numeric_limits<float>::infinity() : w);
    if (!hidden && w > top) {
      top = w;
      s.best = j;
    }
  }
  s.tied = 0;
  for (float w : s.weights) s.tied += std::isfinite(w) && std::fabs(w - top) <= 1e-6f * std::max(1.0f, top);
  return s;
}

Comparison compare(const AppState& state) {
  const AppModel& m = state.model;
  Comparison c;
  c.tokens = state.inputs.compare_tokens || m.compare_queries.tokens.empty();
  const int token = state.inputs.token;
  c.a = side(m.trace, m.keys, token, m.queries.tokens[token].text,
             c.tokens ? "A: query " + std::to_string(token + 1) : "A: the sentence in the controls", state.inputs.sentence);
  if (c.tokens) {
    const int other = std::clamp(state.inputs.compare_token, 0, static_cast<int>(m.queries.tokens.size()) - 1);
    c.b = side(m.trace, m.keys, other, m.queries.tokens[other].text, "B: query " + std::to_string(other + 1),
               state.inputs.sentence);
  } else {
    // The same word as the query of B: at the same position where B has it there (a word that occurs
    // twice, "the", stays the same one), else where it first occurs, else the same position (clamped).
    const auto& b_tokens = m.compare_queries.tokens;
    const std::string& word = m.queries.tokens[token].lower;
    const int found = token < static_cast<int>(b_tokens.size()) && b_tokens[token].lower == word
                          ? token
                          : find_token(m.compare_queries, word);
    const int query = found >= 0 ? found : std::min(token, static_cast<int>(b_tokens.size()) - 1);
    const EmbeddedSentence& keys = cross_shown(state) ? m.keys : m.compare_queries;
    c.b = side(m.compare, keys, query, m.compare_queries.tokens[query].text, "B: the second sentence",
               state.inputs.compare_sentence);
  }
  float largest = 0;
  const bool same_length = c.a.keys.size() == c.b.keys.size();
  for (int j = 0; j < static_cast<int>(c.a.keys.size()); ++j) {
    const bool same_word = j < static_cast<int>(c.b.keys.size()) && c.a.keys[j] == c.b.keys[j];
    c.difference_keys.push_back(same_word || !same_length ? c.a.keys[j] : c.a.keys[j] + "/" + c.b.keys[j]);
    const bool lined_up = (same_word || same_length) && std::isfinite(c.a.weights[j]) && std::isfinite(c.b.weights[j]);
    const float d = lined_up ? c.b.weights[j] - c.a.weights[j] : std::numeric_limits<float>::quiet_NaN();
    c.difference.push_back(d);
    if (lined_up && std::fabs(d) >= kVisibleChange && std::fabs(d) > largest) {
      largest = std::fabs(d);
      c.largest_change = j;
    }
  }
  // A tie has no single best key: a move is only claimed between two clear winners.
  c.top_moved = c.a.tied == 1 && c.b.tied == 1 && c.a.keys[c.a.best] != c.b.keys[c.b.best];
  return c;
}


// "'animal' (0.65)", or "a tie of 2 keys at 0.33".
std::string best_text(const CompareSide& s) {
  if (s.tied > 1) return "no single key: " + std::to_string(s.tied) + " tie at " + number_text(s.weights[s.best], 2);
  return in_quotes(s.keys[s.best]) + " (" + number_text(s.weights[s.best], 2) + ")";
}

std::string verdict(const AppState& state, const Comparison& c) {
  const std::string qa = in_quotes(c.a.query_text), qb = in_quotes(c.b.query_text);
  std::string text = c.tokens ? qa + " attends most to " + best_text(c.a) + ", " + qb + " to " + best_text(c.b) + "."
                              : "In A, " + qa + " attends most to " + best_text(c.a) + "; in B, " + qb + " to " +
                                    best_text(c.b) + ".";
  if (c.largest_change >= 0)
    text += " The largest change: " + in_quotes(c.difference_keys[c.largest_change]) + " " +
            (c.difference[c.largest_change] >= 0 ? "+" : "") + number_text(c.difference[c.largest_change], 2) + ".";
  else if (!c.difference.empty())
    text += " Not one weight changes (to two decimals).";
  if (c.tokens) return text + " Same keys, different queries: each query reads the same sentence its own way.";
  std::size_t first_difference = 0;
  while (first_difference < c.a.keys.size() && first_difference < c.b.keys.size() &&
         c.a.keys[first_difference] == c.b.keys[first_difference])
    ++first_difference;
  if (causal_shown(state) && static_cast<int>(first_difference) > c.a.query && static_cast<int>(first_difference) > c.b.query)
    return text + " Under the causal mask " + qa + " reads only itself and the words before it, and the two "
                  "sentences differ only after it, so its row cannot change. Choose a later token as the query "
                  "(the word that differs) to see a difference.";
  // What a weight is, said once beside every verdict: where this head looks, not why the model answers.
  const std::string caution =
      " A weight says where this head looks, not what the model concludes: a large weight on a key whose value "
      "is small changes little.";
  if (c.top_moved) {
    text += " The top weight moves from " + in_quotes(c.a.keys[c.a.best]) + " to " + in_quotes(c.b.keys[c.b.best]) + ".";
    // In a first layer every query and key is its token at its place, so two keys both sentences share at the
    // same places keep the ratio of their weights: the top can move only onto or off a word that differs.
    const bool first_layer = !real_model(state) || state.inputs.layer == 0;
    if (first_layer && c.a.keys.size() == c.b.keys.size() && c.a.query == c.b.query && c.a.query_text == c.b.query_text)
      text += " In a first layer that is all a change of one word can do: every query and key there comes from its "
              "token (and its place, where the model has positions) alone, so the words both sentences share keep "
              "the ratios of their weights, and the top moves only onto or off a word that differs.";
    return text + caution;
  }
  if (real_model(state))
    return text + " The top weight stays on the same word in this head; other heads and layers may differ (the Heads "
                  "view shows them all)." + caution;
  const bool pronoun = c.a.query_text == "it" || c.a.query_text == "It";
  return text + " The top weight stays on the same word: the hand-made model reads " + qa + " the same way in both "
         "sentences. " + (pronoun ? "Its pronoun query always seeks a creature, and" : "Each word's query is set by its "
         "word class alone, and") + " with one layer and no context nothing later in the sentence changes it. The "
         "trained model (\"" + kBuiltInTrainedModel + "\" in the Model list; the Train view) learns from text: add "
         "\" . it refers to the\" to both sentences, pick that last word and read the next-token strip, which changes "
         "with the adjective." + caution;
}

// What the model answers in both sentences and what the chosen layer's heads do to it, one line
// each (drawn under the verdict; view_data.ask for the mirror). Empty where nothing was asked.
std::vector<std::string> ask_lines(const AppState& state, const Comparison& c) {
  const CompareAsk& ask = state.model.compare_ask;
  const LoadedModel* m = find_model(state, state.inputs.model);
  if (c.tokens || !m || !ask.shown) return {};
  const auto word = [&](int id) { return in_quotes(m->tokenizer->display(id)); };
  const auto signed_number = [](float v) { return (v >= 0 ? "+" : "") + number_text(v, 2); };
  std::vector<std::string> lines;
  lines.push_back("Asked at " + in_quotes(c.a.query_text) + ", the model's likeliest next token is " + word(ask.answer_a) +
                  " in A (p " + number_text(ask.p_a, 2) + ") and " + word(ask.answer_b) + " in B (p " +
                  number_text(ask.p_b, 2) + ").");
  const std::string measured = ask.against >= 0 ? "the logit of " + word(ask.target) + " minus that of " + word(ask.against)
                                                : "the logit of " + word(ask.target);
  const bool layers = m->model->config.n_layer > 1;
  lines.push_back("Measured: " + measured + ", " + signed_number(ask.difference_a) + " in A and " +
                  signed_number(ask.difference_b) + " in B. Each head's direct share is its output through W_O, the "
                  "final norm's scale of this run and the unembedding; everything else (the embeddings, b_O, the " +
                  (layers ? "MLPs, the other layers' heads" : "MLP") + ") adds " + signed_number(ask.rest_a) + " in A and " +
                  signed_number(ask.rest_b) + " in B.");
  const std::string L = "L" + std::to_string(ask.layer + 1);
  for (std::size_t h = 0; h < ask.heads.size(); ++h) {
    const AskedHead& a = ask.heads[h];
    std::string line = L + " H" + std::to_string(h + 1) + ": direct share " + signed_number(a.share_a) + " in A, " +
                       signed_number(a.share_b) + " in B.";
    if (ask.ablated) {
      const auto off = [&](const char* side, int answer, int own, float delta) {
        return std::string(side) + " answers " + word(answer) + (answer == own ? " still" : " instead") +
               " (log p of " + word(own) + " " + signed_number(delta) + ")";
      };
      line += " Switched off: " + off("A", a.answer_a, ask.answer_a, a.delta_a) + ", " +
              off("B", a.answer_b, ask.answer_b, a.delta_b) + ".";
    }
    lines.push_back(line);
  }
  if (ask.ablated)
    lines.push_back("A direct share counts only what a head writes straight into the answer; switching it off also "
                    "takes away what the MLP and later layers make of it, so the two can disagree: switching off is the "
                    "test of what the model needs.");
  else
    lines.push_back("Switching each head off is computed here only where it takes at most " + std::to_string(kAskReruns) +
                    " layer runs; for this model the Heads view's sweep does it, a few heads per frame.");
  const bool same_query = c.a.query == c.b.query && c.a.query_text == c.b.query_text;
  if (ask.layer == 0 && same_query)
    lines.push_back("In a first layer the ratio of a head's weights on two keys is e to the difference of their "
                    "scores, whatever the other keys are, and each score there comes from two tokens and their "
                    "places alone: on the words both sentences share, no head of " + L + " can change which one it "
                    "prefers. The answer changes through the word that differs (its weight and its value) and what "
                    "comes after the heads.");
  return lines;
}

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

// view_data.ask: null, or {position, layer, answer_a, answer_b, p_a, p_b, target, against, difference_a,
// difference_b, rest_a, rest_b, ablated, heads: [{share_a, share_b, answer_a?, answer_b?, delta_a?,
// delta_b?}], text} (token ids; text: the lines the view draws).
nlohmann::json ask_json(const AppState& state, const Comparison& c) {
  const std::vector<std::string> lines = ask_lines(state, c);
  if (lines.empty()) return nullptr;
  const CompareAsk& a = state.model.compare_ask;
  nlohmann::json heads = nlohmann::json::array();
  for (const AskedHead& h : a.heads) {
    nlohmann::json j = {{"share_a", h.share_a}, {"share_b", h.share_b}};
    if (a.ablated) j.update({{"answer_a", h.answer_a}, {"answer_b", h.answer_b}, {"delta_a", h.delta_a}, {"delta_b", h.delta_b}});
    heads.push_back(j);
  }
  std::string text;
  for (const std::string& line : lines) text += (text.empty() ? "" : " ") + line;
  return {{"position", a.position}, {"layer", a.layer}, {"answer_a", a.answer_a}, {"answer_b", a.answer_b},
          {"p_a", a.p_a}, {"p_b", a.p_b}, {"target", a.target}, {"against", a.against >= 0 ? nlohmann::json(a.against) : nlohmann::json(nullptr)},
          {"difference_a", a.difference_a}, {"difference_b", a.difference_b}, {"rest_a", a.rest_a}, {"rest_b", a.rest_b},
          {"ablated", a.ablated}, {"heads", heads}, {"text", text}};
}

// Whether B runs with the learner's switched-off heads and cut links too ("" when there are none).
std::string edits_note(const AppState& state) {
  if (!current_loaded_model(state) || state.inputs.compare_tokens || (state.inputs.ablate.empty() && state.inputs.cuts.empty()))
    return "";
  if (!state.model.compare_edit_note.empty()) return state.model.compare_edit_note;
  return "Both sentences run with your switched-off heads and cut links (a patch changes A alone); the questions "
         "below ask the model as it is.";
}

// [SECTION] Patching every part alone (input patch_sweep)

// What the patching sweep measured, in words (under its map; view_data.patch_sweep.text).
std::string patch_sweep_text(const AppState& state) {
  const SweepRun& r = state.patch_sweep;
  const LoadedModel* m = find_model(state, state.inputs.model);
  if (!m || !r.model || r.sweep.done == 0) return "";
  const std::string word = "'" + m->tokenizer->display(r.target) + "'";
  const bool heads = r.over == SweepOver::PatchHeads;
  std::string text = std::to_string(r.sweep.done) + " of " + std::to_string(r.total()) +
                     (heads ? " heads' outputs" : " streams (layer, position)") + " copied from B into A, each alone. " +
                     "log p of " + word + " is " + number_text(static_cast<float>(r.sweep.baseline), 2) + " in A and " +
                     number_text(static_cast<float>(r.sweep.source), 2) + " in B.";
  if (std::fabs(r.sweep.source - r.sweep.baseline) < kMinRestorable)
    return text + " The two differ by under " + number_text(kMinRestorable, 2) + ": no difference to restore.";
  const int cols = static_cast<int>(r.sweep.values.cols());
  if (const int best = largest_cell(r.sweep.values); best >= 0) {
    const std::string where = heads ? "L" + std::to_string(best / cols + 1) + " H" + std::to_string(best % cols + 1)
                                    : "the stream entering L" + std::to_string(best / cols + 1) + " at '" +
                                          state.model.queries.tokens[static_cast<std::size_t>(best % cols)].text + "'";
    text += " The most: " + where + ", " + number_text(r.sweep.values.data()[best] * 100.0f, 0) + "% of the difference.";
  }
  return text + " 100%: that part alone carries the difference between the sentences; 0%: none of it; two parts "
                "may each carry it, which patching one at a time shows as two high cells.";
}

// view_data.patch_sweep: null before one, else {running, over: "heads" | "positions", done, total,
// position, target, baseline (A's log p), source (B's), values [L][H or T] (null: not run, or nothing
// to restore), text}.
nlohmann::json patch_sweep_json(const AppState& state) {
  const SweepRun& r = state.patch_sweep;
  if (!r.model) return nullptr;
  return {{"running", state.inputs.patch_sweep != AppInputs::PatchSweep::None && !r.finished()},
          {"over", r.over == SweepOver::PatchPositions ? "positions" : "heads"}, {"done", r.sweep.done},
          {"total", r.total()}, {"position", r.position}, {"target", r.target}, {"baseline", r.sweep.baseline},
          {"source", r.sweep.source}, {"values", sweep_values_json(r)}, {"text", patch_sweep_text(state)}};
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

void draw_compare_panel(const AppState& state, AppInputs& next, UiState& all) {
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
  publish_item_rect("compare:picture");
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

nlohmann::json compare_view_data(const AppState& state) {
  const Comparison c = compare(state);
  const auto side_json = [](const CompareSide& s) {
    nlohmann::json w = nlohmann::json::array();
    for (float v : s.weights) w.push_back(std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr));
    return nlohmann::json{{"sentence", s.sentence}, {"query", s.query}, {"query_text", s.query_text},
                          {"keys", s.keys},         {"weights", w},     {"best", s.best},
                          {"best_text", s.keys[s.best]}, {"tied", s.tied}};
  };
  nlohmann::json difference = nlohmann::json::array();
  for (float d : c.difference) difference.push_back(std::isfinite(d) ? nlohmann::json(d) : nlohmann::json(nullptr));
  return {{"mode", c.tokens ? "tokens" : "sentences"},
          {"model", state.inputs.model},
          {"a", side_json(c.a)},
          {"b", side_json(c.b)},
          {"difference", difference},
          {"difference_keys", c.difference_keys},
          {"largest_change", c.largest_change >= 0 ? nlohmann::json{{"key", c.largest_change},
                                                                   {"token", c.difference_keys[c.largest_change]},
                                                                   {"change", c.difference[c.largest_change]}}
                                                   : nlohmann::json(nullptr)},
          {"top_moved", c.top_moved},
          {"verdict", verdict(state, c)},
          {"ask", ask_json(state, c)},
          {"patch_sweep", patch_sweep_json(state)},
          {"edits", edits_note(state)}};
}

}  // namespace attn::ui
