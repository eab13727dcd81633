// Where a loaded model's answers run (model_run.h): the worker's requests and answers, and the page's own
// incremental forward when no worker runs.
#include "model_run.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "app_state.h"
#include "input_table.h"

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

std::shared_ptr<const ModelTrace> model_run_forward(ModelRun& run, const LoadedModel& model, const std::vector<int>& ids) {
  if (run.sliced && run.arrived_weights == model.model && run.sliced->token_ids == ids) return run.sliced;
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  int from = 0;
  // No LM head rows at all: the options stay the same as T grows (the cache is kept only for the same options).
  ForwardOptions none;
  none.top_k = 0;
  auto trace = std::make_shared<const ModelTrace>(run.page_forward ? run.page_forward(*model.model, ids, *run.cache, none, &from)
                                                                    : transformer_forward(*model.model, ids, none));
  note_forward(run, "page", std::chrono::duration<double, std::milli>(clock::now() - t0).count(), static_cast<int>(ids.size()),
               from, model.model->config.causal);
  return trace;
}

void model_run_cancel(ModelRun& run) {
  if (run.pending) ++run.seq;  // an answer still on its way is for inputs no longer asked
  run.pending = false;
  run.slicing.reset();
  run.pending_weights.reset();
  run.pending_inputs.reset();
  run.pending_ask = {};
}

const AppInputs& shown_inputs(const AppState& state) {
  return state.model_run.pending ? *state.model_run.pending_inputs : state.inputs;
}

bool model_run_post(ModelRun& run, const LoadedModel& model, const ModelViewsAsk& ask, const ModelViewsAsk* held,
                    const AppInputs& next) {
  const bool asked = run.pending && run.pending_weights == model.model && run.pending_ask == ask;
  if (run.post) {
    if (!asked) {
      ++run.seq;
      run.error.clear();
      run.post(model, ask, held, run.seq);
    }
  } else if (run.slices) {  // the text's forward here, a layer a frame (model_run_frame); the rest once it is done
    if ((held && held->ids == ask.ids) || model.model->weights_released) return false;  // computed (or refused) now
    if (!(run.pending && run.pending_weights == model.model && run.slicing && run.pending_ask.ids == ask.ids)) {
      ++run.seq;
      ForwardOptions none;
      none.top_k = 0;
      run.slicing = std::make_shared<ForwardInSlices>(model.model, ask.ids, none);
      run.slicing_ms = 0;
    }
  } else {
    return false;
  }
  run.pending = true;
  run.pending_inputs = std::make_shared<const AppInputs>(next);
  run.pending_weights = model.model;
  run.pending_ask = ask;
  return true;
}

bool apply_inputs_in_background(AppState& state, const AppInputs& next_in, double now) {
  ModelRun& run = state.model_run;
  AppInputs next = next_in;
  if (run.pending) {
    next = *run.pending_inputs;  // what changed from the inputs shown, on top of the pending ones
    for (const InputField& f : input_fields())
      if (!f.equal(next_in, state.inputs)) f.copy(next, next_in);
  }
  if (apply_inputs(state, next, now, /*may_post=*/true)) return true;
  model_run_cancel(run);  // refused: the inputs waiting are ones the learner has moved past (a text typed on)
  return false;
}

namespace {
// The pending inputs' answer came (from the worker, or the page's slices: its forward): applied when its model
// is still the one asked.
bool pending_arrived(AppState& state, std::shared_ptr<const ModelViews> views, std::shared_ptr<const ModelTrace> sliced,
                     const std::string& where, double ms, double views_ms, int recomputed_from, double now) {
  ModelRun& run = state.model_run;
  const LoadedModel* m = find_model(state, run.pending_inputs->model);
  if (!m || m->model != run.pending_weights) {
    ++run.dropped;
    model_run_cancel(run);
    return false;
  }
  const int T = static_cast<int>(run.pending_ask.ids.size());
  if (recomputed_from < T) note_forward(run, where, ms, T, recomputed_from, m->model->config.causal);  // (else the text's forward was at hand)
  run.arrived = std::move(views);
  run.sliced = std::move(sliced);
  run.arrived_weights = m->model;
  run.views_ms = views_ms;
  const AppInputs next = *run.pending_inputs;
  run.pending = false;
  run.pending_inputs.reset();
  run.pending_weights.reset();
  run.pending_ask = {};
  const bool ok = apply_inputs(state, next, now);
  run.arrived.reset();
  run.sliced.reset();
  run.arrived_weights.reset();
  if (!ok) run.error = state.error;
  return ok;
}
}  // namespace

bool model_run_arrived(AppState& state, unsigned seq, std::shared_ptr<const ModelViews> views, double ms, double views_ms,
                       int recomputed_from, double now) {
  ModelRun& run = state.model_run;
  if (!run.pending || seq != run.seq || run.slicing) {
    ++run.dropped;  // for inputs that have changed since
    return false;
  }
  return pending_arrived(state, std::move(views), nullptr, "worker", ms, views_ms, recomputed_from, now);
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
  pending_arrived(state, nullptr, std::move(trace), "page", run.slicing_ms, -1, 0, now);
}

namespace {
// The pending inputs computed here instead (the worker could not): a new text's forward in slices where the
// page slices (the views stay marked "updating…"), else at once.
void compute_pending_here(AppState& state, double now) {
  ModelRun& run = state.model_run;
  if (!run.pending) return;
  const AppInputs next = *run.pending_inputs;
  model_run_cancel(run);
  apply_inputs(state, next, now, /*may_post=*/run.slices);
}
}  // namespace

void model_run_request_failed(AppState& state, unsigned seq, const std::string& why, double now) {
  ModelRun& run = state.model_run;
  if (!run.pending || seq != run.seq) return;
  run.error = "The model's worker could not compute this (" + why + "): it was computed in the page.";
  compute_pending_here(state, now);
}

void model_run_worker_failed(AppState& state, const std::string& why, double now) {
  ModelRun& run = state.model_run;
  run.post = nullptr;
  run.post_sweep = nullptr;  // the sweeps go on here from the cells that came
  run.sweeps_posted.clear();
  run.worker = false;
  run.slices = true;
  const bool lost = std::any_of(state.models.begin(), state.models.end(), [](const LoadedModel& m) { return m.model->weights_released; });
  run.note = "The model's worker stopped (" + why + "): " +
             (lost ? "the weights it held went with it. The views keep the last answer; load the model again to go on "
                     "(it then runs in the page)."
                   : "the model runs in the page, its forward a layer between frames.");
  run.error = run.note;
  compute_pending_here(state, now);
}

void model_run_weights_moved(AppState& state, const std::shared_ptr<const Transformer>& weights) {
  // The loaders make every model non-const (only the state's pointers are const), and nothing on the page
  // computes with it from now on (apply_inputs posts to the worker, the sweeps and slices check
  // weights_released): its weights are freed in place, so every run and answer naming the model stays valid.
  const_cast<Transformer&>(*weights).release_weights();
  if (state.model_run.cache->model == weights.get()) state.model_run.cache->clear();
}

void require_weights_here(const LoadedModel& model) {
  if (model.model->weights_released)
    throw std::invalid_argument(model.name + "'s weights were in its worker, which stopped: load " + model.name +
                                " again to go on (the views keep its last answer)");
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
    run.error = "The model's worker could not run the sweep (" + report["error"].get<std::string>() + "): " +
                (r.model->weights_released ? "the page does not keep the weights, so it stops here."
                                            : "it runs in the page.");
    return false;
  }
  const int rows = r.model->config.n_layer;
  r.sweep = sweep_cells_from_json(report, rows, r.total() / std::max(1, rows));
  if (r.finished()) run.sweeps_posted.erase(slot);
  return true;
}

}  // namespace attn
