// The texts the views write about the current model and its numbers (see view_text.h): number
// formats, the toy's notes, formulas, the next-token strip's words, the learner's changes in words.
// Not their drawing (src/ui/panel_model.cpp); no ImGui here.
#include "view_text.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>

namespace attn {

std::string number_text(float v, int decimals) {
  if (std::isinf(v)) return v < 0 ? "−∞" : "+∞";
  if (std::isnan(v)) return "—";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, static_cast<double>(v));
  if (std::string(buf).find_first_not_of("-0.") == std::string::npos && buf[0] == '-') return buf + 1;  // no "-0.00"
  return buf;
}

std::string in_quotes(const std::string& text) { return "'" + text + "'"; }

std::string grouped_digits(double whole) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.0f", std::fabs(whole));
  const std::string digits = buf;
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += "\u00a0";
    out += digits[i];
  }
  return (whole < 0 ? "-" : "") + out;
}

std::string percent(float share) {
  if (share > 0.0f && share < 0.005f) return "<1%";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f%%", static_cast<double>(share) * 100.0);
  return buf;
}

Scaling trace_scaling(const AttentionTrace& trace, float temperature) {
  const float f = trace.score_factor * temperature, d = static_cast<float>(trace.key.cols());
  if (std::fabs(f * std::sqrt(d) - 1.0f) < 1e-3f) return Scaling::SqrtD;
  if (std::fabs(f - 1.0f) < 1e-6f) return Scaling::None;
  return Scaling::ModelFactor;
}

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

int largest_cell(const Matrix& values) {
  int largest = -1;
  for (int i = 0; i < static_cast<int>(values.size()); ++i)
    if (std::isfinite(values.data()[i]) && (largest < 0 || std::fabs(values.data()[i]) > std::fabs(values.data()[largest])))
      largest = i;
  return largest;
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

nlohmann::json sweep_run_json(const SweepRun& r, bool running, const std::string& text) {
  if (!r.model) return nullptr;
  return {{"running", running}, {"done", r.sweep.done}, {"total", r.total()}, {"position", r.position},
          {"target", r.target}, {"baseline", r.sweep.baseline}, {"values", sweep_values_json(r)}, {"text", text},
          {"where", r.where}};
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

}  // namespace attn
