// The train view's Web Worker (web only; web/train_worker.js loads it): TrainWorker's three calls
// for the worker script. The page's session posts {type: start | until | stop, ...}; after each
// turn of tw_work the script sends the reports back with the weights they name. No window, no
// ImGui: the same TrainRun as training in the page's own slices or the CLI, so the same numbers.
#include <emscripten/emscripten.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../train/train_run.h"

namespace {
attn::TrainWorker g_worker;
std::string g_reply;
std::vector<float> g_params;

const char* reply(const nlohmann::json& j) {
  g_reply = j.dump();
  return g_reply.c_str();
}
}  // namespace

// A message of the session (TrainWorker::message) → {} or {"error": why}.
extern "C" EMSCRIPTEN_KEEPALIVE const char* tw_message(const char* text) {
  try {
    g_worker.message(nlohmann::json::parse(text));
    return reply(nlohmann::json::object());
  } catch (const std::exception& e) {
    return reply({{"error", e.what()}});
  }
}

// Trains for up to budget_ms → how many runs still have work.
extern "C" EMSCRIPTEN_KEEPALIVE int tw_work(double budget_ms) { return g_worker.work(attn::train_clock_ms() + budget_ms); }

// The reports since the last call (TrainWorker::reports); their weights in tw_params().
extern "C" EMSCRIPTEN_KEEPALIVE const char* tw_reports(int with_params) { return reply(g_worker.reports(with_params != 0, &g_params)); }

extern "C" EMSCRIPTEN_KEEPALIVE const float* tw_params() { return g_params.data(); }
