// Exports for loading models in the page (web/explainer.js streams the files or the download into
// them chunk by chunk) and for the current model's trace. Not a loader: src/api/model_files.h parses.
#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "../api/compute_json.h"
#include "../api/intervention_json.h"
#include "../api/model_files.h"
#include "../api/model_json.h"
#include "../state/app_state.h"
#include "js_api.h"
#include "model_worker.h"


namespace {

// The one load in progress: its assembler, the file being read and what the model will need.
struct Load {
  std::unique_ptr<attn::ModelAssembler> assembler;
  std::string name;
  std::string file;          // the file whose bytes arrive now (for messages)
  double needed_bytes = 0;   // the model's floats once config.json is read (0: not yet)
};
Load g_load;
using js_api::error_reply;
using js_api::reply;

using js_api::state;

std::string memory_message() {
  const std::string who = g_load.file.empty() ? g_load.name : g_load.file;
  if (g_load.needed_bytes > 0)
    return who + ": this model needs about " + std::to_string(static_cast<long long>(std::ceil(g_load.needed_bytes / 1e6))) +
           " MB; the browser refused to give the page that much memory";
  return who + ": the browser refused to give the page more memory";
}

// Ends the load with `message` as the app's loading error; returns the error reply.
const char* fail(const std::string& message) {
  g_load = Load{};
  if (attn::AppState* s = state()) {
    s->loading.active = false;
    s->loading.error = message;
  }
  return error_reply(message);
}

// Runs one step of the load; every failure (a bad file, no memory) ends the load with its message.
template <typename Step>
const char* guarded(Step step) {
  try {
    if (!state()) return error_reply("the explainer is not running yet");
    return step();
  } catch (const std::bad_alloc&) {
    return fail(memory_message());
  } catch (const std::exception& e) {
    // The loader reports a failed allocation itself; in a browser that means the page was refused.
    std::string message = e.what();
    if (message.find("allocation failed") != std::string::npos)
      message += " (the browser refused to give the page that much memory)";
    return fail(message);
  }
}

const char* ok() { return reply({{"ok", true}}); }

// For the calls beside a load (unload, the kept list): a failure is only this call's error.
template <typename Step>
const char* guarded_plain(Step step) {
  try {
    if (!state()) return error_reply("the explainer is not running yet");
    return step();
  } catch (const std::exception& e) {
    return error_reply(e.what());
  }
}

void require_load(const char* what) {
  if (!g_load.assembler) throw std::invalid_argument(std::string(what) + ": no model load was begun");
}

}  // namespace

// Starts assembling a model called `name` (the repository id or the folder's name). A load
// already in progress is dropped.
JS_EXPORT const char* attn_model_begin(const char* name) {
  return guarded([&] {
    const std::string n = name ? name : "";
    if (n.empty() || n.size() > 200) throw std::invalid_argument("model name: must be 1 to 200 characters");
    if (n == attn::kHandmadeModel) throw std::invalid_argument("model name: \"handmade\" is the built-in model's name");
    g_load = Load{};
    g_load.assembler = std::make_unique<attn::ModelAssembler>(n);
    g_load.name = n;
    attn::AppState& s = *state();
    s.loading.active = true;
    s.loading.label = n;
    s.loading.bytes_done = 0;
    s.loading.bytes_total = 0;
    s.loading.file.clear();
    s.loading.file_bytes_done = s.loading.file_bytes_total = 0;
    s.loading.error.clear();
    return ok();
  });
}

// One small file of the model (config.json, tokenizer.json, vocab.json, merges.txt): n bytes at data.
JS_EXPORT const char* attn_model_add_text(const char* file_name, const std::uint8_t* data, int n) {
  return guarded([&] {
    const std::string file = file_name ? file_name : "";
    require_load(file.c_str());
    g_load.file = file;
    if (n < 0 || (n > 0 && !data)) throw std::invalid_argument(file + ": no bytes");
    const std::string bytes(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
    g_load.assembler->add_text_file(file, bytes);
    const attn::ModelFileRole role = attn::model_file_role(file);
    if (const attn::ModelConfigFile* c = g_load.assembler->config(); c && role == attn::ModelFileRole::Config)
      g_load.needed_bytes = static_cast<double>(attn::transformer_weight_bytes(c->config, attn::Dtype::F32));
    if (role != attn::ModelFileRole::Index) return ok();
    // The page fetches or reads the shards in this order; the index's metadata.total_size (the
    // tensors' bytes, when it says) stands in for the size of shards whose size the server hides.
    nlohmann::json total = nullptr;
    const nlohmann::json index = nlohmann::json::parse(bytes, nullptr, false);
    if (index.is_object() && index.contains("metadata") && index["metadata"].is_object()) {
      const nlohmann::json& t = index["metadata"].value("total_size", nlohmann::json());
      if (t.is_number() && t.get<double>() >= 0) total = t.get<double>();
    }
    return reply({{"ok", true}, {"shards", g_load.assembler->shards()}, {"total_size", total}});
  });
}

// The weights file begins: its name and size in bytes (0: not known).
JS_EXPORT const char* attn_model_begin_weights(const char* file_name, double size) {
  return guarded([&] {
    const std::string file = file_name ? file_name : "";
    require_load(file.c_str());
    g_load.file = file;
    if (!(size >= 0) || size > 1e15) throw std::invalid_argument(file + ": impossible file size");
    g_load.assembler->begin_weights(file, static_cast<std::uint64_t>(size));
    attn::ModelLoadStatus& l = state()->loading;
    l.file = file;
    l.file_bytes_done = 0;
    l.file_bytes_total = size;
    return ok();
  });
}

// The next n bytes of the weights file, at data (a buffer the page reuses for every chunk).
JS_EXPORT const char* attn_model_feed(const std::uint8_t* data, int n) {
  return guarded([&] {
    require_load(g_load.file.c_str());
    if (n < 0 || (n > 0 && !data)) throw std::invalid_argument(g_load.file + ": a chunk without bytes");
    g_load.assembler->feed_weights(data, static_cast<std::size_t>(n));
    state()->loading.bytes_done += n;
    state()->loading.file_bytes_done += n;
    return ok();
  });
}

// Every file arrived: checks the model, registers it, switches the app to it (layer 0, head 0).
// {"model": {name, family, layers, heads, d_model, vocab_size, params}} or {"error": ...}.
JS_EXPORT const char* attn_model_finish() {
  return guarded([&] {
    require_load("model");
    attn::LoadedModel loaded = g_load.assembler->finish();
    g_load.assembler.reset();  // its buffers are the model's now, or freed
    const nlohmann::json info = attn::model_info_json(loaded);
    const std::string name = loaded.name;
    attn::AppState& s = *state();
    // A model of the same name is replaced: the worker's copy of it goes, and a text it computes is dropped.
    if (const attn::LoadedModel* old = attn::find_model(s, name)) attn::app::model_worker_forget(old->model);
    add_model(s, std::move(loaded));
    g_load = Load{};
    s.loading.active = false;
    s.loading.error.clear();
    if (s.loading.offered_hub == name) s.loading.offered_hub.clear();
    attn::apply_state_json(s, {{"model", name}, {"layer", 0}, {"head", 0}}, ImGui::GetTime());
    attn::app::model_worker_model_loaded(*attn::find_model(s, name));
    return reply({{"model", info}});
  });
}

// The learner (or the page) cancelled: the partial model is dropped, the current one stays.
JS_EXPORT const char* attn_model_cancel() {
  g_load = Load{};
  if (attn::AppState* s = state()) {
    s->loading.active = false;
    s->loading.error.clear();
  }
  return ok();
}

// What the progress bar shows: a label ("owner/name · model.safetensors") and the byte counts of
// every weights file together (total 0: unknown). done < 0 keeps the count the feeds keep.
JS_EXPORT const char* attn_model_progress(const char* label, double done, double total) {
  attn::AppState* s = state();
  if (!s) return error_reply("the explainer is not running yet");
  s->loading.active = true;
  s->loading.label = label ? label : "";
  if (done >= 0) s->loading.bytes_done = done;
  s->loading.bytes_total = total > 0 ? total : 0;
  return ok();
}

// A failure the page found (a download's HTTP status, a missing file): the load ends with it.
JS_EXPORT const char* attn_model_error(const char* message) {
  if (!state()) return error_reply("the explainer is not running yet");
  fail(message ? message : "loading the model failed");
  return ok();
}

// ?hub=owner/name: the repository offered for one click, and its download size (-1: unknown).
JS_EXPORT const char* attn_model_offer(const char* repo, double bytes) {
  attn::AppState* s = state();
  if (!s) return error_reply("the explainer is not running yet");
  s->loading.offered_hub = repo ? repo : "";
  s->loading.offered_bytes = bytes >= 0 ? bytes : -1;
  return ok();
}

// A built-in model the page fetches when it is chosen (web/explainer.js: BUILTIN_MODELS).
JS_EXPORT const char* attn_model_on_request(const char* name) {
  attn::AppState* s = state();
  if (!s) return error_reply("the explainer is not running yet");
  const std::string n = name ? name : "";
  if (std::find(s->loading.on_request.begin(), s->loading.on_request.end(), n) == s->loading.on_request.end())
    s->loading.on_request.push_back(n);
  return ok();
}

// Drops a loaded model: its weights go back to the allocator once nothing computed from it is
// kept. The current model becomes the hand-made one. The built-in trained model stays.
JS_EXPORT const char* attn_model_unload(const char* name_text) {
  return guarded_plain([&] {
    attn::AppState& s = *state();
    const std::string name = name_text ? name_text : "";
    if (name == attn::kBuiltInTrainedModel) throw std::invalid_argument("unload: \"" + name + "\" is part of the app");
    const auto it = std::find_if(s.models.begin(), s.models.end(), [&](const attn::LoadedModel& m) { return m.name == name; });
    if (it == s.models.end()) throw std::invalid_argument("unload: no model \"" + name + "\" is loaded");
    const std::shared_ptr<const attn::Transformer> weights = it->model;
    if (s.inputs.model == name) attn::apply_state_json(s, {{"model", attn::kHandmadeModel}, {"layer", 0}, {"head", 0}}, ImGui::GetTime());
    s.models.erase(std::find_if(s.models.begin(), s.models.end(), [&](const attn::LoadedModel& m) { return m.name == name; }));
    // The views' cached passes hold the model too: they go with it (recomputed on the next change).
    if (s.model.forward_model == weights) {
      s.model.forward.reset(), s.model.forward_model.reset(), s.model.answer.reset();
      s.model.compare_forward.reset(), s.model.compare_edited.reset();
    }
    // and the worker's copy, and a change it computes for this model (its answer is dropped when it comes)
    if (s.model_run.pending_weights == weights) attn::model_run_cancel(s.model_run);
    if (s.model_run.cache->model == weights.get()) s.model_run.cache->clear();
    attn::app::model_worker_forget(weights);
    if (s.loading.offered_hub == name) s.loading.offered_hub.clear();
    return reply({{"ok", true}, {"model", s.inputs.model}});
  });
}

// What the browser keeps (web/explainer.js reads Cache Storage): [{repo, revision, bytes}], for the
// picker's list of kept models.
JS_EXPORT const char* attn_model_kept(const char* json_text) {
  return guarded_plain([&] {
    const nlohmann::json list = attn::parse_json_limited(json_text ? json_text : "");
    if (!list.is_array()) throw std::invalid_argument("kept: a list of {repo, revision, bytes}");
    std::vector<attn::KeptModel> kept;
    for (const nlohmann::json& k : list) {
      if (!k.is_object() || !k.value("repo", nlohmann::json()).is_string()) throw std::invalid_argument("kept: each entry needs a repo");
      kept.push_back({k["repo"].get<std::string>(), k.value("revision", std::string("main")), k.value("bytes", 0.0)});
    }
    state()->loading.kept = std::move(kept);
    return ok();
  });
}

// The interventions for the current model without drawing: intervention_request's JSON → {"result":
// intervention_json's answer} computed here, or {"model", "request"} for its worker (where it runs: the request
// checked here first), or {"error": ...}.
JS_EXPORT const char* attn_model_intervene(const char* json_text) {
  try {
    attn::AppState* s = state();
    if (!s) return error_reply("the explainer is not running yet");
    const attn::LoadedModel* model = attn::find_model(*s, s->inputs.model);
    if (!model) throw std::invalid_argument("model: the current model is the hand-made one; load a model first (loadModel)");
    const nlohmann::json asked = attn::parse_json_limited(json_text ? json_text : "");
    const attn::InterventionRequest request = attn::intervention_request(*model, asked);
    if (const int id = attn::app::model_worker_id(*model)) return reply({{"model", id}, {"request", asked}});
    attn::require_weights_here(*model);
    return reply({{"result", attn::intervention_json(*model, request)}});
  } catch (const std::bad_alloc&) {
    return error_reply("intervene: the browser refused to give the page enough memory for this text");
  } catch (const std::exception& e) {
    return error_reply(e.what());
  }
}

// For the benchmark: the current model's forward on T tokens (fixed ids) as the page runs it (every
// layer and head, the LM head at the selected position only: the last), the median of `reps` runs
// after one warm-up: {"ms": ..., "flops": ...} (flops: the matrix products' 2·m·n·k).
JS_EXPORT const char* attn_model_bench(int T, int reps) {
  try {
    attn::AppState* s = state();
    const attn::LoadedModel* model = s ? attn::find_model(*s, s->inputs.model) : nullptr;
    if (!model) throw std::invalid_argument("bench: load a model first");
    if (model->model->weights_released)
      throw std::invalid_argument("bench: the page's own forward needs the weights, and they are in the model's worker (benchModelWorker)");
    const attn::TransformerConfig& c = model->model->config;
    const int longest = c.positions == attn::PositionKind::Learned ? std::min(c.n_positions, attn::kMaxModelTokens) : attn::kMaxModelTokens;
    if (T < 1 || T > longest || reps < 1 || reps > 100)
      throw std::invalid_argument("bench: T or reps out of range");
    std::vector<int> ids(T);
    for (int i = 0; i < T; ++i) ids[i] = static_cast<int>((i * 7919LL + 13) % c.vocab_size);
    using clock = std::chrono::steady_clock;
    std::vector<double> samples;
    for (int r = 0; r <= reps; ++r) {
      const auto t0 = clock::now();
      attn::ForwardOptions only_heads;
      only_heads.predict_from = T;
      const attn::ModelTrace trace = attn::transformer_forward(*model->model, ids, only_heads);
      attn::next_tokens_at(*model->model, trace, T - 1, attn::kShownNextTokens);
      const double ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
      if (r > 0) samples.push_back(ms);  // the first run warms up
    }
    std::sort(samples.begin(), samples.end());
    // Per layer: the q/k/v, output and MLP products, then scores and weights · values per head.
    const double C = c.d_model, t = T, hd = c.head_dim, F = c.d_ff;
    const double per_layer = 2 * t * C * (c.n_head + 2 * c.n_kv_head) * hd + 2 * t * c.n_head * hd * C +
                             2 * t * C * F * (c.gated_mlp ? 3 : 2) + 4 * t * t * hd * c.n_head;
    const double flops = c.n_layer * per_layer + 2 * C * c.vocab_size;
    return reply({{"ms", samples[samples.size() / 2]}, {"flops", flops}});
  } catch (const std::bad_alloc&) {
    return error_reply("bench: out of memory");
  } catch (const std::exception& e) {
    return error_reply(e.what());
  }
}

// What the model picker shows: {"loading": {active, label, bytes_done, bytes_total, percent, file,
// file_bytes_done, file_bytes_total, error, offered_hub, offered_bytes, kept, on_request: the built-in
// models not loaded yet}, "models": [every loaded model's info]} (getState() adds both).
JS_EXPORT const char* attn_model_status() {
  attn::AppState* s = state();
  if (!s) return error_reply("the explainer is not running yet");
  const attn::ModelLoadStatus& l = s->loading;
  nlohmann::json percent = nullptr;
  if (l.bytes_total > 0) percent = std::min(100.0, 100.0 * l.bytes_done / l.bytes_total);
  nlohmann::json models = nlohmann::json::array();
  for (const attn::LoadedModel& m : s->models) models.push_back(attn::model_info_json(m));
  nlohmann::json kept = nlohmann::json::array();
  for (const attn::KeptModel& k : l.kept) kept.push_back({{"repo", k.repo}, {"revision", k.revision}, {"bytes", k.bytes}});
  nlohmann::json on_request = nlohmann::json::array();
  for (const std::string& name : l.on_request)
    if (!attn::find_model(*s, name)) on_request.push_back(name);
  return reply({{"loading",
                 {{"active", l.active}, {"label", l.label}, {"bytes_done", l.bytes_done}, {"bytes_total", l.bytes_total},
                  {"percent", percent}, {"file", l.file}, {"file_bytes_done", l.file_bytes_done},
                  {"file_bytes_total", l.file_bytes_total}, {"error", l.error}, {"offered_hub", l.offered_hub},
                  {"offered_bytes", l.offered_bytes}, {"kept", kept}, {"on_request", on_request}}},
                {"models", models}});
}
