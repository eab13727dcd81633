// The Heads view's words and data (see heads_view.h): every head's summary in words, the sweep and
// the direct logit attribution in words, and the view's data. Not their drawing (src/ui/panel_heads.cpp).
#include "heads_view.h"

#include <algorithm>
#include <cstdio>

#include "../api/compute_json.h"
#include "view_data.h"
#include "view_text.h"

namespace attn {

// [SECTION] Which heads, and their summaries

HeadGrid head_grid(const AppState& state) {
  HeadGrid g;
  const auto& forward = state.model.forward;
  if (!forward || forward->layers.empty()) return g;
  g.forward = forward.get();
  g.layers = static_cast<int>(forward->layers.size());
  g.heads = static_cast<int>(forward->layers[0].summaries.size());
  return g;
}

std::string key_text(const AppState& state, int key) {
  const auto& tokens = state.model.keys.tokens;
  return key >= 0 && key < static_cast<int>(tokens.size()) ? tokens[static_cast<std::size_t>(key)].text : "?";
}

namespace {

// Whether key `key` is a token the tokenizer added around the text ([CLS], [SEP], <s>), not a word of it.
bool added_token(const AppState& state, int key) {
  const LoadedModel* m = current_loaded_model(state);
  const auto& ids = state.model.token_ids;
  return m && key >= 0 && key < static_cast<int>(ids.size()) && m->tokenizer->is_special(ids[static_cast<std::size_t>(key)]);
}

}  // namespace

// The summary in a few words: "previous token", "mostly ·animal", ...
std::string summary_label(const AppState& state, const HeadSummary& s) {
  switch (s.pattern) {
    case HeadPattern::PreviousToken: return "previous token";
    case HeadPattern::NextToken: return "next token";
    case HeadPattern::FirstToken:
      return added_token(state, 0) ? "first token, " + key_text(state, 0) + (s.sink ? " (a sink)" : "")
                                   : s.sink ? "first token (a sink)" : "first token";
    case HeadPattern::Itself: return "itself";
    case HeadPattern::OneToken: return "mostly " + key_text(state, s.top_key);
    case HeadPattern::LooksAhead: return "looks ahead";
    case HeadPattern::SpreadOut: return "spread out";
    case HeadPattern::Mixed: return "no single pattern";
    case HeadPattern::TooFew: return "too few tokens to call";
  }
  return "";
}

// What the label means where it needs more than its words: a sink, too few rows, an added token.
std::string summary_reading(const AppState& state, const HeadSummary& s) {
  const int rested = s.pattern == HeadPattern::FirstToken ? 0 : s.pattern == HeadPattern::OneToken ? s.top_key : -1;
  if (rested >= 0 && added_token(state, rested) && !s.sink)
    return key_text(state, rested) + " is not a word of the text: the tokenizer adds it. Many heads rest most of "
           "their weight on such a token when nothing in the text matches their query, so this weight says little "
           "about the words.";
  if (s.pattern == HeadPattern::TooFew)
    return "A label needs at least " + std::to_string(kHeadMinRows) + " rows that can choose among keys (" +
           std::to_string(kHeadMinRows + 1) + " tokens under the mask, " + std::to_string(kHeadMinRows + 2) +
           " for \"previous token\"); with fewer, a first-token head and a previous-token head look alike.";
  if (s.pattern == HeadPattern::NextToken || s.pattern == HeadPattern::LooksAhead)
    return "Most of this head's weight sits right of the diagonal, on words after the query: a model that reads both "
           "ways (an encoder) can do this; a decoder's causal mask would hide every one of those keys.";
  if (s.pattern != HeadPattern::FirstToken || s.first_value_ratio < 0) return "";
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2f", static_cast<double>(s.first_value_ratio));
  if (s.sink)
    return std::string("The first token's value is small here (") + ratio + " × the mean value's length), so the "
           "weight parked on it adds little to the output: an attention sink, the head's way to look nowhere when "
           "nothing in the text matches its query.";
  return std::string("The first token's value is not small here (") + ratio + " × the mean value's length): "
         "this head does take in the first token.";
}

// The numbers behind the label, as a learner reads them.
std::string summary_numbers(const HeadSummary& s) {
  char text[200];
  std::snprintf(text, sizeof text, "on the previous token %.0f%%, on the first %.0f%%, on itself %.0f%%; evenness %.2f",
                static_cast<double>(s.previous) * 100, static_cast<double>(s.first) * 100,
                static_cast<double>(s.self) * 100, static_cast<double>(s.spread));
  std::string out = text;
  if (s.ahead > 0) {  // later keys are visible: no causal mask
    std::snprintf(text, sizeof text, "; on the next token %.0f%%, on every later one %.0f%%",
                  static_cast<double>(s.next) * 100, static_cast<double>(s.ahead) * 100);
    out += text;
  }
  return out;
}

// [SECTION] The sweep: every head switched off alone

// What the sweep measured, in words (under its map; view_data.sweep.text for the mirror).
std::string sweep_text(const AppState& state) {
  const SweepRun& r = state.heads_sweep;
  const LoadedModel* m = find_model(state, state.inputs.model);
  if (!m || !r.model || r.sweep.done == 0) return "";
  const std::string word = "'" + m->tokenizer->display(r.target) + "'";
  std::string text = std::to_string(r.sweep.done) + " of " + std::to_string(r.total()) + " heads switched off, each alone. " +
                     "With every head on, log p of " + word + " is " + number_text(static_cast<float>(r.sweep.baseline), 2) + ".";
  const int H = static_cast<int>(r.sweep.values.cols());
  if (const int best = largest_cell(r.sweep.values); best >= 0)
    text += " The largest change: L" + std::to_string(best / H + 1) + " H" + std::to_string(best % H + 1) + " off, " +
            (r.sweep.values.data()[best] >= 0 ? "+" : "") + number_text(r.sweep.values.data()[best], 2) + ".";
  return text + " Negative: the model needs that head for this answer; near 0: it can do without it alone "
                "(two heads may stand in for each other, which switching one off at a time cannot show).";
}

namespace {

// view_data.sweep: null before a sweep, else {running, done, total, position, target, baseline,
// values [L][H] (null: not run yet), text}.
nlohmann::json sweep_json(const AppState& state) {
  const SweepRun& r = state.heads_sweep;
  return sweep_run_json(r, state.inputs.heads_sweep && !r.finished(), sweep_text(state));
}

}  // namespace

// [SECTION] What each head adds to the answer (direct logit attribution)

// The attribution in words: what the map shows, the parts beside the heads and that they add up.
std::string attribution_text(const AppState& state) {
  const LogitAttribution* a = state.model.attribution.get();
  const LoadedModel* m = find_model(state, state.inputs.model);
  if (!a || !m) return "";
  const auto sum_of = [](const auto& v) {
    double total = 0;
    for (Eigen::Index i = 0; i < v.size(); ++i) total += v.data()[i];
    return total;
  };
  const std::string word = "'" + m->tokenizer->display(a->target) + "'";
  const auto n = [](double v) { return number_text(static_cast<float>(v), 2); };
  std::string text = "Each square: what one head writes straight into the logit of " + word + " at '" +
                     state.model.queries.tokens[static_cast<std::size_t>(a->position)].text +
                     "' (its output through its rows of W_O, the final norm's scale of this run, the unembedding). "
                     "Beside the heads: the embeddings " + n(a->embeddings) + ", the b_O biases " + n(sum_of(a->biases)) +
                     ", the MLPs " + n(sum_of(a->mlps)) + ", the heads together " + n(sum_of(a->heads)) +
                     (a->offset != 0 ? ", the final norm's bias " + n(a->offset) : std::string()) + "; in all " +
                     n(a->sum()) + ", the logit itself " + n(a->logit) + ".";
  if (a->post_norms_frozen)
    text += " This family normalises each head's update before adding it; those scales are frozen from this run "
            "too, so the split is exact for this run only.";
  if (m->model->config.final_softcap > 0) text += " (The logit before the final soft-cap.)";
  text += " A direct share is not the head's whole effect: what later layers make of its output counts only when "
          "the head is switched off.";
  return text;
}

namespace {

// view_data.attribution: null, or {position, target {token, id}, logit, offset, embeddings, heads [L][H],
// biases [L], mlps [L], sum, text}
nlohmann::json attribution_json(const AppState& state) {
  const LogitAttribution* a = state.model.attribution.get();
  const LoadedModel* m = find_model(state, state.inputs.model);
  if (!a || !m) return nullptr;
  nlohmann::json heads = nlohmann::json::array(), biases = nlohmann::json::array(), mlps = nlohmann::json::array();
  for (Eigen::Index l = 0; l < a->heads.rows(); ++l) {
    nlohmann::json row = nlohmann::json::array();
    for (Eigen::Index h = 0; h < a->heads.cols(); ++h) row.push_back(exact_float(a->heads(l, h)));
    heads.push_back(std::move(row));
    biases.push_back(exact_float(a->biases[l]));
    mlps.push_back(exact_float(a->mlps[l]));
  }
  return {{"position", a->position}, {"target", {{"token", m->tokenizer->display(a->target)}, {"id", a->target}}},
          {"logit", a->logit}, {"offset", a->offset}, {"embeddings", a->embeddings}, {"heads", heads},
          {"biases", biases}, {"mlps", mlps}, {"sum", a->sum()}, {"text", attribution_text(state)}};
}

}  // namespace

// Why a loaded model has no attribution ("" when it can have one): its logit is no sum of parts.
std::string attribution_note(const AppState& state) {
  const LoadedModel* m = find_model(state, state.inputs.model);
  const std::string why = m ? why_no_attribution(m->model->config) : "";
  return why.empty() ? why : "Not for this model: " + why + ". Switching heads off (above) still asks it.";
}

nlohmann::json heads_view_data(const AppState& state) {
  const HeadGrid grid = head_grid(state);
  const std::vector<HeadSummary>& sums = state.views.heads.summaries;
  const bool real = real_model(state);
  nlohmann::json layers = nlohmann::json::array();
  for (int l = 0; l < grid.layers; ++l) {
    nlohmann::json row = nlohmann::json::array();
    for (int h = 0; h < grid.heads; ++h) {
      const HeadSummary& s = sums[static_cast<std::size_t>(l * grid.heads + h)];
      row.push_back({{"pattern", head_pattern_name(s.pattern)},
                     {"label", summary_label(state, s)},
                     {"previous", s.previous},
                     {"first", s.first},
                     {"self", s.self},
                     {"spread", s.spread},
                     {"top_key", s.top_key},
                     {"top_key_share", s.top_key_share},
                     {"rows", s.rows_used},
                     {"first_value_ratio", s.first_value_ratio >= 0 ? nlohmann::json(s.first_value_ratio) : nlohmann::json(nullptr)},
                     {"sink", s.sink},
                     {"reading", summary_reading(state, s)}});
    }
    layers.push_back(row);
  }
  const AttentionTrace& t = state.model.trace;
  nlohmann::json top = nlohmann::json::array();
  for (int j : state.views.heads.top_keys)
    if (!key_hidden_by_mask(t, state.inputs.token, j))
      top.push_back({{"key", j}, {"token", key_text(state, j)}, {"weight", t.weights(state.inputs.token, j)}});
  nlohmann::json next = nlohmann::json::array();
  for (const NextTokenRow& n : next_tokens(state)) next.push_back({{"token", n.text}, {"id", n.id}, {"p", n.p}});
  return {{"model", real ? state.inputs.model : std::string(kHandmadeModel)},
          {"layers", grid.layers},
          {"heads", grid.heads},
          {"chosen", {{"layer", real ? state.inputs.layer : 0}, {"head", real ? state.inputs.head : 0}}},
          {"summaries", layers},
          {"top_weights", top},
          {"next", next},
          {"sweep", sweep_json(state)},
          {"attribution", attribution_json(state)},
          {"attribution_note", attribution_note(state)},
          {"family", family_view_data(state)}};
}

// [SECTION] What the model family adds (view_data.family of the Heads view)

nlohmann::json family_view_data(const AppState& state) {
  const FamilyViews& f = *state.model.family;
  const LoadedModel* m = current_loaded_model(state);
  const TransformerConfig* c = m ? &m->model->config : nullptr;
  nlohmann::json j = {{"loaded", f.loaded}};
  if (!c || !f.loaded) {
    j["positions"] = {{"kind", "none"}, {"text", "The hand-made model gives its tokens no positions."}, {"why", kWhyPositions}};
    return j;
  }
  const PositionsView& p = f.positions;
  nlohmann::json groups = nlohmann::json::array();
  for (const HeadGroup& g : head_groups(*c))
    groups.push_back({{"kv_head", g.kv_head}, {"first_head", g.first_head}, {"last_head", g.last_head}});
  nlohmann::json layers = nlohmann::json::array();
  for (int l = 0; l < c->n_layer; ++l) {
    const int w = c->layers[static_cast<std::size_t>(l)].window;
    layers.push_back({{"layer", l}, {"kind", w > 0 ? "local" : "global"}, {"window", w}});
  }
  j["groups"] = {{"text", head_groups_text(*c)}, {"n_head", c->n_head}, {"n_kv_head", c->n_kv_head},
                 {"kv_head_of_chosen", f.kv_head}, {"list", groups}};
  j["layer_kinds"] = layers;
  j["layer_kind"] = layer_kind_text(*c, f.layer);
  j["window"] = f.window;
  nlohmann::json pos = {{"kind", p.rope ? "rope" : p.learned ? "learned" : "none"}};
  if (p.rope) {
    pos["query_token"] = p.query_token;
    pos["key_token"] = p.key_token;
    pos["distance"] = p.query_token - p.key_token;
    pos["theta"] = p.theta;
    pos["score_factor"] = p.score_factor;
    pos["by_distance"] = p.by_distance;
    pos["q_before"] = std::vector<float>(p.q_before.data(), p.q_before.data() + p.q_before.size());
    pos["q_after"] = std::vector<float>(p.q_after.data(), p.q_after.data() + p.q_after.size());
    pos["k_before"] = std::vector<float>(p.k_before.data(), p.k_before.data() + p.k_before.size());
    pos["k_after"] = std::vector<float>(p.k_after.data(), p.k_after.data() + p.k_after.size());
    pos["text"] = "The score of the same two vectors depends only on their distance, not on where they stand.";
  } else if (p.learned) {
    pos["text"] = "Positions were learned vectors added to X before the first layer: q and k carry them in their content.";
  }
  pos["why"] = kWhyPositions;
  j["positions"] = pos;
  if (f.softcap.on)
    j["softcap"] = {{"cap", f.softcap.cap}, {"scaled_row", f.softcap.scaled_row}, {"capped_row", f.softcap.capped_row},
                    {"largest_scaled", f.softcap.largest_scaled}, {"largest_capped", f.softcap.largest_capped},
                    {"largest_change", f.softcap.largest_change}};
  if (f.qk_norm.on) {
    const std::size_t r = static_cast<std::size_t>(std::clamp(state.inputs.token, 0, f.T - 1));
    j["qk_norm"] = {{"q_rms_before", f.qk_norm.q_rms_before[r]}, {"q_rms_after", f.qk_norm.q_rms_after[r]},
                    {"k_rms_before", f.qk_norm.k_rms_before[r]}, {"k_rms_after", f.qk_norm.k_rms_after[r]},
                    {"head_dim", f.qk_norm.q_before.cols()}};
  }
  return j;
}

}  // namespace attn
