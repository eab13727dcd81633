// Exports for the loaded model's Web Worker (web/model_worker.js; web/explainer.js relays): the worker
// started, ready or failed, each model's weights moved into it once, what the views need of the model posted
// and its answer applied (state/model_run.h), and modelTrace's requests and answers. Not the worker itself.
#include <imgui.h>

#include <map>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../api/compute_json.h"
#include "../api/model_json.h"
#include "../api/model_transfer.h"
#include "../state/app_state.h"
#include "js_api.h"
#include "model_worker.h"

namespace {
using js_api::error_reply;
using js_api::reply;

using js_api::state;

// The models the worker holds, by their weights: the id it knows them by.
struct Sent {
  int id = 0;
  std::weak_ptr<const attn::Transformer> weights;
};
std::map<const attn::Transformer*, Sent> g_sent;
int g_next_model_id = 1;
bool g_worker_ready = false;

// modelTrace requests the worker computes, by number: what the answer is built with.
struct TraceAsked {
  std::string model;
  std::shared_ptr<const attn::Transformer> weights;
  std::vector<int> ids;
  int top = 5;
};
std::map<unsigned, TraceAsked> g_traces;
unsigned g_trace_seq = 0;

void post(const nlohmann::json& message);                                   // Module.modelWorkerPost
void send_model(int id, const std::string& header, const nlohmann::json& tensors);  // Module.modelWorkerSendModel

// The worker's id of these weights, moving them in first when it has not got them.
int worker_model(const attn::LoadedModel& m) {
  const auto it = g_sent.find(m.model.get());
  if (it != g_sent.end() && !it->second.weights.expired()) return it->second.id;
  const int id = g_next_model_id++;
  nlohmann::json tensors = nlohmann::json::array();
  for (const attn::TensorBytes& t : attn::transformer_tensors(*m.model))
    tensors.push_back({reinterpret_cast<std::uintptr_t>(t.data), t.bytes});
  send_model(id, attn::transformer_header(*m.model), tensors);
  g_sent[m.model.get()] = {id, m.model};
  // its tokenizer's files (intervene reads tokens there), then the page's copy of them goes
  post({{"type", "tokenizer"}, {"id", id}, {"name", m.name}, {"files", m.tokenizer_files}});
  for (attn::LoadedModel& kept : state()->models)
    if (kept.model == m.model) std::map<std::string, std::string>().swap(kept.tokenizer_files);
  return id;
}

}  // namespace

void attn::app::model_worker_forget(const std::shared_ptr<const Transformer>& weights) {
  const auto it = g_sent.find(weights.get());
  if (it == g_sent.end()) return;
  if (g_worker_ready) post({{"type", "drop"}, {"id", it->second.id}});
  g_sent.erase(it);
}

int attn::app::model_worker_id(const LoadedModel& model) { return g_worker_ready ? worker_model(model) : 0; }

void attn::app::model_worker_model_loaded(const LoadedModel& model) {
  if (g_worker_ready) worker_model(model);  // moved in now, not on the first keystroke
  else start_model_worker();
}

// The worker's wasm is running: the views' answers are computed there from now on.
JS_EXPORT void attn_model_worker_ready() {
  attn::AppState* s = state();
  if (!s) return;
  g_worker_ready = true;
  attn::ModelRun& run = s->model_run;
  run.worker = true;
  run.note.clear();
  run.post = [](const attn::LoadedModel& m, const attn::ModelViewsAsk& ask, const attn::ModelViewsAsk* held, unsigned seq) {
    nlohmann::json message = {{"type", "views"}, {"seq", seq}, {"model", worker_model(m)}, {"ask", attn::model_views_ask_json(ask)}};
    if (held) message["held"] = attn::model_views_ask_json(*held);
    post(message);
  };
  run.post_sweep = [](const attn::LoadedModel* m, const nlohmann::json& request) {
    nlohmann::json message = request;
    message["type"] = m ? "sweep" : "sweep-stop";
    if (m) message["model"] = worker_model(*m);
    post(message);
  };
  if (const attn::LoadedModel* m = attn::current_loaded_model(*s)) worker_model(*m);
}

// Whether a change waits for the worker's answer (setState's Promise and settled() poll it).
JS_EXPORT int attn_model_run_pending() {
  const attn::AppState* s = state();
  return s && s->model_run.pending ? 1 : 0;
}

// Every piece of the model the worker knows as `id` is in: the page frees its own copy of the weights (the
// worker computes every answer with that model from now on).
JS_EXPORT void attn_model_worker_has(int id) {
  attn::AppState* s = state();
  if (!s) return;
  for (const auto& [pointer, sent] : g_sent)
    if (sent.id == id)
      if (const std::shared_ptr<const attn::Transformer> weights = sent.weights.lock()) attn::model_run_weights_moved(*s, weights);
}

// A slice of the worker's sweep (model_run_sweep_arrived's report, its values an array) → {"applied"}.
JS_EXPORT const char* attn_model_sweep_arrived(const char* json_text) {
  attn::AppState* s = state();
  if (!s) return error_reply("the explainer is not running yet");
  try {
    return reply({{"applied", attn::model_run_sweep_arrived(*s, nlohmann::json::parse(json_text ? json_text : ""))}});
  } catch (const std::exception& e) {
    return error_reply(std::string("a sweep from the model's worker: ") + e.what());
  }
}

// The worker could not start (its script missing, no Worker) or stopped: the page computes, says why, and
// computes the text the worker had; modelTrace's requests in flight are answered by the page (their
// texts come back: {"traces": [{seq, ids, top}]}, web/explainer.js asks attn_model_trace_request again: the page answers it now).
JS_EXPORT const char* attn_model_worker_failed(const char* why) {
  attn::AppState* s = state();
  if (!s) return error_reply("the explainer is not running yet");
  g_worker_ready = false;
  g_sent.clear();
  attn::model_run_worker_failed(*s, why ? why : "it stopped", ImGui::GetTime());
  nlohmann::json traces = nlohmann::json::array();
  for (const auto& [seq, asked] : g_traces) traces.push_back(seq);
  return reply({{"traces", traces}});
}

// The worker's answer to request `seq` in two calls, so its numbers are copied once, straight into the
// answer's matrices: {"seq", "header", "count", "ms", "views_ms", "recomputed_from"} or {"seq", "error"} →
// {"copy": [[pointer, floats], ...]} (where the page copies the numbers, in order, then calls
// attn_model_run_filled) or {"applied": false} (an error, or inputs since changed: dropped, not even unpacked).
namespace {
struct ArrivingRun {
  unsigned seq = 0;
  std::shared_ptr<attn::ModelViews> views;
  double ms = 0, views_ms = -1;
  int recomputed_from = 0;
};
std::optional<ArrivingRun> g_arriving_run;
}  // namespace

JS_EXPORT const char* attn_model_run_result(const char* json_text) {
  attn::AppState* s = state();
  if (!s) return error_reply("the explainer is not running yet");
  g_arriving_run.reset();
  try {
    const nlohmann::json r = nlohmann::json::parse(json_text ? json_text : "");
    const unsigned seq = r.at("seq").get<unsigned>();
    if (r.contains("error")) {
      attn::model_run_request_failed(*s, seq, r["error"].get<std::string>(), ImGui::GetTime());
      return reply({{"applied", false}});
    }
    if (!s->model_run.pending || seq != s->model_run.seq) {  // stale: not even unpacked
      ++s->model_run.dropped;
      return reply({{"applied", false}});
    }
    ArrivingRun run;
    std::vector<attn::TensorDestination> into;
    run.seq = seq, run.ms = r.at("ms").get<double>(), run.views_ms = r.value("views_ms", -1.0);
    run.recomputed_from = r.at("recomputed_from").get<int>();
    // (the runs the worker did not send are the shown answer's: it was told which the page holds)
    const attn::ModelViews* held = s->model.forward_model == s->model_run.pending_weights ? s->model.answer.get() : nullptr;
    run.views = std::make_shared<attn::ModelViews>(
        attn::unpack_model_views(r.at("header").get<std::string>(), nullptr, r.at("count").get<std::size_t>(), held, &into));
    nlohmann::json copy = nlohmann::json::array();
    for (const attn::TensorDestination& d : into) copy.push_back({reinterpret_cast<std::uintptr_t>(d.data), d.bytes / sizeof(float)});
    g_arriving_run = std::move(run);
    return reply({{"copy", copy}});
  } catch (const std::bad_alloc&) {
    return error_reply("model worker answer: the browser refused the page enough memory for it");
  } catch (const std::exception& e) {
    return error_reply(std::string("model worker answer: ") + e.what());
  }
}

// The numbers of the answer attn_model_run_result unpacked are in place: applied → {"applied": bool}.
JS_EXPORT const char* attn_model_run_filled() {
  attn::AppState* s = state();
  if (!s || !g_arriving_run) return reply({{"applied", false}});
  ArrivingRun run = std::move(*g_arriving_run);
  g_arriving_run.reset();
  try {
    const bool applied = attn::model_run_arrived(*s, run.seq, std::move(run.views), run.ms, run.views_ms, run.recomputed_from,
                                                 ImGui::GetTime());
    return reply({{"applied", applied}});
  } catch (const std::exception& e) {
    return error_reply(std::string("model worker answer: ") + e.what());
  }
}

// modelTrace's request {text, top}: {"result": ...} when the page computes it (no worker), else {"seq",
// "model", "ids", "top", "padding"} for the worker (its answer goes to attn_model_trace_answer).
JS_EXPORT const char* attn_model_trace_request(const char* json_text) {
  try {
    attn::AppState* s = state();
    if (!s) return error_reply("the explainer is not running yet");
    const nlohmann::json request = attn::parse_json_limited(json_text ? json_text : "");
    if (!request.is_object()) throw std::invalid_argument("modelTrace takes an object {text, top}");
    for (const auto& item : request.items())
      if (item.key() != "text" && item.key() != "top") throw std::invalid_argument("modelTrace: unknown key \"" + item.key() + "\"");
    if (!request.contains("text") || !request["text"].is_string()) throw std::invalid_argument("text: must be a string");
    int top = 5;
    if (request.contains("top")) {
      if (!request["top"].is_number_integer()) throw std::invalid_argument("top: must be a whole number");
      top = request["top"].get<int>();
    }
    const attn::LoadedModel* model = attn::find_model(*s, s->inputs.model);
    if (!model) throw std::invalid_argument("model: the current model is the hand-made one; load a model first (loadModel)");
    const std::string text = request["text"].get<std::string>();
    if (!g_worker_ready) {
      attn::require_weights_here(*model);
      return reply({{"result", attn::model_trace_json(*model, text, top)}});
    }
    const std::vector<int> ids = attn::model_trace_ids(*model, attn::model_text_ids(*model, text), top, 0);
    const unsigned seq = ++g_trace_seq;
    g_traces[seq] = {model->name, model->model, ids, top};
    return reply({{"seq", seq}, {"model", worker_model(*model)}, {"ids", ids}, {"top", top}, {"padding", 0}});
  } catch (const std::bad_alloc&) {
    return error_reply("modelTrace: the browser refused to give the page enough memory for this text");
  } catch (const std::exception& e) {
    return error_reply(e.what());
  }
}

// The worker's numbers for modelTrace request `seq`: {"seq", "next": [T][[id, p]]} → {"result": the answer
// without its attention (the page adds the worker's)} or {"error"} (the model went while it computed).
JS_EXPORT const char* attn_model_trace_answer(const char* json_text) {
  try {
    attn::AppState* s = state();
    if (!s) return error_reply("the explainer is not running yet");
    const nlohmann::json r = nlohmann::json::parse(json_text ? json_text : "");
    const auto it = g_traces.find(r.at("seq").get<unsigned>());
    if (it == g_traces.end()) throw std::invalid_argument("modelTrace: an answer nobody asked for");
    const TraceAsked asked = it->second;
    g_traces.erase(it);
    const attn::LoadedModel* model = attn::find_model(*s, asked.model);
    if (!model || model->model != asked.weights)
      throw std::invalid_argument("modelTrace: \"" + asked.model + "\" was unloaded or replaced while the trace was computed");
    if (r.contains("error")) throw std::invalid_argument(r["error"].get<std::string>());
    attn::ModelTrace trace;
    trace.token_ids = asked.ids;
    for (const nlohmann::json& row : r.at("next")) {
      std::vector<attn::NextToken> options;
      for (const nlohmann::json& n : row) options.push_back({n.at(0).get<int>(), n.at(1).get<float>()});
      trace.next.push_back(std::move(options));
    }
    return reply({{"result", attn::model_trace_answer(*model, trace, nullptr, asked.top)}});
  } catch (const std::exception& e) {
    return error_reply(e.what());
  }
}

// A modelTrace request the worker will not answer (it stopped): forgotten (the page computes it again).
JS_EXPORT void attn_model_trace_forget(unsigned seq) { g_traces.erase(seq); }

#if defined(__EMSCRIPTEN__)
bool attn::app::start_model_worker() {
  return EM_ASM_INT({ return Module.startModelWorker && typeof Worker != "undefined" ? (Module.startModelWorker(), 1) : 0; }) != 0;
}
namespace {
// (a text file of the tokenizer with bytes that are not UTF-8 reaches the worker with them replaced, not as a crash)
void post(const nlohmann::json& message) {
  EM_ASM({ Module.modelWorkerPost(UTF8ToString($0)); }, message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}
void send_model(int id, const std::string& header, const nlohmann::json& tensors) {
  EM_ASM({ Module.modelWorkerSendModel($0, UTF8ToString($1), UTF8ToString($2)); }, id, header.c_str(), tensors.dump().c_str());
}
}  // namespace
#else
bool attn::app::start_model_worker() { return false; }  // natively the forward runs in the app
namespace {
void post(const nlohmann::json&) {}
void send_model(int, const std::string&, const nlohmann::json&) {}
}  // namespace
#endif

// The benchmark's handle on the worker (tests/bench/model_bench.mjs): {"model": the worker's id of the current
// model (moved in first where it is not), "vocab"}, or {"error"} where no worker runs.
JS_EXPORT const char* attn_model_worker_model() {
  attn::AppState* s = state();
  const attn::LoadedModel* m = s ? attn::current_loaded_model(*s) : nullptr;
  if (!m) return error_reply("bench: load a model first");
  if (!g_worker_ready) return error_reply("bench: the model's worker is not running");
  return reply({{"model", worker_model(*m)}, {"vocab", m->model->config.vocab_size}});
}

// Writes with the model (the next-token strip's click, for the page's API and the screen-reader mirror):
// token `id` added to the end of the text, its new last token selected, computed like typing (in the
// worker where it runs) → {"ok", "text"} or {"error"}.
JS_EXPORT const char* attn_model_write(int id) {
  try {
    attn::AppState* s = state();
    if (!s) return error_reply("the explainer is not running yet");
    const attn::LoadedModel* m = attn::current_loaded_model(*s);
    if (!m) throw std::invalid_argument("write: load a model first");
    if (!m->model->config.causal) throw std::invalid_argument("write: " + m->name + " is an encoder: it fills gaps, it does not write on");
    if (id < 0 || id >= m->model->config.vocab_size) throw std::invalid_argument("write: token " + std::to_string(id) + " is not in the vocabulary");
    attn::AppInputs next = s->inputs;
    next.sentence = attn::shown_inputs(*s).sentence + m->tokenizer->decode({id});
    next.token = static_cast<int>(attn::model_token_ids(*m, next.sentence).size()) - 1;  // throws past what it reads
    if (!attn::apply_inputs_in_background(*s, next, ImGui::GetTime())) throw std::invalid_argument(s->error);
    return reply({{"ok", true}, {"text", next.sentence}});
  } catch (const std::exception& e) {
    return error_reply(e.what());
  }
}
