// Where a loaded model's forward runs (model_run.h): the worker's requests and answers, and the page's own
// incremental forward when no worker runs.
#include "model_run.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "app_state.h"

namespace attn {

namespace {

void note_forward(ModelRun& run, const std::string& where, double ms, int T, int from, bool causal) {
  run.last_where = where;
  run.last_ms = ms;
  run.last_T = T;
  run.incremental_from = from;
  run.causal = causal;
  if (from == 0) run.full_ms = ms, run.full_T = T;
}

}  // namespace

std::shared_ptr<const ModelTrace> model_run_forward(ModelRun& run, const LoadedModel& model, const std::vector<int>& ids,
                                                    const ForwardOptions& options) {
  if (run.arrived && run.arrived_weights == model.model && run.arrived->token_ids == ids) return run.arrived;
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  int from = 0;
  // No LM head rows at all rather than none from T on: the same trace, and options that stay the same
  // as T grows (the cache is kept only for the same options).
  ForwardOptions same = options;
  if (same.predict_from >= static_cast<int>(ids.size())) same.top_k = 0, same.predict_from = 0;
  auto trace = std::make_shared<const ModelTrace>(run.page_forward ? run.page_forward(*model.model, ids, *run.cache, same, &from)
                                                                    : transformer_forward(*model.model, ids, same));
  note_forward(run, "page", std::chrono::duration<double, std::milli>(clock::now() - t0).count(), static_cast<int>(ids.size()),
               from, model.model->config.causal);
  return trace;
}

void model_run_cancel(ModelRun& run) {
  if (run.pending) ++run.seq;  // an answer still on its way is for text no longer asked
  run.pending = false;
  run.slicing.reset();
  run.pending_weights.reset();
  run.pending_sentence.clear();
  run.pending_model.clear();
}

const std::string& shown_sentence(const AppState& state) {
  return state.model_run.pending ? state.model_run.pending_sentence : state.inputs.sentence;
}

bool apply_inputs_in_background(AppState& state, const AppInputs& next_in, double now) {
  ModelRun& run = state.model_run;
  AppInputs next = next_in;
  const LoadedModel* loaded = find_model(state, next.model);
  const bool new_text = next.sentence != state.inputs.sentence;
  if (!loaded || !(run.post || run.slices) || next.model != state.inputs.model || !new_text ||
      state.model.forward_model != loaded->model) {
    if (next.model != state.inputs.model || new_text) model_run_cancel(run);
    return apply_inputs(state, next, now);
  }
  std::vector<int> ids;
  try {
    ids = model_token_ids(*loaded, next.sentence);
  } catch (const std::invalid_argument&) {  // empty, or past what the model reads: refused with its message
    model_run_cancel(run);
    return apply_inputs(state, next, now);
  }
  const bool asked = run.pending && run.pending_model == next.model && run.pending_sentence == next.sentence &&
                     run.pending_weights == loaded->model;
  if (!asked) {
    ++run.seq;
    run.pending = true;
    run.pending_model = next.model;
    run.pending_sentence = next.sentence;
    run.pending_weights = loaded->model;
    run.error.clear();
    if (run.post) {
      run.post(*loaded, ids, extras_to_ask(*loaded, ids, next), run.seq);
    } else {  // here, a layer a frame (model_run_frame)
      ForwardOptions no_head;
      no_head.top_k = 0;
      run.slicing = std::make_shared<ForwardInSlices>(loaded->model, ids, no_head);
      run.slicing_ms = 0;
    }
  }
  run.pending_token = next.token;
  // The rest of the change applies now; the text and its token when the answer comes.
  next.sentence = state.inputs.sentence;
  next.token = state.inputs.token;
  if (next == state.inputs) return true;
  return apply_inputs(state, next, now);
}

ForwardExtrasAsk extras_to_ask(const LoadedModel& model, const std::vector<int>& ids, const AppInputs& next) {
  const TransformerConfig& c = model.model->config;
  ForwardExtrasAsk ask;
  ask.layer = std::clamp(next.layer, 0, c.n_layer - 1);
  ask.position = predict_position(model, ids, std::clamp(next.token, 0, static_cast<int>(ids.size()) - 1));
  ask.top = kShownNextTokens;
  ask.attribution = next.view == View::Heads;
  return ask;
}

const ForwardExtras* arrived_extras_for(const ModelRun& run, const std::shared_ptr<const ModelTrace>& forward) {
  return run.arrived && forward == run.arrived ? &run.arrived_extras : nullptr;
}

namespace {
// The pending text's trace came (from the worker, or the page's slices): applied when its model is still the one asked.
bool pending_arrived(AppState& state, std::shared_ptr<const ModelTrace> trace, ForwardExtras extras, const std::string& where,
                     double ms, double extras_ms, int recomputed_from, double now) {
  ModelRun& run = state.model_run;
  const LoadedModel* m = find_model(state, run.pending_model);
  if (!m || m->model != run.pending_weights || state.inputs.model != run.pending_model) {
    ++run.dropped;
    model_run_cancel(run);
    return false;
  }
  note_forward(run, where, ms, static_cast<int>(trace->token_ids.size()), recomputed_from, m->model->config.causal);
  run.arrived = std::move(trace);
  run.arrived_weights = m->model;
  run.arrived_extras = std::move(extras);
  run.extras_ms = extras_ms;
  AppInputs next = state.inputs;
  next.sentence = run.pending_sentence;
  next.token = run.pending_token;
  run.pending = false;
  run.pending_weights.reset();
  const bool ok = apply_inputs(state, next, now);
  run.arrived.reset();
  run.arrived_weights.reset();
  run.arrived_extras = {};
  if (!ok) run.error = state.error;
  return ok;
}
}  // namespace

bool model_run_arrived(AppState& state, unsigned seq, std::shared_ptr<const ModelTrace> trace, ForwardExtras extras,
                       double ms, double extras_ms, int recomputed_from, double now) {
  ModelRun& run = state.model_run;
  if (!run.pending || seq != run.seq || run.slicing) {
    ++run.dropped;  // for text that has changed since
    return false;
  }
  return pending_arrived(state, std::move(trace), std::move(extras), "worker", ms, extras_ms, recomputed_from, now);
}

void model_run_frame(AppState& state, double budget_ms, double now) {
  ModelRun& run = state.model_run;
  if (!run.pending || !run.slicing) return;
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  const auto spent = [&] { return std::chrono::duration<double, std::milli>(clock::now() - t0).count(); };
  bool done = false;
  do done = run.slicing->step();  // at least one layer a frame
  while (!done && spent() < budget_ms);
  run.slicing_ms += spent();
  if (!done) return;
  auto trace = std::make_shared<const ModelTrace>(run.slicing->take());
  run.slicing.reset();
  pending_arrived(state, std::move(trace), {}, "page", run.slicing_ms, -1, 0, now);
}

namespace {
// The pending text computed here instead (the worker could not).
void compute_pending_here(AppState& state, double now) {
  ModelRun& run = state.model_run;
  if (!run.pending) return;
  if (run.slices) {  // in slices from the next frame on (the views stay marked "updating…")
    const LoadedModel* m = find_model(state, run.pending_model);
    if (m && m->model == run.pending_weights) {
      try {
        ForwardOptions no_head;
        no_head.top_k = 0;
        run.slicing = std::make_shared<ForwardInSlices>(m->model, model_token_ids(*m, run.pending_sentence), no_head);
        run.slicing_ms = 0;
        return;
      } catch (const std::invalid_argument&) {  // computed at once below, which says why
      }
    }
  }
  AppInputs next = state.inputs;
  next.sentence = run.pending_sentence;
  next.token = run.pending_token;
  const bool same_model = state.inputs.model == run.pending_model;
  model_run_cancel(run);
  if (same_model) apply_inputs(state, next, now);
}
}  // namespace

void model_run_request_failed(AppState& state, unsigned seq, const std::string& why, double now) {
  ModelRun& run = state.model_run;
  if (!run.pending || seq != run.seq) return;
  run.error = "The model's worker could not compute this text (" + why + "): it was computed in the page.";
  compute_pending_here(state, now);
}

void model_run_worker_failed(AppState& state, const std::string& why, double now) {
  ModelRun& run = state.model_run;
  run.post = nullptr;
  run.post_sweep = nullptr;  // the sweeps go on here from the cells that came
  run.sweeps_posted.clear();
  run.worker = false;
  run.slices = true;
  run.note = "The model's worker stopped (" + why + "): the forward runs in the page, a layer between frames.";
  run.error = run.note;
  compute_pending_here(state, now);
}

// [SECTION] Sweeps in the worker

bool model_run_sweep(AppState& state, SweepRun& r, const std::string& slot, bool on) {
  ModelRun& run = state.model_run;
  if (!run.post_sweep || r.page_only) return false;
  const auto posted = run.sweeps_posted.find(slot);
  const bool wanted = on && r.base && !r.finished();
  if (!wanted) {
    if (posted != run.sweeps_posted.end()) {  // stopped, done, or for runs no longer shown
      run.post_sweep(nullptr, {{"slot", slot}});
      run.sweeps_posted.erase(posted);
    }
    return true;
  }
  if (posted != run.sweeps_posted.end() && posted->second == r.worker_seq) return true;  // running there
  const LoadedModel* m = find_model(state, state.inputs.model);
  if (!m || m->model != r.model) return true;  // (follows the shown model's runs: apply_inputs starts it again)
  static const char* const kOver[] = {"ablate", "heads", "positions"};
  nlohmann::json request = nlohmann::json::object();
  request["slot"] = slot;
  request["seq"] = ++run.sweep_seq;
  request["over"] = kOver[static_cast<int>(r.over)];
  request["ids"] = r.base->token_ids;
  request["position"] = r.position;
  request["target"] = r.target;
  if (r.source) request["source_ids"] = r.source->token_ids;
  if (r.sweep.values.size() > 0) request["resume"] = sweep_cells_json(r.sweep);  // stopped before: it continues from its cells
  r.worker_seq = run.sweep_seq;
  r.where = "worker";
  run.sweeps_posted[slot] = r.worker_seq;
  run.post_sweep(m, request);
  return true;
}

bool model_run_sweep_arrived(AppState& state, const nlohmann::json& report) {
  ModelRun& run = state.model_run;
  const std::string slot = report.at("slot").get<std::string>();
  const unsigned seq = report.at("seq").get<unsigned>();
  SweepRun& r = slot == "heads" ? state.heads_sweep : state.patch_sweep;
  const auto posted = run.sweeps_posted.find(slot);
  if (posted == run.sweeps_posted.end() || posted->second != seq || r.worker_seq != seq) return false;  // stopped or replaced
  if (report.contains("error")) {
    run.sweeps_posted.erase(posted);
    r.page_only = true;
    r.where = "page";
    run.error = "The model's worker could not run the sweep (" + report["error"].get<std::string>() + "): it runs in the page.";
    return false;
  }
  const int rows = r.model->config.n_layer;
  r.sweep = sweep_cells_from_json(report, rows, r.total() / std::max(1, rows));
  if (r.finished()) run.sweeps_posted.erase(slot);
  return true;
}

}  // namespace attn
