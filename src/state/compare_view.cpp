// The Compare view's numbers and words (see compare_view.h): the two rows, their difference, the
// verdict, what the model answers in both and the patching sweep in words. Not their drawing
// (src/ui/panel_compare.cpp); no ImGui here.
#include "compare_view.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "view_data.h"
#include "view_numbers.h"
#include "view_text.h"

namespace attn {

namespace {

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

}  // namespace

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


namespace {

// "'animal' (0.65)", or "a tie of 2 keys at 0.33".
std::string best_text(const CompareSide& s) {
  if (s.tied > 1) return "no single key: " + std::to_string(s.tied) + " tie at " + number_text(s.weights[s.best], 2);
  return in_quotes(s.keys[s.best]) + " (" + number_text(s.weights[s.best], 2) + ")";
}

}  // namespace

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
  const TwinAsk& ask = state.model.compare_ask;
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
                    " layer runs; for this model the Heads view's sweep does it, a few heads at a time.");
  const bool same_query = c.a.query == c.b.query && c.a.query_text == c.b.query_text;
  if (ask.layer == 0 && same_query)
    lines.push_back("In a first layer the ratio of a head's weights on two keys is e to the difference of their "
                    "scores, whatever the other keys are, and each score there comes from two tokens and their "
                    "places alone: on the words both sentences share, no head of " + L + " can change which one it "
                    "prefers. The answer changes through the word that differs (its weight and its value) and what "
                    "comes after the heads.");
  return lines;
}

namespace {

// view_data.ask: null, or {position, layer, answer_a, answer_b, p_a, p_b, target, against, difference_a,
// difference_b, rest_a, rest_b, ablated, heads: [{share_a, share_b, answer_a?, answer_b?, delta_a?,
// delta_b?}], text} (token ids; text: the lines the view draws).
nlohmann::json ask_json(const AppState& state, const Comparison& c) {
  const std::vector<std::string> lines = ask_lines(state, c);
  if (lines.empty()) return nullptr;
  const TwinAsk& a = state.model.compare_ask;
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

}  // namespace

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

namespace {

// view_data.patch_sweep: null before one, else {running, over: "heads" | "positions", done, total,
// position, target, baseline (A's log p), source (B's), values [L][H or T] (null: not run, or nothing
// to restore), text}.
nlohmann::json patch_sweep_json(const AppState& state) {
  const SweepRun& r = state.patch_sweep;
  nlohmann::json j =
      sweep_run_json(r, state.inputs.patch_sweep != AppInputs::PatchSweep::None && !r.finished(), patch_sweep_text(state));
  if (!j.is_null())
    j.update({{"over", r.over == SweepOver::PatchPositions ? "positions" : "heads"}, {"source", r.sweep.source}});
  return j;
}

}  // namespace

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

}  // namespace attn
