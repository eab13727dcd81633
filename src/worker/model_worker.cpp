// The loaded model's Web Worker (web only; web/model_worker.js loads it): the models the page moved in
// (model_transfer.h), what the views read of them (the shown text's incremental forward with its cache, the
// shown layer, predictions, interventions: api/model_views.h), modelTrace's numbers, intervene's answers (with
// the tokenizer built from the model's files), and the sweeps (every head switched off, or patched, alone), a
// slice at a time. No window, no ImGui: the page sends token ids (or intervene's request) and reads the answers.
#include <emscripten/emscripten.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../api/intervention_json.h"
#include "../api/model_json.h"
#include "../api/model_files.h"
#include "../api/model_transfer.h"
#include "../core/attribution.h"
#include "../core/transformer.h"

namespace {
// The models the page moved in: their weights, and once their files came the tokenizer (for intervene).
std::map<int, attn::LoadedModel> g_models;
std::unique_ptr<attn::Transformer> g_arriving;  // the model whose tensors the page is copying in
int g_arriving_id = -1;
std::vector<attn::TensorDestination> g_slots;
attn::ForwardCache g_cache;  // the shown text's: one model at a time (another model starts it afresh)
attn::ModelViews g_views;    // the last answer (its parts are kept where their inputs did not change)
int g_views_model = -1;      // whose
std::string g_reply;
attn::PackedTrace g_packed;

const char* reply(const nlohmann::json& j) {
  g_reply = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);  // (a token may be part of a character)
  return g_reply.c_str();
}

const attn::LoadedModel& loaded_of(int id) {
  const auto it = g_models.find(id);
  if (it == g_models.end() || !it->second.model) throw std::invalid_argument("the worker has no model " + std::to_string(id));
  return it->second;
}
const attn::Transformer& model_of(int id) { return *loaded_of(id).model; }

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

// A model begins: its header (transformer_header) → {"tensors": [bytes of each]} or {"error"}.
extern "C" EMSCRIPTEN_KEEPALIVE const char* mw_model_begin(int id, const char* header) {
  try {
    g_slots.clear();
    g_arriving = attn::transformer_from_header(header);
    g_arriving_id = id;
    g_slots = attn::transformer_slots(*g_arriving);
    nlohmann::json sizes = nlohmann::json::array();
    for (const attn::TensorDestination& s : g_slots) sizes.push_back(s.bytes);
    return reply({{"tensors", sizes}});
  } catch (const std::exception& e) {
    g_arriving.reset();
    return reply({{"error", e.what()}});
  }
}

// Where tensor i's bytes go (the page copies them there).
extern "C" EMSCRIPTEN_KEEPALIVE void* mw_model_slot(int i) {
  return i >= 0 && i < static_cast<int>(g_slots.size()) ? g_slots[static_cast<std::size_t>(i)].data : nullptr;
}

// Every tensor arrived: the model is ready under its id.
extern "C" EMSCRIPTEN_KEEPALIVE int mw_model_finish() {
  if (!g_arriving) return 0;
  g_models[g_arriving_id].model = std::move(g_arriving);
  g_slots.clear();
  return 1;
}

// A model's name and tokenizer files ({"name", "files": {file name: text}}), the page's own (LoadedModel::
// tokenizer_files) → {} or {"error"}: the same tokenizer built here (intervene reads and writes tokens).
extern "C" EMSCRIPTEN_KEEPALIVE const char* mw_tokenizer(int id, const char* request_text) {
  try {
    const nlohmann::json request = nlohmann::json::parse(request_text);
    attn::LoadedModel& m = g_models[id];
    m.name = request.at("name").get<std::string>();
    m.tokenizer = attn::tokenizer_from_files(request.at("files").get<std::map<std::string, std::string>>());
    return reply(nlohmann::json::object());
  } catch (const std::exception& e) {
    return reply({{"error", e.what()}});
  }
}

extern "C" EMSCRIPTEN_KEEPALIVE void mw_model_drop(int id) {
  if (id == g_arriving_id && g_arriving) {  // dropped while its pieces came
    g_arriving.reset();
    g_slots.clear();
    return;
  }
  const auto it = g_models.find(id);
  if (it == g_models.end()) return;
  if (g_cache.model == it->second.model.get()) g_cache.clear();
  if (g_views_model == id) g_views = {}, g_views_model = -1;
  g_models.erase(it);
}

// What the views read for the page's inputs (api/model_views.h), {"model": id, "ask", "held"?: the ask of the
// answer the page shows} → {"header", "count", "ms", "views_ms", "recomputed_from"} (the answer's numbers at
// mw_numbers()) or {"error"}: the shown text's forward from its first changed token (ms), then every other
// part (views_ms), each again only where its inputs changed since the last answer; the runs the page holds
// are not sent.
extern "C" EMSCRIPTEN_KEEPALIVE const char* mw_views(const char* request_text) {
  try {
    const nlohmann::json request = nlohmann::json::parse(request_text);
    const int id = request.at("model").get<int>();
    const attn::Transformer& model = model_of(id);
    const attn::ModelViewsAsk ask = attn::model_views_ask_from_json(request.at("ask"));
    std::unique_ptr<attn::ModelViewsAsk> held;
    if (request.contains("held")) held = std::make_unique<attn::ModelViewsAsk>(attn::model_views_ask_from_json(request["held"]));
    double ms = 0;
    int from = static_cast<int>(ask.ids.size());
    const attn::BaseForward base = [&](const std::vector<int>& ids) {
      attn::ForwardOptions options;
      options.top_k = 0;
      const double t0 = now_ms();
      auto trace = std::make_shared<const attn::ModelTrace>(attn::transformer_forward_cached(model, ids, g_cache, options, &from));
      ms = now_ms() - t0;
      return trace;
    };
    const double t0 = now_ms();
    const attn::ModelViews* previous = g_views_model == id ? &g_views : nullptr;
    attn::ModelViews views = attn::model_views(model, ask, base, previous, &g_cache);
    const double views_ms = now_ms() - t0 - ms;
    g_packed = attn::pack_model_views(views, held.get());
    g_views = std::move(views);
    g_views_model = id;
    return reply({{"header", g_packed.header}, {"count", g_packed.numbers.size()}, {"ms", ms}, {"views_ms", views_ms},
                  {"recomputed_from", from}});
  } catch (const std::bad_alloc&) {
    return reply({{"error", "the browser refused the worker enough memory for this text"}});
  } catch (const std::exception& e) {
    return reply({{"error", e.what()}});
  }
}

// Benchmark (tests/bench/model_bench.mjs): {"model", "ids", "reps"} → {"full_ms", "append_ms", "pack_ms",
// "recomputed_from"}, medians over reps after a warm-up: the whole forward of the ids from an empty cache,
// and the same ids with the cache holding all but the last (appending one token), each as mw_views runs
// it (no LM head rows), and packing that trace for the page. The shown text's cache is left empty.
extern "C" EMSCRIPTEN_KEEPALIVE const char* mw_bench(const char* request_text) {
  try {
    const nlohmann::json request = nlohmann::json::parse(request_text);
    const attn::Transformer& model = model_of(request.at("model").get<int>());
    const std::vector<int> ids = request.at("ids").get<std::vector<int>>();
    const int reps = request.at("reps").get<int>();
    if (ids.size() < 2 || reps < 1 || reps > 100) throw std::invalid_argument("bench: at least 2 ids and 1 to 100 reps");
    const std::vector<int> before(ids.begin(), ids.end() - 1);
    attn::ForwardOptions options;
    options.top_k = 0;
    std::vector<double> full, append, pack;
    int from = 0;
    for (int r = 0; r <= reps; ++r) {
      g_cache.clear();
      double t0 = now_ms();
      attn::transformer_forward_cached(model, ids, g_cache, options);
      const double full_ms = now_ms() - t0;
      g_cache.clear();
      attn::transformer_forward_cached(model, before, g_cache, options);
      t0 = now_ms();
      const attn::ModelTrace trace = attn::transformer_forward_cached(model, ids, g_cache, options, &from);
      const double append_ms = now_ms() - t0;
      t0 = now_ms();
      attn::ModelViews views;  // (the trace alone, as an answer sends a new text's run)
      views.base = std::make_shared<const attn::ModelTrace>(trace);
      g_packed = attn::pack_model_views(views);
      const double pack_ms = now_ms() - t0;
      if (r == 0) continue;  // the first run warms up
      full.push_back(full_ms), append.push_back(append_ms), pack.push_back(pack_ms);
    }
    g_cache.clear();
    const auto median = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
    return reply({{"full_ms", median(full)}, {"append_ms", median(append)}, {"pack_ms", median(pack)}, {"recomputed_from", from}});
  } catch (const std::bad_alloc&) {
    return reply({{"error", "the browser refused the worker enough memory for this text"}});
  } catch (const std::exception& e) {
    return reply({{"error", e.what()}});
  }
}

extern "C" EMSCRIPTEN_KEEPALIVE const float* mw_numbers() { return g_packed.numbers.data(); }

// modelTrace's numbers, {"model", "ids", "top", "padding"} → {"attention": [L][H][T][T], "next": [T][[id, p]...],
// "ms"} or {"error"} (the page adds the tokens' text and the model's name: model_trace_json).
extern "C" EMSCRIPTEN_KEEPALIVE const char* mw_trace(const char* request_text) {
  try {
    const nlohmann::json request = nlohmann::json::parse(request_text);
    const attn::Transformer& model = model_of(request.at("model").get<int>());
    const std::vector<int> ids = request.at("ids").get<std::vector<int>>();
    const double t0 = now_ms();
    const attn::ModelTrace trace = attn::model_trace_numbers(model, ids, request.at("top").get<int>(), request.at("padding").get<int>());
    nlohmann::json next = nlohmann::json::array();
    for (const std::vector<attn::NextToken>& options : trace.next) {
      nlohmann::json row = nlohmann::json::array();
      for (const attn::NextToken& n : options) row.push_back({n.id, n.p});
      next.push_back(row);
    }
    nlohmann::json out = {{"attention", attn::attention_json(model, trace)}, {"next", next}};
    out["ms"] = now_ms() - t0;
    return reply(out);
  } catch (const std::bad_alloc&) {
    return reply({{"error", "modelTrace: the browser refused the worker enough memory for this text"}});
  } catch (const std::exception& e) {
    return reply({{"error", e.what()}});
  }
}

// intervene's answer, {"model", "request": intervention_request's JSON} → {"result"} or {"error"}: as the page
// computes it where it keeps the weights (api/intervention_json.h).
extern "C" EMSCRIPTEN_KEEPALIVE const char* mw_intervene(const char* request_text) {
  try {
    const nlohmann::json request = nlohmann::json::parse(request_text);
    const attn::LoadedModel& m = loaded_of(request.at("model").get<int>());
    if (!m.tokenizer) throw std::invalid_argument("intervene: the model's tokenizer has not reached its worker");
    return reply({{"result", attn::intervention_json(m, attn::intervention_request(m, request.at("request")))}});
  } catch (const std::bad_alloc&) {
    return reply({{"error", "intervene: the browser refused the worker enough memory for this text"}});
  } catch (const std::exception& e) {
    return reply({{"error", e.what()}});
  }
}

// [SECTION] Sweeps: the Heads view's (every head switched off alone) and Compare's (every head's output, or
// every layer's stream at every position, patched alone from the second sentence's run), one per slot
// ("heads" | "patch"), computed a slice at a time so the worker reads its messages (a newer text, a stop)
// between slices.
namespace {
struct SweepJob {
  int model_id = 0;
  std::string over;  // "ablate" | "heads" | "positions"
  attn::ModelTrace base, source;
  int position = 0, target = 0;
  attn::Sweep sweep;
};
std::map<std::string, SweepJob> g_sweeps;
}  // namespace

// {"slot", "model", "over", "ids", "source_ids" (patching), "position", "target", "resume"?: {"values" (L × columns,
// row-major, NaN where not run), "done", "baseline", "source"}} → {"total"} or {"error"}: the runs it changes
// computed here (no LM head rows), the sweep begun (or continued from `resume`) by mw_sweep_step.
extern "C" EMSCRIPTEN_KEEPALIVE const char* mw_sweep_begin(const char* request_text) {
  try {
    const nlohmann::json request = nlohmann::json::parse(request_text);
    const std::string slot = request.at("slot").get<std::string>();
    g_sweeps.erase(slot);
    SweepJob job;
    job.model_id = request.at("model").get<int>();
    const attn::Transformer& model = model_of(job.model_id);
    job.over = request.at("over").get<std::string>();
    if (job.over != "ablate" && job.over != "heads" && job.over != "positions") throw std::invalid_argument("sweep: no such sweep " + job.over);
    const std::vector<int> ids = request.at("ids").get<std::vector<int>>();
    attn::ForwardOptions options;
    options.predict_from = static_cast<int>(ids.size());  // as the page's runs: no LM head rows
    job.base = attn::transformer_forward(model, ids, options);
    if (job.over != "ablate") job.source = attn::transformer_forward(model, request.at("source_ids").get<std::vector<int>>(), options);
    job.position = request.at("position").get<int>();
    job.target = request.at("target").get<int>();
    const int columns = job.over == "positions" ? static_cast<int>(ids.size()) : model.config.n_head;
    if (request.contains("resume")) {
      job.sweep = attn::sweep_cells_from_json(request["resume"], model.config.n_layer, columns);
    }
    const int total = model.config.n_layer * columns;
    g_sweeps[slot] = std::move(job);
    return reply({{"total", total}});
  } catch (const std::bad_alloc&) {
    return reply({{"error", "the browser refused the worker enough memory for this sweep"}});
  } catch (const std::exception& e) {
    return reply({{"error", e.what()}});
  }
}

// The slot's sweep on for about budget_ms (at least one cell) → {"done", "total", "baseline", "source"} with its
// cells at mw_sweep_values(slot) (L × columns, row-major, NaN where not run), or {"error"} (the sweep is
// gone: its model dropped, or stopped).
extern "C" EMSCRIPTEN_KEEPALIVE const char* mw_sweep_step(const char* slot, double budget_ms) {
  try {
    const auto it = g_sweeps.find(slot);
    if (it == g_sweeps.end()) throw std::invalid_argument("sweep: none runs in slot " + std::string(slot));
    SweepJob& job = it->second;
    const attn::Transformer& model = model_of(job.model_id);
    const double deadline = now_ms() + budget_ms;
    const attn::SweepProgress more = [&](int, int) { return now_ms() < deadline; };
    const attn::Sweep* resume = job.sweep.values.size() > 0 ? &job.sweep : nullptr;
    if (job.over == "ablate")
      job.sweep = attn::ablation_sweep(model, job.base, job.position, job.target, attn::AblateKind::Zero, more, attn::Backend::Simd, resume);
    else if (job.over == "heads")
      job.sweep = attn::head_patch_sweep(model, job.source, job.base, job.position, job.target, more, attn::Backend::Simd, resume);
    else
      job.sweep = attn::stream_patch_sweep(model, job.source, job.base, job.position, job.target, more, attn::Backend::Simd, resume);
    return reply({{"done", job.sweep.done}, {"total", job.sweep.values.size()}, {"baseline", job.sweep.baseline},
                  {"source", job.sweep.source}});
  } catch (const std::bad_alloc&) {
    g_sweeps.erase(slot);
    return reply({{"error", "the browser refused the worker enough memory for this sweep"}});
  } catch (const std::exception& e) {
    g_sweeps.erase(slot);
    return reply({{"error", e.what()}});
  }
}

extern "C" EMSCRIPTEN_KEEPALIVE const float* mw_sweep_values(const char* slot) {
  const auto it = g_sweeps.find(slot);
  return it == g_sweeps.end() ? nullptr : it->second.sweep.values.data();
}

// Forgets the slot's sweep (stopped, finished or replaced by the page).
extern "C" EMSCRIPTEN_KEEPALIVE void mw_sweep_stop(const char* slot) { g_sweeps.erase(slot); }
