// AppState: applying inputs, and the state's JSON (see app_state.h).
#include "app_state.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <stdexcept>

#include "../api/compute_json.h"
#include "../api/model_json.h"
#include "input_table.h"
#include "../core/refuse.h"

namespace attn {

using nlohmann::json;


Matrix AppInputs::derive_default_qk() {
  Matrix m(3, 2);
  m << 1, 0, 0, 1, 1, 1;  // token 3 is "both"
  return m;
}

Matrix AppInputs::derive_default_v() {
  Matrix m(3, 2);
  m << 1, 2, 3, 4, 5, 6;
  return m;
}

bool AppInputs::operator==(const AppInputs& o) const {
  for (const InputField& f : input_fields())
    if (!f.equal(*this, o)) return false;
  return true;
}

std::string weights_csv(const AppState& s) {
  auto quoted = [](const std::string& text) {  // RFC 4180: double the quotes, quote every field
    std::string out = "\"";
    for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
  };
  const Matrix& w = s.model.trace.weights;
  std::string csv = quoted("query \\ key");
  for (const Token& t : s.model.keys.tokens) csv += "," + quoted(t.text);
  csv += "\n";
  char number[32];
  for (Eigen::Index i = 0; i < w.rows(); ++i) {
    csv += quoted(s.model.queries.tokens[i].text);
    for (Eigen::Index j = 0; j < w.cols(); ++j) {
      std::snprintf(number, sizeof number, ",%.6f", static_cast<double>(w(i, j)));
      csv += number;
    }
    csv += "\n";
  }
  return csv;
}

int find_token(const EmbeddedSentence& sentence, const std::string& word) {
  std::string lower = word;
  for (char& c : lower)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  for (std::size_t i = 0; i < sentence.tokens.size(); ++i)
    if (sentence.tokens[i].lower == lower) return static_cast<int>(i);
  return -1;
}

BackendChoice choose_backend(const std::string& requested, int T, const GpuFacts& gpu) {
  const std::string T_text = "T = " + std::to_string(T);
  char measured[160] = "";
  if (gpu.speed_checked)
    std::snprintf(measured, sizeof measured, "measured at T = %d: GPU %.3g ms, CPU %.3g ms", gpu.speed_check_T,
                  gpu.gpu_ms, gpu.cpu_ms);
  const bool gpu_faster = gpu.speed_checked && gpu.gpu_ms < gpu.cpu_ms;
  if (requested == "webgl" && !gpu.available)
    return {"simd", "the GPU path is unavailable (" + gpu.unavailable_reason + "): the SIMD kernel computes instead"};
  if (requested == "webgl" && gpu.software)
    return {"webgl", "chosen by hand; this GPU is a software renderer, slower than the CPU"};
  if (requested == "webgl" && gpu.speed_checked && !gpu_faster)
    return {"webgl", std::string("chosen by hand; slower than the CPU here (") + measured + ")"};
  if (requested != "auto") return {requested, "chosen by hand"};
  if (!gpu.available) return {"simd", "auto: no GPU path here (" + gpu.unavailable_reason + ")"};
  if (gpu.software) return {"simd", "auto: the GPU here is a software renderer, slower than the CPU"};
  if (!gpu.speed_checked) return {"simd", "auto: the GPU's speed could not be measured, so the CPU computes"};
  if (!gpu_faster) return {"simd", std::string("auto: this GPU is slower than the CPU (") + measured + ")"};
  if (T < kGpuFromT)
    return {"simd", "auto: " + T_text + " is small; the GPU pays off from T = " + std::to_string(kGpuFromT)};
  return {"webgl", "auto: " + T_text + " is large, and this GPU is faster (" + measured + ")"};
}

namespace {

// A loaded model's tokens as a learner reads them: the text "·it" (display), and for look-ups by
// word (setState({token: "it"})) the decoded text without its spaces, lower-cased.
std::vector<Token> model_tokens(const TextTokenizer& tokenizer, const std::vector<int>& ids) {
  std::vector<Token> tokens;
  for (int id : ids) {
    Token t;
    t.text = tokenizer.display(id);
    const std::string bytes = tokenizer.token_bytes(id);
    const std::size_t first = bytes.find_first_not_of(" \t\n\r"), last = bytes.find_last_not_of(" \t\n\r");
    t.lower = first == std::string::npos ? bytes : bytes.substr(first, last - first + 1);
    for (char& c : t.lower)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    tokens.push_back(std::move(t));
  }
  return tokens;
}

}  // namespace

// The tokens a sentence has under a model (the hand-made lexicon or a loaded tokenizer); throws
// std::invalid_argument for text the model cannot read.
std::vector<int> model_token_ids(const LoadedModel& m, const std::string& sentence) {
  if (sentence.find_first_not_of(" \t\n\r") == std::string::npos)
    throw std::invalid_argument("sentence is empty: type a few words");
  std::vector<int> ids = m.tokenizer->encode(sentence, /*add_special=*/true);  // what the model reads (a BOS where it has one)
  const TransformerConfig& c = m.model->config;
  const int longest = c.positions == PositionKind::Learned ? std::min(kMaxTokens, c.n_positions) : kMaxTokens;
  if (static_cast<int>(ids.size()) > longest)
    throw std::invalid_argument("sentence has " + std::to_string(ids.size()) + " tokens; " + m.name + " reads at most " +
                                std::to_string(longest) + " here: shorten it");
  return ids;
}

EmbeddedSentence query_tokens(const AppState& state, const std::string& model, const std::string& sentence) {
  const LoadedModel* m = find_model(state, model);
  if (!m) return embed_sentence(sentence);
  EmbeddedSentence e;
  e.tokens = model_tokens(*m->tokenizer, model_token_ids(*m, sentence));
  e.unknown.assign(e.tokens.size(), false);
  return e;
}

namespace {

// A loaded model's layer as it computes (its scale, cap, window and causal mask), with the views'
// experiments on top: the √d switch (a model whose scores are not scaled never divides), the
// temperature and the mistakes.
AttentionOptions model_layer_options(const TransformerConfig& c, int layer, const AppInputs& next) {
  AttentionOptions o = model_attention_options(c, layer);
  o.scale = next.scale;
  o.temperature = next.temperature;
  o.mistake = next.mistake;
  return o;
}

// The hand-made model's one layer and one head, in the shape every model's trace has.
std::shared_ptr<const ModelTrace> handmade_forward(const AttentionTrace& trace) {
  auto forward = std::make_shared<ModelTrace>();
  LayerTrace layer;
  layer.summaries = {summarize_head(trace.weights, trace.options.causal, &trace.value)};
  layer.thumbnails = {max_pooled(trace.weights, kThumbnailSide)};
  forward->layers.push_back(std::move(layer));
  return forward;
}

// [SECTION] Asking the model why: which interventions fit the model and the text

constexpr const char* kHandmadeTakesCuts =
    "the hand-made model has one head, no W_O and no next-token head, so there is no answer for switching a head off "
    "or patching it to change: cut links instead (its weights renormalise without them)";

// The learner's switched-off heads and cut links as the core takes them (a patch needs its text's run:
// with_patches adds it).
Intervention heads_and_cuts(const AppInputs& in) {
  Intervention edit;
  edit.ablate = in.ablate;
  edit.ablate_kind = in.ablate_kind;
  edit.cuts = in.cuts;
  return edit;
}

// Keeps the entries of `list` that `fits` accepts, checked one by one with the ones kept before them
// (cuts together may leave a query no key). A list the learner just changed (`fresh`) is refused at
// its first entry that does not fit; a list kept from before (the model or the text changed under it)
// loses such entries, each named in `dropped`.
template <class Entry, class Fits>
void keep_fitting(std::vector<Entry>& list, bool fresh, std::vector<std::string>& dropped, const Fits& fits) {
  std::vector<Entry> kept;
  for (const Entry& entry : list) {
    kept.push_back(entry);
    try {
      fits(kept);
    } catch (const std::invalid_argument& e) {
      if (fresh) throw;
      kept.pop_back();
      dropped.push_back(e.what());
    }
  }
  list = std::move(kept);
}

// The interventions of `next` that fit the model (null: the hand-made one, whose only layer and head
// are computed with `handmade`'s mask) and a text of T queries and Tk keys; `patch_T`: how many tokens
// the patch's text reads as. `key` names the input a refusal is about; `note` what was dropped.
void fit_edits(const TransformerConfig* c, int T, int Tk, int patch_T, const AttentionOptions& handmade,
               const AppInputs& before, AppInputs& next, std::string& key, std::string& note) {
  std::vector<std::string> dropped;
  key = "ablate";
  keep_fitting(next.ablate, next.ablate != before.ablate, dropped, [&](const std::vector<HeadRef>& heads) {
    if (!c) throw std::invalid_argument(std::string("ablate: ") + kHandmadeTakesCuts);
    Intervention edit;
    edit.ablate = heads;
    validate_intervention(*c, T, edit);
  });
  key = "cut";
  keep_fitting(next.cuts, next.cuts != before.cuts, dropped, [&](const std::vector<LinkCut>& cuts) {
    Intervention edit;
    edit.cuts = cuts;
    if (c) return validate_intervention(*c, T, edit);
    for (const LinkCut& cut : cuts)
      if (cut.layer != 0 || cut.head > 0)
        throw std::invalid_argument("cut " + std::to_string(cut.layer) + "." + std::to_string(cut.head) +
                                    ": the hand-made model has one layer and one head (0.0)");
    AttentionOptions o = handmade;
    o.cuts = head_cuts(edit, 0, 0);
    validate_cuts(o, T, Tk, "cut");
  });
  key = "patch";
  if (!next.patch.from.empty()) {
    std::vector<PatchSpec> patch = {next.patch};
    keep_fitting(patch, next.patch != before.patch, dropped, [&](const std::vector<PatchSpec>& p) {
      if (!c) throw std::invalid_argument(std::string("patch: ") + kHandmadeTakesCuts);
      if (patch_T != T)
        throw std::invalid_argument("patch: \"" + p[0].from + "\" reads as " + std::to_string(patch_T) +
                                    " tokens and the sentence as " + std::to_string(T) +
                                    ": a patch copies between texts of as many tokens");
      if (p[0].heads.empty() && p[0].resid.empty()) throw std::invalid_argument("patch: say what to copy: heads or resid");
      for (const HeadRef& h : p[0].heads)
        if (h.layer < 0 || h.layer >= c->n_layer || h.head < 0 || h.head >= c->n_head)
          throw std::invalid_argument("patch " + std::to_string(h.layer) + "." + std::to_string(h.head) +
                                      ": not a head of this model (" + std::to_string(c->n_layer) + " layers × " +
                                      std::to_string(c->n_head) + " heads)");
      for (const auto& [layer, position] : p[0].resid)
        if (layer < 0 || layer >= c->n_layer || position < 0 || position >= T)
          throw std::invalid_argument("patch " + std::to_string(layer) + "@" + std::to_string(position) +
                                      ": not a layer and position of this model and text");
    });
    next.patch = patch.empty() ? PatchSpec{} : patch[0];
  }
  note.clear();
  for (const std::string& d : dropped)
    note += (note.empty() ? "Dropped, as the new model or text no longer fits it: " : "; ") + d;
}

}  // namespace

void add_model(AppState& state, LoadedModel model) {
  for (LoadedModel& m : state.models)
    if (m.name == model.name) {
      m = std::move(model);
      return;
    }
  state.models.push_back(std::move(model));
}

const LoadedModel* find_model(const AppState& state, const std::string& name) {
  for (const LoadedModel& m : state.models)
    if (m.name == name) return &m;
  return nullptr;
}

const LoadedModel* current_loaded_model(const AppState& state) {
  if (state.inputs.model == kHandmadeModel) return nullptr;
  return find_model(state, state.inputs.model);
}

bool real_model(const AppState& state) { return current_loaded_model(state) != nullptr; }

bool causal_shown(const AppState& state) { return state.model.trace.options.causal; }
bool cross_shown(const AppState& state) { return state.inputs.cross && !real_model(state); }

std::string head_caption(const AppState& state) {
  const LoadedModel* m = current_loaded_model(state);
  if (!m) return "the hand-made model";
  return "layer " + std::to_string(state.inputs.layer + 1) + " · head " + std::to_string(state.inputs.head + 1) +
         " of " + m->name;
}

json current_model_info(const AppState& state) {
  if (const LoadedModel* m = find_model(state, state.inputs.model)) return model_info_json(*m);
  const WorkedModel& w = worked_model();
  return {{"name", kHandmadeModel}, {"family", "handmade"}, {"layers", 1}, {"heads", 1},
          {"d_model", kFeatures}, {"d_head", kHeadDim}, {"vocab_size", nullptr},
          {"params", w.wq.size() + w.wk.size() + w.wv.size()}};
}

const char* weights_show_name(WeightsShow w) {
  switch (w) {
    case WeightsShow::Weights: return "weights";
    case WeightsShow::ValueWeighted: return "value_weighted";
    case WeightsShow::Rollout: return "rollout";
  }
  return "weights";
}

// Where a loaded model's predictions are asked for: a decoder's after the selected token; an
// encoder's (it reads both ways, so "next" means nothing) at a mask token: the selected one if it is
// a mask, else the text's first; −1 where there is none or the file has no LM head.
int predict_position(const LoadedModel& loaded, const std::vector<int>& ids, int selected) {
  const TransformerConfig& c = loaded.model->config;
  if (!c.has_lm_head) return -1;
  if (c.causal) return selected;
  const int mask = loaded.tokenizer->mask_id();
  if (mask < 0) return -1;
  if (ids[static_cast<std::size_t>(selected)] == mask) return selected;
  const auto first = std::find(ids.begin(), ids.end(), mask);
  return first == ids.end() ? -1 : static_cast<int>(first - ids.begin());
}

bool apply_inputs(AppState& state, const AppInputs& next, double now, bool may_post) {
  AppModel model;
  AppInputs applied = next;
  std::string key = "model";
  try {
    const LoadedModel* loaded = find_model(state, next.model);
    if (!loaded && next.model != kHandmadeModel)
      throw std::invalid_argument("no model named \"" + next.model + "\" is loaded");
    AttentionOptions o;
    o.causal = next.causal;
    o.scale = next.scale;
    o.temperature = next.temperature;
    o.mistake = next.mistake;
    if (loaded) {
      // A loaded model: its own tokens, what the views read of it (api/model_views.h: every part again only
      // where its own inputs changed; from the worker where it computes), and the chosen head's trace with the
      // layer's own scale, cap and mask. A decoder: always causal, never cross-attention.
      const TransformerConfig& c = loaded->model->config;
      applied.layer = std::clamp(next.layer, 0, c.n_layer - 1);
      applied.head = std::clamp(next.head, 0, c.n_head - 1);
      key = "sentence";
      const std::shared_ptr<const ModelViews> held = state.model.forward_model == loaded->model ? state.model.answer : nullptr;
      const bool same_text = held && state.inputs.sentence == next.sentence;
      model.token_ids = same_text ? state.model.token_ids : model_token_ids(*loaded, next.sentence);
      const int T = static_cast<int>(model.token_ids.size());
      model.queries.tokens = same_text ? state.model.queries.tokens : model_tokens(*loaded->tokenizer, model.token_ids);
      model.queries.unknown.assign(model.queries.tokens.size(), false);
      ModelViewsAsk ask;
      ask.ids = model.token_ids;
      if (!next.patch.from.empty()) {
        key = "patch";
        ask.patch_ids = held && state.inputs.patch.from == next.patch.from && !held->ask.patch_ids.empty()
                            ? held->ask.patch_ids : model_token_ids(*loaded, next.patch.from);
      }
      fit_edits(&c, T, T, static_cast<int>(ask.patch_ids.size()), {}, state.inputs, applied, key, model.edit_note);
      ask.edit = heads_and_cuts(applied);
      if (applied.patch.from.empty()) ask.patch_ids.clear();
      ask.patch_heads = applied.patch.heads;
      ask.patch_resid = applied.patch.resid;
      ask.layer = applied.layer;
      ask.head = applied.head;
      ask.token = std::clamp(next.token, 0, T - 1);
      ask.position = predict_position(*loaded, model.token_ids, ask.token);
      ask.attribution = next.view == View::Heads;
      ask.projections = next.view == View::Flow || next.view == View::Build;
      // (only the Weights view draws a reading: rollout reruns every layer before this one)
      ask.influence = next.view != View::Weights ? 0 : static_cast<int>(applied.weights_show);
      key = "compare_sentence";
      ask.compare = next.view == View::Compare && !next.compare_tokens;
      if (ask.compare) {
        ask.compare_ids = held && held->ask.compare && state.inputs.compare_sentence == next.compare_sentence
                              ? held->ask.compare_ids : model_token_ids(*loaded, next.compare_sentence);
        // B with the learner's heads switched off and links cut, where they fit its tokens
        ask.compare_edit = heads_and_cuts(applied);
        try {
          validate_intervention(c, static_cast<int>(ask.compare_ids.size()), ask.compare_edit);
        } catch (const std::invalid_argument& e) {
          model.compare_edit_note = std::string("B runs without your changes: ") + e.what();
          ask.compare_edit = Intervention{};
        }
      }
      // The answer: the one shown when nothing it reads changed (it may have parts this view does not draw),
      // the worker's when it came for these, else posted to the worker (may_post: the change waits for it) or
      // computed here.
      key = "ablate";
      ModelRun& run = state.model_run;
      std::shared_ptr<const ModelViews> answer =
          held && held->ask.covers(ask) ? held
          : run.arrived && run.arrived_weights == loaded->model && run.arrived->ask.covers(ask) ? run.arrived
                                                                                                 : nullptr;
      // (a model whose weights moved into its worker is computed there whatever the caller: the page has none)
      const bool here = !loaded->model->weights_released;
      if (!answer && (may_post || !here) && model_run_post(run, *loaded, ask, held ? &held->ask : nullptr, next)) return true;
      if (!answer) {
        key = "model";
        require_weights_here(*loaded);
        key = "ablate";
        const BaseForward base = [&](const std::vector<int>& ids) { return model_run_forward(run, *loaded, ids); };
        answer = std::make_shared<const ModelViews>(model_views(*loaded->model, ask, base, held.get(), run.cache.get()));
      }
      const ModelViews& v = *answer;
      model.answer = answer;
      model.forward_model = loaded->model;
      model.base_forward = v.base;
      model.patch_forward = v.patch_source;
      model.forward = v.shown;
      model.forward_revision = held && v.shown == held->shown ? state.model.forward_revision : state.revision + 1;
      model.layer = v.detail;
      model.queries.x = v.detail->x;
      model.keys = model.queries;
      model.predict_position = ask.position;
      model.next = v.next;
      model.effect = v.effect;
      model.attribution = ask.attribution ? v.attribution : nullptr;  // (the parts this view draws)
      model.influence = ask.influence ? v.influence : nullptr;
      model.around = v.around;
      key = "options";
      o = model_layer_options(c, applied.layer, next);
      AttentionOptions shown = o;
      shown.cuts = head_cuts(ask.edit, applied.layer, applied.head);  // (the patches change no link)
      model.trace = head_trace(c, *model.layer, applied.head, shown);
      model.family = std::make_shared<const FamilyViews>(family_views(
          c, *model.layer, model.trace, applied.layer, applied.head, next.token,
          static_cast<int>(dtype_bytes(loaded->model->blocks.front().qkv.dtype))));
      if (ask.compare) {
        model.compare_forward = v.compare_base;
        model.compare_edited = v.compare_shown;
        model.compare_queries.tokens = model_tokens(*loaded->tokenizer, ask.compare_ids);
        model.compare_queries.unknown.assign(model.compare_queries.tokens.size(), false);
        model.compare_queries.x = v.compare_detail->x;
        AttentionOptions b_shown = o;
        b_shown.cuts = head_cuts(ask.compare_edit, applied.layer, applied.head);
        model.compare = head_trace(c, *v.compare_detail, applied.head, b_shown);
        model.compare_ask = v.twins;
      }
    } else {
      applied.layer = applied.head = 0;
      key = "sentence";
      model.queries = embed_sentence(next.sentence);
      key = "kv_sentence";
      model.keys = next.cross ? embed_sentence(next.kv_sentence) : model.queries;
      const int Tq = static_cast<int>(model.queries.tokens.size()), Tk = static_cast<int>(model.keys.tokens.size());
      fit_edits(nullptr, Tq, Tk, 0, o, state.inputs, applied, key, model.edit_note);
      key = "options";
      const WorkedModel& w = worked_model();
      AttentionOptions shown = o;
      shown.cuts = head_cuts(heads_and_cuts(applied), 0, 0);  // (its only change: fit_edits kept cuts alone)
      model.trace = attend_projected(model.queries.x, model.keys.x, w.wq, w.wk, w.wv, shown);
      model.forward = model.base_forward = handmade_forward(model.trace);
      model.forward_revision = state.revision + 1;
      key = "weights_show";
      if (applied.weights_show == WeightsShow::Rollout)
        throw std::invalid_argument("rollout multiplies the weights through a model's layers and the hand-made model has "
                                    "one: load a model, or show the value-weighted reading");
      if (applied.weights_show == WeightsShow::ValueWeighted && next.view == View::Weights) {  // no W_O: the value itself is sent
        const Vector norms = model.trace.value.rowwise().norm().transpose();
        Matrix weighted = model.trace.weights;
        for (Eigen::Index j = 0; j < weighted.cols(); ++j) weighted.col(j) *= norms[j];
        model.influence = std::make_shared<const AppModel::Influence>(AppModel::Influence{weighted, norms});
      }
    }
    // The Mistakes view's "correct": the same head without the mistake ("Forget √d" is set beside
    // the divided scores whatever the controls' switch says: the switch changes every view).
    AttentionOptions fixed = model.trace.options;
    if (fixed.mistake == Mistake::ForgetScale) fixed.scale = true;
    fixed.mistake = Mistake::None;
    model.without_mistake = attend(model.trace.query, model.trace.key, model.trace.value, fixed);
    key = "compare_sentence";
    applied.compare_token = std::clamp(next.compare_token, 0, static_cast<int>(model.queries.tokens.size()) - 1);
    if (next.view == View::Compare && !next.compare_tokens && !loaded) {  // (a loaded model's B is in its answer)
      model.compare_queries = embed_sentence(next.compare_sentence);
      const EmbeddedSentence& keys = next.cross ? model.keys : model.compare_queries;
      const WorkedModel& w = worked_model();
      model.compare = attend_projected(model.compare_queries.x, keys.x, w.wq, w.wk, w.wv, o);
    }
    key = "derive";
    AttentionOptions derive_options;  // the derive view follows the lesson: scaled, no mask
    model.derive = attend(next.derive_q, next.derive_k, next.derive_v, derive_options);
    key = "break";
    const BreakResult& old = state.model.saturation;
    const bool same_break = state.revision > 0 && old.d == next.break_d && old.T == next.break_T &&
                            old.seed == static_cast<std::uint64_t>(next.break_seed);
    model.saturation = same_break ? old : run_break_experiment(next.break_d, next.break_T, next.break_seed);
    const bool same_range = state.revision > 0 && old.d == next.break_d && old.T == next.break_T;
    model.saturation_range = same_range ? state.model.saturation_range : break_ratio_range(next.break_d, next.break_T, 0);
  } catch (const std::invalid_argument& e) {
    state.error = e.what();
    state.error_key = key;
    return false;
  }
  const bool changed = applied != state.inputs || state.revision == 0;
  model_run_cancel(state.model_run);  // applied: an answer still computed for earlier inputs is not wanted
  state.inputs = applied;
  // A new sentence may be shorter: keep the selected row inside it.
  state.inputs.token = std::clamp(next.token, 0, static_cast<int>(model.queries.tokens.size()) - 1);
  state.inputs.step = std::clamp(next.step, 0, 6);
  state.inputs.derive_revealed = std::clamp(next.derive_revealed, 0, AppInputs::kDeriveStages);
  state.model = std::move(model);
  state.views = view_numbers(state);
  state.error.clear();
  state.error_key.clear();
  // The sweeps follow the runs they are about: a new model, text or position starts them again.
  const LoadedModel* loaded = find_model(state, state.inputs.model);
  const auto follow = [&](SweepRun& sweep, bool on, SweepOver over, const std::shared_ptr<const ModelTrace>& source) {
    const bool same_run = loaded && sweep.model == loaded->model && sweep.base == state.model.base_forward &&
                          sweep.source == source && sweep.over == over && sweep.position == state.model.predict_position;
    if (same_run) return;
    sweep = SweepRun{};
    if (loaded && on && state.model.base_forward && !state.model.next.empty()) {
      sweep.over = over;
      sweep.model = loaded->model;
      sweep.base = state.model.base_forward;
      sweep.source = source;
      sweep.position = state.model.predict_position;
      sweep.target = state.model.unchanged_next().front().id;
    }
  };
  follow(state.heads_sweep, state.inputs.heads_sweep, SweepOver::Ablate, nullptr);
  const bool can_patch = state.model.compare_forward &&  // (the shown model's B, in its answer)
                         state.model.compare_forward->token_ids.size() == state.model.token_ids.size();
  using PS = AppInputs::PatchSweep;
  // (stopped, it keeps what it swept over: on again, it continues)
  const SweepOver patch_over = state.inputs.patch_sweep == PS::Positions ? SweepOver::PatchPositions
                               : state.inputs.patch_sweep == PS::Heads || !state.patch_sweep.model ? SweepOver::PatchHeads
                                                                                                   : state.patch_sweep.over;
  follow(state.patch_sweep, can_patch && state.inputs.patch_sweep != PS::None, patch_over,
         can_patch ? state.model.compare_forward : nullptr);
  if (changed) {
    ++state.revision;
    state.changed_at = now;
  }
  return true;
}

void sweeps_frame(AppState& state, const std::function<bool()>& more) {
  for (SweepRun* r : {&state.heads_sweep, &state.patch_sweep}) {
    const bool on = r == &state.heads_sweep ? state.inputs.heads_sweep : state.inputs.patch_sweep != AppInputs::PatchSweep::None;
    if (model_run_sweep(state, *r, r == &state.heads_sweep ? "heads" : "patch", on)) continue;  // the worker's
    if (!on || !r->base || r->finished() || r->model->weights_released) continue;  // (the page has no weights to sweep with)
    r->where = "page";
    const Sweep* resume = r->sweep.values.size() > 0 ? &r->sweep : nullptr;
    const SweepProgress progress = [&](int, int) { return more(); };
    if (r->over == SweepOver::Ablate)
      r->sweep = ablation_sweep(*r->model, *r->base, r->position, r->target, AblateKind::Zero, progress, Backend::Simd, resume);
    else if (r->over == SweepOver::PatchHeads)
      r->sweep = head_patch_sweep(*r->model, *r->source, *r->base, r->position, r->target, progress, Backend::Simd, resume);
    else
      r->sweep = stream_patch_sweep(*r->model, *r->source, *r->base, r->position, r->target, progress, Backend::Simd, resume);
  }
}

AppState make_initial_state() {
  AppState s;
  apply_inputs(s, AppInputs{}, 0.0);
  return s;
}

json model_run_json(const AppState& s) {
  const ModelRun& r = s.model_run;
  const auto ms = [](double v) { return v >= 0 ? json(v) : json(nullptr); };
  json j = {{"pending", r.pending}, {"where", r.worker ? "worker" : "page"}, {"last_where", r.last_where},
            {"last_ms", ms(r.last_ms)}, {"last_T", r.last_T},
            {"incremental_from", r.incremental_from >= 0 ? json(r.incremental_from) : json(nullptr)},
            {"full_ms", ms(r.full_ms)}, {"full_T", r.full_T}, {"views_ms", ms(r.views_ms)}, {"dropped", r.dropped},
            {"note", r.note}, {"error", r.error}};
  if (r.pending) j["pending_sentence"] = r.pending_inputs->sentence;
  // where the shown model's weights are: "page", or "worker" once they moved there (the page keeps none)
  if (const LoadedModel* m = find_model(s, s.inputs.model)) j["weights"] = m->model->weights_released ? "worker" : "page";
  if (r.slicing) j["slices"] = {{"done", r.slicing->steps_done()}, {"of", r.slicing->steps()}};  // the page's, between frames
  // an encoder reads both ways: a new token changes every earlier row, so every change computes them all
  if (!r.last_where.empty() && !r.causal) j["full_because"] = "an encoder reads both ways: every row changes with the text";
  return j;
}

json inputs_to_json(const AppState& s) {
  const AppInputs& in = s.inputs;
  auto token_texts = [](const EmbeddedSentence& e) {
    json a = json::array();
    for (const Token& tok : e.tokens) a.push_back(tok.text);
    return a;
  };
  json unknown = json::array();
  for (bool u : s.model.queries.unknown) unknown.push_back(u);
  json j;
  for (const InputField& f : input_fields()) j[f.name] = f.get(in);
  // what the inputs mean now
  j["model_info"] = current_model_info(s);
  j["token_text"] = s.model.queries.tokens[in.token].text;
  j["tokens"] = token_texts(s.model.queries);
  j["kv_tokens"] = token_texts(s.model.keys);
  j["unknown"] = unknown;
  // what the interventions did (inputs ablate, cut, patch): the answer before and after
  const EditEffect& e = s.model.effect;
  json intervention = {{"active", !in.ablate.empty() || !in.cuts.empty() || !in.patch.from.empty()}, {"note", s.model.edit_note}};
  if (const LoadedModel* m = find_model(s, in.model); m && e.shown) {
    json base_next = json::array();
    for (const NextToken& n : e.base_next) base_next.push_back({{"token", m->tokenizer->display(n.id)}, {"id", n.id}, {"p", n.p}});
    intervention["at"] = e.position;
    intervention["target"] = {{"token", m->tokenizer->display(e.target)}, {"id", e.target}};
    intervention["base_log_prob"] = e.base_log_prob;
    intervention["log_prob"] = e.log_prob;
    intervention["delta_log_prob"] = e.delta();
    intervention["base_next"] = std::move(base_next);
    if (e.patched)
      intervention["patch"] = {{"source_log_prob", e.source_log_prob},
                               {"restored", std::isfinite(e.restored) ? json(e.restored) : json(nullptr)}};
  }
  j["intervention"] = std::move(intervention);
  j["model_run"] = model_run_json(s);
  j["error"] = s.error;
  j["revision"] = s.revision;
  return j;
}

json state_to_json(const AppState& s) {
  const AttentionTrace& t = s.model.trace;
  json j = inputs_to_json(s);
  j["d"] = t.key.cols();
  j["score_factor"] = t.score_factor;
  j["scores"] = matrix_to_json(t.masked_scores);
  j["weights"] = matrix_to_json(t.weights);
  j["output"] = matrix_to_json(t.output);
  // A loaded model's predictions: a decoder's next tokens after the selected token (`next`); an
  // encoder's words for the asked mask (`masked`, as the CLI writes it: one entry, or none).
  json top = json::array();
  const LoadedModel* m = find_model(s, s.inputs.model);
  if (m)
    for (const NextToken& n : s.model.next)
      top.push_back({{"token", m->tokenizer->display(n.id)}, {"id", n.id}, {"p", n.p}});
  if (m && !m->model->config.causal) {
    j["next"] = json::array();
    j["masked"] = s.model.predict_position < 0 ? json::array()
                                               : json::array({{{"position", s.model.predict_position}, {"top", top}}});
  } else {
    j["next"] = top;
  }
  j["train"] = train_state_json(*s.train, s.inputs.train);
  return j;
}

void apply_state_json(AppState& s, const json& partial, double now) {
  if (!partial.is_object()) throw std::invalid_argument("state: setState takes an object of inputs");
  for (const auto& item : partial.items())
    if (!find_input(item.key())) refuse(item.key(), "is not an input of the explainer");
  // On top of the inputs the worker computes, if any (what is set here is computed now, with them).
  AppInputs next = shown_inputs(s);
  // In the table's order, not the object's: the sentence and the model come before the token,
  // the layer and the head, which are checked against them.
  for (const InputField& f : input_fields())
    if (partial.contains(f.name)) f.set(f, s, next, partial[f.name]);
  EmbeddedSentence queries;
  try {
    queries = query_tokens(s, next.model, next.sentence);
  } catch (const std::invalid_argument& e) {
    refuse("sentence", e.what());
  }
  if (!partial.contains("token") && (partial.contains("sentence") || partial.contains("model"))) {
    // A new sentence: keep the same word selected if it is still there ("it" by default).
    const int same = find_token(queries, s.model.queries.tokens[s.inputs.token].lower);
    next.token = same >= 0 ? same : std::min(next.token, static_cast<int>(queries.tokens.size()) - 1);
  }
  if (!apply_inputs(s, next, now)) {  // the caller gets the error; the screen keeps its last good state
    const std::string key = s.error_key, why = s.error;
    s.error.clear();
    s.error_key.clear();
    if (why.rfind(key, 0) == 0) throw std::invalid_argument(why);  // it names its input already ("cut 0.1:5-4: …")
    refuse(key, why);
  }
}

}  // namespace attn
