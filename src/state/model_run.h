// Where a loaded model's answers run and what the forward last did: in the model's Web Worker (the page
// posts what the views need, model_views.h, and shows the last complete answer, "updating…", until the
// new one comes) or here (the forward between frames, with the same incremental forward, where the
// worker could not start). Not the worker (src/worker/model_worker.cpp)
// and not the page's glue (src/app/js_model_api.cpp): a hook set by the platform edge posts requests.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../api/model_files.h"
#include "../api/model_transfer.h"
#include "../api/model_views.h"
#include "../core/transformer.h"

namespace attn {

struct AppState;
struct AppInputs;
struct SweepRun;

struct ModelRun {
  // Posts `ask` for the weights of `model` to the worker under `seq`, with the ask of the answer shown (`held`: its
  // runs the page keeps and the worker need not send; null: none) (set by the platform edge while its worker runs;
  // null: the page computes its answers itself).
  std::function<void(const LoadedModel& model, const ModelViewsAsk& ask, const ModelViewsAsk* held, unsigned seq)> post;
  // Posts a sweep to the worker (set with post): `request` {slot, seq, over, ids, source_ids?, position, target,
  // resume?} for the weights of `model`; model null: the slot's sweep stops (web/model_worker.js).
  std::function<void(const LoadedModel* model, const nlohmann::json& request)> post_sweep;
  std::map<std::string, unsigned> sweeps_posted;  // slot ("heads" | "patch") → the sweep request the worker runs there
  unsigned sweep_seq = 0;                         // the last sweep request's number
  bool worker = false;     // the worker computes (post is set)
  std::string note;        // why the page computes instead (the worker could not start, stopped), "" when it does not
  std::string error;       // the last failure a learner should read ("" none): the last good result stays on screen
  // The inputs whose answer the worker computes now (pending): the views show the last complete answer until it
  // comes, with the inputs it is for.
  bool pending = false;
  unsigned seq = 0;        // the last request's number: an answer with another one is for older inputs, dropped
  std::shared_ptr<const AppInputs> pending_inputs;
  std::shared_ptr<const Transformer> pending_weights;
  ModelViewsAsk pending_ask;
  // The worker's answer, taken by the next apply_inputs for the same weights and ask.
  std::shared_ptr<const ModelViews> arrived;
  std::shared_ptr<const Transformer> arrived_weights;
  double views_ms = -1;    // the worker's time for the last answer's parts beside the forward (last_ms)
  int dropped = 0;         // answers dropped: for inputs that changed since, or a model unloaded or replaced
  // The last forward of the shown text: where, its ms (to the trace, without the views' own numbers), its
  // T and the first position computed again (0: all; T: none), and the last forward computed in full.
  std::string last_where;  // "worker" | "page" ("" before the first)
  double last_ms = -1;
  int last_T = 0, incremental_from = -1;
  double full_ms = -1;
  int full_T = 0;
  bool causal = true;      // the last forward's model masks later keys (an encoder computes every row again)
  // The forward the page runs itself when no worker does: the incremental one where the program links it (the
  // native app sets it), else the whole forward (the page's wasm leaves the incremental one to the worker's, so
  // the first load stays under 1 MB), with the page's own cache.
  using PageForward = ModelTrace (*)(const Transformer&, const std::vector<int>&, ForwardCache&, const ForwardOptions&, int*);
  PageForward page_forward = nullptr;
  std::shared_ptr<ForwardCache> cache = std::make_shared<ForwardCache>();
  // Where the worker could not start or stopped (the page, not the native app): a new text's forward runs
  // here a layer at a time between frames (model_run_frame), the views marked "updating…" as for the worker;
  // the rest of the answer is computed here once it is done.
  bool slices = false;
  std::shared_ptr<ForwardInSlices> slicing;  // the pending text's, while it runs
  double slicing_ms = 0;                     // its layers' time so far
  std::shared_ptr<const ModelTrace> sliced;  // its trace once done, taken by model_run_forward
};

// The shown text's forward by `model` for `ids` (no LM head rows): the page's slices' when they computed it,
// else computed here (run.page_forward with the page's cache, or in full; timed into run). Throws what
// transformer_forward throws.
std::shared_ptr<const ModelTrace> model_run_forward(ModelRun& run, const LoadedModel& model, const std::vector<int>& ids);

// Applies the learner's change like apply_inputs, except that a change whose answer (model_views.h) is not at
// hand, for the shown loaded model while a worker runs, is posted to it instead of computed: the change applies
// when its answer comes (model_run_arrived), the views show the last answer meanwhile ("updating…"). A change
// made while one is pending adds to it; a change refused drops the one pending. Returns apply_inputs' answer
// (true for a posted change).
bool apply_inputs_in_background(AppState& state, const AppInputs& next, double now);
// Posts `ask` (the answer the inputs `next` need; `held`: the shown answer's ask) to the worker, or starts the
// page's slices for a new text's forward: true when the change now waits for its answer (pending), false where
// the answer is computed now (no worker; or the page slices and the text's forward is at hand).
bool model_run_post(ModelRun& run, const LoadedModel& model, const ModelViewsAsk& ask, const ModelViewsAsk* held,
                    const AppInputs& next);
// The worker's answer for request `seq`: applied when it is the latest and its model is still the one asked;
// else dropped (counted). Returns true when applied.
bool model_run_arrived(AppState& state, unsigned seq, std::shared_ptr<const ModelViews> views, double ms, double views_ms,
                       int recomputed_from, double now);
// The worker failed for request `seq` (its message): the text is computed here instead, the error kept.
void model_run_request_failed(AppState& state, unsigned seq, const std::string& why, double now);
// The worker could not start or stopped: the page computes from now on and says why; a text the worker had
// is computed here.
void model_run_worker_failed(AppState& state, const std::string& why, double now);
// The pending text's forward in slices (ModelRun::slices) for up to budget_ms of this frame; applied when done.
void model_run_frame(AppState& state, double budget_ms, double now);
// A sweep (app_state.h's SweepRun, in `slot`: "heads" | "patch") while a worker runs: posted there when it is on
// (continuing from the cells it has), stopped there when it is off or done. False where no worker runs
// (the page sweeps itself: sweeps_frame) or the worker could not run it.
bool model_run_sweep(AppState& state, SweepRun& sweep, const std::string& slot, bool on);
// A slice of the worker's sweep: {slot, seq, done, total, values (row-major, null where not run), baseline,
// source} or {slot, seq, error}: applied to the sweep it was posted for, else dropped; an error leaves the
// sweep to the page (with the cells done), the error kept. Returns true when applied.
bool model_run_sweep_arrived(AppState& state, const nlohmann::json& report);
// The worker holds every number of `weights` (every piece moved in): the page frees its own copy of every tensor
// (Transformer::release_weights) and from then on computes nothing with that model: every answer is the worker's.
void model_run_weights_moved(AppState& state, const std::shared_ptr<const Transformer>& weights);
// Throws std::invalid_argument saying so when the page cannot compute with `model` itself: its weights were in
// its worker, which stopped (model_run_weights_moved freed the page's copy).
void require_weights_here(const LoadedModel& model);
// Forgets the inputs the worker computes (a change was applied directly, or the model went).
void model_run_cancel(ModelRun& run);
// The inputs the controls show: those the worker computes while a change is pending, else the shown ones.
const AppInputs& shown_inputs(const AppState& state);

}  // namespace attn
