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

namespace {

int feature_column(const char* name) {
  const auto& names = feature_names();
  for (int i = 0; i < static_cast<int>(names.size()); ++i)
    if (std::string(names[i]) == name) return i;
  return -1;
}

bool has_feature(const EmbeddedSentence& e, int token, int column) {
  return column >= 0 && !e.unknown[static_cast<std::size_t>(token)] && e.x(token, column) > 0.5f;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// Adjectives that, after "it was", tell a reader that "it" is a thing (the road, the river...).
bool describes_a_thing(const std::string& lower) {
  static const char* const kWords[] = {"wide", "narrow", "deep", "long", "busy", "closed", "full", "empty", "wet", "heavy", "steep", "icy"};
  for (const char* w : kWords)
    if (lower == w) return true;
  return false;
}

}  // namespace

const char* toy_model_description() {
  static const std::string text =
      "What this toy can do: match word classes (a pronoun seeks a creature, an adjective a noun). What it "
      "cannot: it has no positions (word order changes nothing) and no context (a word's vectors never depend on "
      "its neighbours), so \"it\" seeks a creature in every sentence, and every adjective asks the same question: "
      "\"wide\" weighs the animal above the street just as \"tired\" does. A model that learns from text "
      "can do better: the trained model (\"" + std::string(kBuiltInTrainedModel) + "\" in the Model list; the Train view).";
  return text.c_str();
}

std::vector<ModelNote> toy_model_notes(const AppState& state) {
  std::vector<ModelNote> notes;
  if (real_model(state)) return notes;
  const EmbeddedSentence &queries = state.model.queries, &keys = state.model.keys;
  const AttentionTrace& t = state.model.trace;
  const int token = state.inputs.token;
  const int creature = feature_column("creature"), thing = feature_column("thing"), pronoun = feature_column("pronoun");
  if (!has_feature(queries, token, pronoun)) return notes;
  const std::string reader = quoted(queries.tokens[static_cast<std::size_t>(token)].text);
  std::vector<int> creatures, things;
  for (int j = 0; j < static_cast<int>(keys.tokens.size()); ++j) {
    if (key_hidden_by_mask(t, token, j)) continue;
    if (has_feature(keys, j, creature)) creatures.push_back(j);
    if (has_feature(keys, j, thing)) things.push_back(j);
  }
  Eigen::Index best = 0;
  t.weights.row(token).maxCoeff(&best);
  const bool creature_wins = has_feature(keys, static_cast<int>(best), creature);
  int adjective = -1;
  for (int i = token + 1; i < static_cast<int>(queries.tokens.size()) && adjective < 0; ++i)
    if (describes_a_thing(queries.tokens[static_cast<std::size_t>(i)].lower)) adjective = i;
  if (adjective >= 0 && !things.empty() && creature_wins) {
    const std::string word = quoted(queries.tokens[static_cast<std::size_t>(adjective)].text);
    const std::string winner = quoted(keys.tokens[static_cast<std::size_t>(best)].text);
    const std::string object = quoted(keys.tokens[static_cast<std::size_t>(things.back())].text);
    notes.push_back({"wide_twin",
                     "Where the toy fails: a reader takes " + word + " to describe " + object + ", so " + reader +
                         " means " + object + ". The toy still sends " + reader + " to " + winner +
                         ": a pronoun's query always seeks a creature, and with one layer and no context nothing "
                         "after " + reader + " can change that query. The trained model (\"" + kBuiltInTrainedModel +
                         "\" in the Model list; the Train view) learns from text: its next-token answer after \"it "
                         "refers to the\" follows the adjective."});
  }
  if (creatures.size() >= 2) {
    std::string names;
    for (std::size_t i = 0; i < creatures.size() && i < 3; ++i)
      names += (i ? (i + 1 == std::min<std::size_t>(creatures.size(), 3) ? " and " : ", ") : "") +
               quoted(keys.tokens[static_cast<std::size_t>(creatures[i])].text);
    if (creatures.size() > 3) names += " and " + std::to_string(creatures.size() - 3) + " more";
    notes.push_back({"no_positions",
                     reader + " splits its weight evenly between " + names +
                         ": in this toy every creature's key is the same wherever it stands (no positions) and "
                         "nothing around a word changes it (no context), so nothing says which one " + reader +
                         " means" + (things.empty() ? "" : ", and a thing it may mean gets less still") + "."});
  }
  return notes;
}

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

std::vector<std::string> column_names(const AppState& state, Columns which, int count) {
  std::vector<std::string> names;
  if (!real_model(state)) {
    auto take = [&](const auto& list) {
      if (static_cast<int>(list.size()) == count) names.assign(list.begin(), list.end());
    };
    switch (which) {
      case Columns::Features: take(feature_names()); break;
      case Columns::Query: take(query_dim_names()); break;
      case Columns::Key: take(key_dim_names()); break;
      case Columns::Value: take(value_dim_names()); break;
    }
    if (!names.empty()) return names;
  }
  names.reserve(static_cast<std::size_t>(std::max(count, 0)));
  for (int i = 0; i < count; ++i) names.push_back("dim " + std::to_string(i));
  return names;
}

std::vector<NextTokenRow> next_tokens(const AppState& state, int k) {
  std::vector<NextTokenRow> rows;
  const LoadedModel* m = current_loaded_model(state);
  if (!m) return rows;
  for (const NextToken& n : state.model.next) {
    if (static_cast<int>(rows.size()) == k) break;
    rows.push_back({m->tokenizer ? m->tokenizer->display(n.id) : std::to_string(n.id), n.id, n.p});
  }
  return rows;
}

std::string projection_formula(const AppState& state, char which, const std::string& x) {
  const char upper = static_cast<char>(std::toupper(static_cast<unsigned char>(which)));
  std::string f = x + "·W_" + upper;
  const LoadedModel* m = current_loaded_model(state);
  if (!m) return f;
  const TransformerConfig& c = m->model->config;
  if (c.qkv_bias) f += std::string(" + b_") + upper;
  if (which == 'v') return f;
  if (c.qk_norm) f = "RMSNorm(" + f + ")";
  if (c.positions == PositionKind::Rope) f = "RoPE(" + f + ")";
  return f;
}

float score_softcap(const AppState& state) {
  const LoadedModel* m = current_loaded_model(state);
  return m ? m->model->config.attn_softcap : 0.0f;
}

std::string score_formula(const AppState& state, bool matrix) {
  const AttentionTrace& t = state.model.trace;
  const float temperature = state.inputs.temperature;
  std::string f = matrix ? "Q·Kᵀ" : "q·k_j";
  switch (trace_scaling(t, temperature)) {
    case Scaling::SqrtD: f += " / √d"; break;
    case Scaling::ModelFactor: f += " × " + number_text(t.score_factor * temperature, 4); break;
    case Scaling::None: break;
  }
  if (temperature != 1.0f) f += " ÷ " + number_text(temperature, 2);
  const float cap = score_softcap(state);
  if (cap > 0) {
    char c[32];
    std::snprintf(c, sizeof c, "%g", cap);
    f = std::string(c) + "·tanh(" + f + " / " + c + ")";
  }
  return f;
}

std::string input_norm_name(const AppState& state) {
  const LoadedModel* m = current_loaded_model(state);
  if (!m) return "";
  return m->model->config.norm == NormKind::RmsNorm ? "RMSNorm" : "LayerNorm";
}

std::string prediction_phrase(const AppState& state, int position) {
  const LoadedModel* m = current_loaded_model(state);
  const std::string token = in_quotes(state.model.queries.tokens[static_cast<std::size_t>(position)].text);
  if (m && !m->model->config.causal) return "at " + token + " (token " + std::to_string(position + 1) + ") the model's likeliest word";
  return "after " + token + " the model's likeliest next token";
}

NextStripTexts next_strip_texts(const AppState& state) {
  NextStripTexts t;
  if (!current_loaded_model(state)) return t;
  const auto& tokens = state.model.queries.tokens;
  const int at = state.inputs.token;
  const LoadedModel& m = *current_loaded_model(state);
  if (!m.model->config.causal) {  // an encoder: no "next", the words that fit at a mask
    const std::string mask = m.tokenizer->mask_id() >= 0 ? m.tokenizer->display(m.tokenizer->mask_id()) : "";
    if (!m.model->config.has_lm_head)
      t.prompt = "This file has no masked-word head (only the encoder), so the model cannot say which words fit a gap.";
    else if (mask.empty())
      t.prompt = "This model's tokenizer has no mask token, so it cannot be asked to fill a gap.";
    else if (state.model.predict_position < 0)
      t.prompt = "Type " + mask + " in place of a word: the model then lists the words it thinks fit there, "
                 "reading the words on both sides.";
    if (state.model.predict_position < 0) return t;
    const int p = state.model.predict_position;
    t.title = "Words for " + mask + " at token " + std::to_string(p + 1) + (state.model.effect.shown ? ", with your changes" : "");
    t.note = "Each bar: the probability the whole model (every layer and head, not the chosen head alone) gives this "
             "word in the gap, from the words before and after it. An encoder does not write left to right: it fills gaps.";
    return t;
  }
  t.title = "Next token after " + tokens[static_cast<std::size_t>(at)].text + ", by the whole model" +
            (state.model.effect.shown ? " with your changes" : "") + (state.model_run.pending ? " (updating…)" : "");
  const bool last = at == static_cast<int>(tokens.size()) - 1;
  t.writes = last && !state.model_run.pending;
  t.write = state.model_run.pending ? "Wait for the new text: its predictions come with it."
            : last ? "Write with the model: click a token to add it to the end of the text (each new token computes "
                     "only its own row of every layer: the keys and values of the others are kept)."
                   : "Select the text's last token to write with the model: a click on a prediction then adds it to the text.";
  t.note = "Each bar: the probability the model gives this token as the next one, from the text up to here (every "
           "layer and head, not the chosen head alone).";
  if (state.inputs.model == kBuiltInTrainedModel) {
    static const char* const kTrained[] = {"it", "refers", "to", "the"};  // the corpus's suffix
    bool trained_here = at >= 3;
    for (int k = 0; k < 4 && trained_here; ++k)
      trained_here = tokens[static_cast<std::size_t>(at - 3 + k)].lower == kTrained[k];
    t.trained_here = trained_here ? "Here is the one place the trained model learned to predict: the noun \"it\" "
                                    "refers to."
                                  : "The trained model learned to predict only after \"it refers to the\" (the noun "
                                    "\"it\" refers to); here its guesses were never trained.";
  }
  return t;
}

// [SECTION] Sweeps

int largest_cell(const Matrix& values) {
  int largest = -1;
  for (int i = 0; i < static_cast<int>(values.size()); ++i)
    if (std::isfinite(values.data()[i]) && (largest < 0 || std::fabs(values.data()[i]) > std::fabs(values.data()[largest])))
      largest = i;
  return largest;
}

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

nlohmann::json sweep_values_json(const SweepRun& r) {
  nlohmann::json values = nlohmann::json::array();
  if (!r.model) return values;
  const int rows = r.model->config.n_layer, cols = r.total() / rows;
  const bool started = r.sweep.values.rows() == rows && r.sweep.values.cols() == cols;
  for (int i = 0; i < rows; ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (int j = 0; j < cols; ++j) {
      const float v = started ? r.sweep.values(i, j) : std::nanf("");
      row.push_back(std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr));
    }
    values.push_back(std::move(row));
  }
  return values;
}

// [SECTION] Asking the model why

bool head_ablated(const AppInputs& in, int layer, int head) {
  return std::find(in.ablate.begin(), in.ablate.end(), HeadRef{layer, head}) != in.ablate.end();
}

void remove_intervention(AppInputs& next, const InterventionEntry& e) {
  if (e.kind == InterventionEntry::Ablate) next.ablate.erase(next.ablate.begin() + e.index);
  else if (e.kind == InterventionEntry::Cut) next.cuts.erase(next.cuts.begin() + e.index);
  else next.patch = PatchSpec{};
}

InterventionTexts intervention_texts(const AppState& state) {
  InterventionTexts t;
  const AppInputs& in = state.inputs;
  const auto head_name = [](int layer, int head) { return "L" + std::to_string(layer + 1) + " H" + std::to_string(head + 1); };
  const auto word = [&](const EmbeddedSentence& s, int i) {
    return i < static_cast<int>(s.tokens.size()) ? in_quotes(s.tokens[static_cast<std::size_t>(i)].text) : std::to_string(i);
  };
  const char* kind = in.ablate_kind == AblateKind::Zero ? "its output set to zero"
                                                        : "its output replaced by its mean over the positions so far";
  for (std::size_t i = 0; i < in.ablate.size(); ++i)
    t.entries.push_back({InterventionEntry::Ablate, static_cast<int>(i),
                         head_name(in.ablate[i].layer, in.ablate[i].head) + " switched off (" + kind + ")"});
  for (std::size_t i = 0; i < in.cuts.size(); ++i) {
    const LinkCut& c = in.cuts[i];
    const std::string where = current_loaded_model(state)
        ? (c.head < 0 ? "every head of L" + std::to_string(c.layer + 1) : head_name(c.layer, c.head))
        : std::string("the head");
    t.entries.push_back({InterventionEntry::Cut, static_cast<int>(i),
                         word(state.model.queries, c.query) + " cannot see " + word(state.model.keys, c.key) + " in " + where});
  }
  if (!in.patch.from.empty()) {
    std::string what;
    for (const HeadRef& h : in.patch.heads) what += (what.empty() ? "" : ", ") + head_name(h.layer, h.head) + "'s output";
    for (const auto& [layer, position] : in.patch.resid)
      what += (what.empty() ? "the stream entering L" : ", the stream entering L") + std::to_string(layer + 1) + " at " +
              word(state.model.queries, position);
    t.entries.push_back({InterventionEntry::Patch, 0, what + " copied from the run of " + in_quotes(in.patch.from)});
  }
  t.note = state.model.edit_note;
  const EditEffect& e = state.model.effect;
  const LoadedModel* m = current_loaded_model(state);
  if (!e.shown || !m) return t;
  const std::string target = in_quotes(m->tokenizer->display(e.target));
  std::string said = prediction_phrase(state, e.position);
  said[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(said[0])));
  t.effect = said + ", unchanged, is " + target +
             ": p " + number_text(static_cast<float>(std::exp(e.base_log_prob)), 3) + " before your changes, " +
             number_text(static_cast<float>(std::exp(e.log_prob)), 3) + " with them (log p " +
             number_text(static_cast<float>(e.base_log_prob), 2) + " → " + number_text(static_cast<float>(e.log_prob), 2) +
             ", a change of " + number_text(static_cast<float>(e.delta()), 2) + ").";
  if (e.patched)
    t.restored = std::isfinite(e.restored)
        ? "In the run of the text copied from, log p of " + target + " is " + number_text(static_cast<float>(e.source_log_prob), 2) +
              ": the patch restores " + number_text(static_cast<float>(e.restored * 100.0), 0) +
              "% of the difference, (patched − this) ÷ (that − this)."
        : "Both texts give " + target + " almost the same log p (they differ by under " + number_text(kMinRestorable, 2) +
              "): no difference to restore.";
  return t;
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
    const std::string text = shown_sentence(state) + m->tokenizer->decode({rows[static_cast<std::size_t>(clicked)].id});
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
