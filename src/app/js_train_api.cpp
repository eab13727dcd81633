// Exports of the train view for the page (web/explainer.js: attentionExplainer.train, trainCurves,
// trainedModelZip) and the Download button's platform edge. Not the session (train/train_session.h).
#include <imgui.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../api/compute_json.h"
#include "../api/train_files.h"
#include "../api/trained_model_bytes.h"
#include "../state/app_state.h"
#include "../ui/panels.h"
#include "js_api.h"

namespace {
using js_api::error_reply;
using js_api::reply;

// The bytes handed to the page by attn_train_files, alive until the next call.
std::vector<attn::ModelFileBytes> g_train_files;
void post_to_train_worker(const std::string& text);  // web: Module.trainWorkerPost (below)
}  // namespace

// {"action": "start" | "pause" | "reset" | "use" | "experiment"} → {"train": getState().train} or
// {"error": ...}: a refused Start names the setting ("heads: must be 1 to 64, got 0").
JS_EXPORT const char* attn_train(const char* json_text) {
  attn::AppState* state = js_api::attached_state();
  if (!state) return error_reply("the explainer is not running yet");
  try {
    const nlohmann::json request = attn::parse_json_limited(json_text ? json_text : "");
    if (!request.is_object() || !request.contains("action") || !request["action"].is_string())
      return error_reply("train: takes {action: \"start\" | \"pause\" | \"reset\" | \"use\" | \"experiment\"}");
    const std::string action = request["action"];
    attn::ui::Action act{state->inputs};
    attn::ui::TrainWish& wish = act.train;
    if (action == "start") wish.start = true;
    else if (action == "pause") wish.pause = true;
    else if (action == "reset") wish.reset = true;
    else if (action == "use") wish.use_model = true;
    else if (action == "experiment") wish.experiment = true;
    else return error_reply("action: must be start, pause, reset, use or experiment, got \"" + action + "\"");
    if (wish.use_model && !state->train->run.started()) return error_reply("use: train a model first");
    attn::ui::apply(*state, act, ImGui::GetTime());
    const attn::TrainSession& s = *state->train;
    if (!s.error.empty() && (wish.start || wish.use_model)) return error_reply(s.error);
    return reply({{"train", attn::train_state_json(s, state->inputs.train)}});
  } catch (const std::exception& e) {
    return error_reply(e.what());
  }
}

// One slice of training between frames (the page posts them back to back while training runs), at
// most budget_ms; 1 while a run or the experiment trains here, 0 when nothing does (the Web
// Worker's runs need no slices: their reports come by themselves).
JS_EXPORT int attn_train_idle(double budget_ms) {
  attn::AppState* state = js_api::attached_state();
  if (!state) return 0;
  attn::TrainSession& s = *state->train;
  const auto here = [&s] { return (s.running && !s.run.mirror()) || (s.experiment_running && !s.experiment[0].mirror()); };
  if (!here()) return 0;
  attn::train_frame(s, state->inputs.train, std::min(budget_ms, attn::kTrainSliceMs), false);
  return here() ? 1 : 0;
}

// {"run": {loss, accuracy_steps, accuracy}, "scaled": {...}, "unscaled": {...}}: every point drawn.
JS_EXPORT const char* attn_train_curves() {
  attn::AppState* state = js_api::attached_state();
  if (!state) return error_reply("the explainer is not running yet");
  return reply(attn::train_curves_json(*state->train));
}

// The trained model's folder as bytes in the wasm heap: {"name", "files": [{name, pointer, size}]};
// the page copies them out at once (they live until the next call).
JS_EXPORT const char* attn_train_files() {
  attn::AppState* state = js_api::attached_state();
  if (!state) return error_reply("the explainer is not running yet");
  const attn::TrainSession& s = *state->train;
  if (!s.run.started()) return error_reply("download: train a model first");
  try {
    const attn::Trainer& trainer = s.run.trainer();
    g_train_files = attn::trained_model_files(trainer.model(), trainer.corpus());
  } catch (const std::exception& e) {
    return error_reply(std::string("download: ") + e.what());
  }
  nlohmann::json files = nlohmann::json::array();
  for (const attn::ModelFileBytes& f : g_train_files)
    files.push_back({{"name", f.name}, {"pointer", reinterpret_cast<std::uintptr_t>(f.bytes.data())}, {"size", f.bytes.size()}});
  const attn::TrainSettings& settings = s.run.trainer().settings();
  return reply({{"name", "trained-seed" + std::to_string(settings.seed) + "-step" + std::to_string(s.run.steps())},
                {"files", files}});
}

// The training worker is ready: new runs train there (TrainSession::worker posts to it).
JS_EXPORT void attn_train_worker_ready() {
  attn::AppState* state = js_api::attached_state();
  if (!state) return;
  state->train->worker = [](const nlohmann::json& message) { post_to_train_worker(message.dump()); };
  state->train->worker_state = attn::TrainSession::Worker::Ready;
}

// The worker could not start or stopped: new runs train here again; the runs it had are lost
// (they say so; Start trains afresh here).
JS_EXPORT void attn_train_worker_failed(const char* why) {
  attn::AppState* state = js_api::attached_state();
  if (!state) return;
  attn::TrainSession& s = *state->train;
  s.worker = nullptr;
  s.worker_state = attn::TrainSession::Worker::Failed;
  s.worker_failure = why;
  if (s.run.mirror()) {
    attn::train_reset(s);
    s.error = std::string("The training worker stopped (") + why + "): press Start to train in the page.";
  }
  if (s.experiment[0].mirror() || s.experiment[1].mirror()) {
    for (attn::TrainRun& r : s.experiment) r = attn::TrainRun{};
    s.experiment_running = false;
  }
}

// The worker's reports, {"reports": [TrainRun::report + params_offset/params_count], "params":
// pointer to their weights (floats, on the heap for this call)} → {} or {"error": ...}.
JS_EXPORT const char* attn_train_reports(const char* json_text) {
  attn::AppState* state = js_api::attached_state();
  if (!state) return error_reply("the explainer is not running yet");
  try {
    const nlohmann::json j = nlohmann::json::parse(json_text);
    const auto* params = reinterpret_cast<const float*>(static_cast<std::uintptr_t>(j.at("params").get<double>()));
    for (const nlohmann::json& r : j.at("reports")) {
      const std::size_t offset = r.value("params_offset", std::size_t{0}), count = r.value("params_count", std::size_t{0});
      attn::train_receive(*state->train, r, params ? params + offset : nullptr, count);
    }
  } catch (const std::exception& e) {
    return error_reply(std::string("train worker reports: ") + e.what());
  }
  return reply(nlohmann::json::object());
}

#if defined(__EMSCRIPTEN__)
void attn::ui::save_trained_model_zip(const AppState&) {
  EM_ASM({ if (Module.downloadTrainedModel) Module.downloadTrainedModel(); });
}
bool attn::ui::start_train_worker() {
  return EM_ASM_INT({ return Module.startTrainWorker && typeof Worker != "undefined" ? (Module.startTrainWorker(), 1) : 0; }) != 0;
}
namespace {
void post_to_train_worker(const std::string& text) {
  EM_ASM({ Module.trainWorkerPost(UTF8ToString($0)); }, text.c_str());
}
}  // namespace
#else
bool attn::ui::start_train_worker() { return false; }  // natively the runs train between frames
namespace {
void post_to_train_worker(const std::string&) {}
}  // namespace
void attn::ui::save_trained_model_zip(const AppState& state) {
  const Trainer& trainer = state.train->run.trainer();
  try {
    save_trained_model(trainer.model(), trainer.corpus(), "trained-model");
    std::printf("wrote the trained model into trained-model/\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  }
}
#endif
