// The JSON of an intervention request (see intervention_json.h). Computes nothing itself: the
// forward, the reruns, the attribution and the sweeps are src/core's.
#include "intervention_json.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <stdexcept>

#include "model_json.h"
#include "../core/refuse.h"

namespace attn {

using nlohmann::json;

namespace {


json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json token_json(const LoadedModel& m, int id) { return {{"token", m.tokenizer->decode({id})}, {"id", id}}; }

json attribution_json(const LogitAttribution& a, const TransformerConfig& c) {
  json heads = json::array();
  for (int l = 0; l < c.n_layer; ++l) {
    json row = json::array();
    for (int h = 0; h < c.n_head; ++h) row.push_back(a.heads(l, h));
    heads.push_back(std::move(row));
  }
  json biases = json::array(), mlps = json::array();
  for (int l = 0; l < c.n_layer; ++l) biases.push_back(a.biases[l]), mlps.push_back(a.mlps[l]);
  return {{"logit", a.logit}, {"offset", a.offset}, {"embeddings", a.embeddings}, {"heads", heads}, {"biases", biases},
          {"mlps", mlps}, {"sum", a.sum()}, {"post_norms_frozen", a.post_norms_frozen},
          {"before_final_softcap", c.final_softcap > 0}};
}

int whole(const json& v, const std::string& what) {
  if (!v.is_number_integer()) refuse(what, "must be a whole number");
  const long long n = v.get<long long>();
  if (n < -1000000 || n > 1000000) refuse(what, "is out of range");
  return static_cast<int>(n);
}

// [[a, b], ...] of whole numbers, named `first` and `second` in a refusal.
std::vector<std::pair<int, int>> pairs_from(const json& v, const std::string& what, const char* first, const char* second) {
  const std::string form = std::string("must be a list of [") + first + ", " + second + "] pairs";
  if (!v.is_array()) refuse(what, form);
  std::vector<std::pair<int, int>> pairs;
  for (const json& pair : v) {
    if (!pair.is_array() || pair.size() != 2) refuse(what, form);
    pairs.emplace_back(whole(pair[0], what + " " + first), whole(pair[1], what + " " + second));
  }
  return pairs;
}
}  // namespace

json heads_json(const std::vector<HeadRef>& heads) {
  json out = json::array();
  for (const HeadRef& h : heads) out.push_back({h.layer, h.head});
  return out;
}

std::vector<HeadRef> heads_from_json(const json& v, const std::string& what) {
  std::vector<HeadRef> heads;
  for (const auto& [layer, head] : pairs_from(v, what, "layer", "head")) heads.push_back({layer, head});
  return heads;
}

AblateKind ablate_kind_from_json(const json& v, const std::string& what) {
  if (v != "zero" && v != "mean") refuse(what, "must be \"zero\" or \"mean\"");
  return v == "zero" ? AblateKind::Zero : AblateKind::Mean;
}

json cuts_json(const std::vector<LinkCut>& cuts) {
  json out = json::array();
  for (const LinkCut& cut : cuts)
    out.push_back({{"layer", cut.layer}, {"head", cut.head < 0 ? json("all") : json(cut.head)}, {"query", cut.query}, {"key", cut.key}});
  return out;
}

std::vector<LinkCut> cuts_from_json(const json& v, const std::string& what) {
  if (!v.is_array()) refuse(what, "must be a list of {layer, head, query, key}");
  std::vector<LinkCut> cuts;
  for (const json& c : v) {
    if (!c.is_object() || !c.contains("layer") || !c.contains("head") || !c.contains("query") || !c.contains("key") || c.size() != 4)
      refuse(what, "each entry is {layer, head (a number or \"all\"), query, key}");
    cuts.push_back({whole(c["layer"], what + " layer"), c["head"] == "all" ? -1 : whole(c["head"], what + " head"),
                    whole(c["query"], what + " query"), whole(c["key"], what + " key")});
    if (cuts.back().head < -1) refuse(what + " head", "must be a head number or \"all\"");
  }
  return cuts;
}

json patch_json(const PatchSpec& p) {
  if (p.from.empty()) return nullptr;
  json out = {{"from", p.from}};
  if (!p.heads.empty()) out["heads"] = heads_json(p.heads);
  if (!p.resid.empty()) out["resid"] = p.resid;
  return out;
}

json sweep_cells_json(const Sweep& sweep) {
  json values = json::array();
  for (Eigen::Index i = 0; i < sweep.values.size(); ++i) {
    const float v = sweep.values.data()[i];
    values.push_back(std::isnan(v) ? json(nullptr) : json(v));  // JSON has no NaN
  }
  return {{"values", std::move(values)}, {"done", sweep.done}, {"baseline", sweep.baseline}, {"source", sweep.source}};
}

Sweep sweep_cells_from_json(const json& v, int rows, int columns) {
  const auto number = [](const json& x) { return x.is_null() ? std::numeric_limits<double>::quiet_NaN() : x.get<double>(); };
  const json& values = v.at("values");
  if (!values.is_array() || values.size() != static_cast<std::size_t>(rows) * static_cast<std::size_t>(columns))
    refuse("sweep", "the cells have another shape than the model's " + std::to_string(rows) + " × " + std::to_string(columns));
  Sweep sweep;
  sweep.values.resize(rows, columns);
  for (std::size_t i = 0; i < values.size(); ++i) sweep.values.data()[i] = static_cast<float>(number(values[i]));
  sweep.done = v.at("done").get<int>();
  sweep.baseline = number(v.at("baseline"));
  sweep.source = number(v.at("source"));
  return sweep;
}

PatchSpec patch_from_json(const json& v, const std::string& what) {
  PatchSpec p;
  if (v.is_null()) return p;
  if (!v.is_object() || !v.contains("from")) refuse(what, "must be {from: TEXT, heads: [[l, h]]} or {from: TEXT, resid: [[l, position]]}");
  for (const auto& item : v.items())
    if (item.key() != "from" && item.key() != "heads" && item.key() != "resid") refuse(what, "unknown key \"" + item.key() + "\"");
  if (!v["from"].is_string() || v["from"].get<std::string>().empty()) refuse(what + ".from", "must be a non-empty string");
  p.from = v["from"].get<std::string>();
  if (v.contains("heads")) p.heads = heads_from_json(v["heads"], what + ".heads");
  if (v.contains("resid")) p.resid = pairs_from(v["resid"], what + ".resid", "layer", "position");
  return p;
}

Intervention with_patches(const Transformer& model, Intervention edit, const ModelTrace& source,
                          const std::vector<HeadRef>& heads, const std::vector<std::pair<int, int>>& resid) {
  const int L = model.config.n_layer;
  for (const HeadRef& h : heads) {
    if (h.layer < 0 || h.layer >= L) refuse("patch " + std::to_string(h.layer) + "." + std::to_string(h.head), "layer outside the model");
    edit.head_patches.push_back(head_patch_from(model, source, h.layer, h.head));
  }
  for (const auto& [layer, position] : resid) {
    if (layer < 0 || layer >= L) refuse("patch-resid " + std::to_string(layer) + "@" + std::to_string(position), "layer outside the model");
    edit.stream_patches.push_back(stream_patch_from(model, source, layer, position));
  }
  return edit;
}

InterventionRequest intervention_request(const LoadedModel& m, const json& q) {
  if (!q.is_object()) refuse("intervene", "takes an object {text, ablate, cut, patch, target, ...}");
  static const char* const kKeys[] = {"text", "top", "ablate", "ablate_kind", "cut", "patch", "target", "against", "at", "sweep", "pad"};
  for (const auto& item : q.items())
    if (std::find(std::begin(kKeys), std::end(kKeys), item.key()) == std::end(kKeys)) refuse("intervene", "unknown key \"" + item.key() + "\"");
  const auto text = [&](const json& v, const std::string& what) {
    if (!v.is_string() || v.get<std::string>().empty()) refuse(what, "must be a non-empty string");
    return model_text_ids(m, v.get<std::string>(), what);
  };
  InterventionRequest r;
  if (!q.contains("text")) refuse("text", "must be a non-empty string");
  r.ids = text(q["text"], "text");
  if (q.contains("top")) r.top = whole(q["top"], "top");
  if (q.contains("ablate")) r.edit.ablate = heads_from_json(q["ablate"], "ablate");
  if (q.contains("ablate_kind")) r.edit.ablate_kind = ablate_kind_from_json(q["ablate_kind"], "ablate_kind");
  if (q.contains("cut")) r.edit.cuts = cuts_from_json(q["cut"], "cut");
  if (q.contains("patch")) {
    const PatchSpec p = patch_from_json(q["patch"], "patch");
    r.source_ids = text(json(p.from), "patch.from");
    r.patch_heads = p.heads;
    r.patch_resid = p.resid;
  }
  const auto token = [&](const json& v, const std::string& what) {
    if (v.is_number_integer()) return token_from_spec(m, "#" + std::to_string(v.get<long long>()), what);
    if (!v.is_string()) refuse(what, "must be a token's text or its id");
    return token_from_spec(m, v.get<std::string>(), what);
  };
  if (q.contains("target")) r.target = token(q["target"], "target");
  if (q.contains("against")) r.against = token(q["against"], "against");
  if (q.contains("at")) r.at = whole(q["at"], "at");
  if (q.contains("pad")) r.padding = whole(q["pad"], "pad");
  if (r.at < -1) refuse("at", "must be a position from 0");
  if (q.contains("sweep")) {
    const json& k = q["sweep"];
    if (k != "heads" && k != "positions") refuse("sweep", "must be \"heads\" or \"positions\"");
    r.sweep = k == "heads" ? SweepKind::Heads : SweepKind::Positions;
  }
  return r;
}

int token_from_spec(const LoadedModel& m, const std::string& spec, const std::string& what) {
  const int V = m.model->config.vocab_size;
  if (spec.size() > 1 && spec[0] == '#') {
    int id = -1;
    try {
      std::size_t used = 0;
      id = std::stoi(spec.substr(1), &used);
      if (used != spec.size() - 1) id = -1;
    } catch (const std::exception&) {
      id = -1;
    }
    if (id < 0 || id >= V) refuse(what, "'" + spec + "' is not a token id from #0 to #" + std::to_string(V - 1));
    return id;
  }
  const TextTokenizer& tok = *m.tokenizer;
  for (int id = 0; id < std::min(V, tok.vocab_size()); ++id)
    if (tok.vocab_token(id) == spec) return id;
  const std::vector<int> ids = tok.encode(spec, /*add_special=*/false);
  if (ids.size() == 1) return ids[0];
  refuse(what, "'" + spec + "' is not one token of this model's vocabulary (it reads as " + std::to_string(ids.size()) +
                " tokens); give it as the vocabulary writes it, or as #id");
}

json intervention_json(const LoadedModel& m, const InterventionRequest& r) {
  const Transformer& model = *m.model;
  const TransformerConfig& c = model.config;
  if (r.top < 1 || r.top > 100) refuse("top", "must be a whole number from 1 to 100");
  const std::vector<int> ids = padded_ids(m, r.ids, r.padding);
  const int T = static_cast<int>(ids.size()), real = static_cast<int>(r.ids.size());
  check_attention_size(c, T);
  check_mask_tokens(m, r.ids);
  const bool patching = !r.source_ids.empty();
  if (!patching && (!r.patch_heads.empty() || !r.patch_resid.empty())) refuse("patch", "needs the text to copy from");
  if (patching && r.patch_heads.empty() && r.patch_resid.empty() && r.sweep == SweepKind::None)
    refuse("patch-from", "say what to copy: heads, residual streams, or a sweep");
  if (patching && r.source_ids.size() != r.ids.size())
    refuse("patch-from", "the two texts must have the same number of tokens (" + std::to_string(r.source_ids.size()) + " and " +
                          std::to_string(real) + ")");
  if (patching) check_mask_tokens(m, r.source_ids);
  if (r.sweep == SweepKind::Positions && !patching) refuse("sweep", "positions patches each stream: it needs the text to copy from");

  // The position measured: a decoder's last token, an encoder's first mask token (or the one asked for).
  const bool encoder = !c.causal;
  const int mask = m.tokenizer->mask_id();
  int at = r.at;
  if (at < 0 && !encoder) at = real - 1;
  for (int t = 0; at < 0 && mask >= 0 && t < real; ++t)
    if (r.ids[static_cast<std::size_t>(t)] == mask) at = t;
  if (at >= real) refuse("at", "position " + std::to_string(at) + " is outside the text (0 to " + std::to_string(real - 1) + ")");
  std::string unmeasured;  // why nothing is measured ("" when log p(target) at `at` is)
  if (!c.has_lm_head)
    unmeasured = "this model has no LM head (its file has no masked-LM head), so there are no predictions to measure";
  else if (at < 0)
    unmeasured = "an encoder predicts words at its mask tokens: put " +
                 (mask >= 0 ? m.tokenizer->vocab_token(mask) : std::string("a mask token")) +
                 " in the text, or give the position to measure (at)";
  if (!unmeasured.empty()) {
    if (r.target >= 0) refuse("target", unmeasured);
    if (r.sweep != SweepKind::None) refuse("sweep", "measures log p(target): " + unmeasured);
    if (r.at >= 0) refuse("at", unmeasured);
  }
  const std::string no_attribution = why_no_attribution(c);
  if (r.against >= 0 && !no_attribution.empty())
    refuse("against", "it only changes the logit the attribution reads, and this model has no attribution: " + no_attribution);
  const bool measured = unmeasured.empty();

  ForwardOptions options;
  options.top_k = r.top;
  options.padding = r.padding;
  options.stream_bytes = std::numeric_limits<std::int64_t>::max();  // every layer's detail follows: none run twice
  const ModelTrace base = transformer_forward(model, ids, options);
  const int target = !measured ? -1 : r.target >= 0 ? r.target : top_next_tokens(base, at, 1).at(0).id;
  const auto log_prob_of = [&](const ModelTrace& run) { return measured ? token_log_prob(model, run, at, target) : 0.0; };
  const auto measure = [&](double v) { return measured ? json(v) : json(nullptr); };
  // an encoder's predictions are at its mask tokens; a decoder's next tokens everywhere
  const char* predictions = encoder ? "masked" : "next";
  const auto predictions_json = [&](const ModelTrace& run) { return encoder ? masked_json(m, run, r.top) : next_json(m, run, r.top); };
  ModelTrace source;
  Intervention edit = r.edit;
  if (patching) {
    source = transformer_forward(model, padded_ids(m, r.source_ids, r.padding), options);
    edit = with_patches(model, edit, source, r.patch_heads, r.patch_resid);
  }
  json tokens = json::array();
  for (int id : ids) tokens.push_back(m.tokenizer->decode({id}));
  const double log_prob = log_prob_of(base);
  json out = {{"model", model_info_json(m)}, {"tokens", tokens}, {"token_ids", ids}, {"at", measured ? json(at) : json(nullptr)},
              {"target", measured ? token_json(m, target) : json(nullptr)}, {predictions, predictions_json(base)},
              {"log_prob", measure(log_prob)}};
  if (r.padding > 0) out["padding"] = r.padding;
  if (r.against >= 0) out["against"] = token_json(m, r.against);

  const ModelTrace* shown = &base;
  ModelTrace changed;
  if (!edit.empty()) {
    changed = rerun_forward(model, base, edit, options);
    shown = &changed;
    const double after = log_prob_of(changed);
    out["intervened"] = {{"ablate", heads_json(edit.ablate)}, {"ablate_kind", ablate_kind_name(edit.ablate_kind)},
                         {"cuts", cuts_json(edit.cuts)}, {predictions, predictions_json(changed)}, {"log_prob", measure(after)},
                         {"delta_log_prob", measure(after - log_prob)}};
    if (patching) {
      const double a = log_prob_of(source);
      out["patch"] = {{"heads", heads_json(r.patch_heads)}, {"resid", r.patch_resid}, {"source_log_prob", measure(a)},
                      {"base_log_prob", measure(log_prob)}, {"patched_log_prob", measure(after)},
                      {"restored", measured ? number_or_null(restored_fraction(after, a, log_prob)) : json(nullptr)}};
    }
  }
  // attribution where the logit is a sum of parts; else null and the one line saying why
  std::string attribution_note = !no_attribution.empty() ? no_attribution : unmeasured;
  for (const StreamPatch& p : shown->intervention.stream_patches)
    if (attribution_note.empty() && p.position == at)
      attribution_note = "the stream at position " + std::to_string(at) + " is patched at layer " + std::to_string(p.layer) +
                         ", so what came before the patch is not in its sum";
  if (attribution_note.empty()) {
    out["attribution"] = attribution_json(attribute_logit(model, *shown, at, target, r.against), c);
  } else {
    out["attribution"] = nullptr;
    out["attribution_note"] = attribution_note;
  }

  // one pass over the shown run's layers: the intervened weights, value-weighted attention, rollout
  json weighted = json::array(), norms = json::array(), attention = json::array();
  std::vector<Matrix> means;
  for (int l = 0; l < c.n_layer; ++l) {
    const LayerDetail d = layer_detail(model, *shown, l);
    if (!edit.empty()) attention.push_back(layer_attention_json(d));
    json layer_weighted = json::array(), layer_norms = json::array();
    for (int h = 0; h < c.n_head; ++h) {
      const ValueWeighted v = value_weighted(c, model.blocks[static_cast<std::size_t>(l)], d, h);
      layer_weighted.push_back(matrix_json(v.weighted));
      layer_norms.push_back(matrix_json(v.value_norms)[0]);
    }
    weighted.push_back(std::move(layer_weighted)), norms.push_back(std::move(layer_norms));
    means.push_back(head_mean_weights(d));
  }
  if (!edit.empty()) out["intervened"]["attention"] = std::move(attention);
  out["value_weighted"] = std::move(weighted);
  out["value_norms"] = std::move(norms);
  json rollout = json::array();
  for (const Matrix& layer : attention_rollout(means)) rollout.push_back(matrix_json(layer));
  out["rollout"] = std::move(rollout);

  if (r.sweep != SweepKind::None) {
    const Sweep s = !patching ? ablation_sweep(model, base, at, target, r.edit.ablate_kind)
                    : r.sweep == SweepKind::Heads ? head_patch_sweep(model, source, base, at, target)
                                                  : stream_patch_sweep(model, source, base, at, target);
    out["sweep"] = {{"kind", r.sweep == SweepKind::Heads ? (patching ? "patch_heads" : "ablate_heads") : "patch_positions"},
                    {"metric", patching ? "restored fraction of log p(target), (patched − B) / (A − B)" : "Δ log p(target)"},
                    {"values", matrix_json(s.values)}, {"baseline", s.baseline}};
    if (patching) out["sweep"]["source"] = s.source;
  }
  return out;
}

}  // namespace attn
