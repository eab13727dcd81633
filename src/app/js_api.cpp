// Exports for the page: get/set state and compute, as JSON strings (see web/explainer.js).
// Every function catches everything: a bad call from JavaScript returns an error, never aborts.
#include "js_api.h"

#include <imgui.h>

#include <string>

#include "../api/compute_json.h"
#include "../ui/app_state.h"
#include "../ui/panels.h"
#include "../ui/widgets.h"
#include "platform.h"

#if defined(__EMSCRIPTEN__)
#include <emscripten.h>
#define JS_EXPORT extern "C" EMSCRIPTEN_KEEPALIVE
#else
#define JS_EXPORT extern "C"
#endif

namespace {
attn::AppState* g_state = nullptr;
std::string g_reply;  // the last reply; JavaScript copies it out before the next call

const char* reply(const nlohmann::json& j) {
  g_reply = j.dump();
  return g_reply.c_str();
}
const char* error_reply(const std::string& message) { return reply({{"error", message}}); }
}  // namespace

namespace js_api {
void attach(attn::AppState* state) { g_state = state; }
}  // namespace js_api

// {"state": {...}} with inputs and results.
JS_EXPORT const char* attn_get_state() {
  if (!g_state) return error_reply("the explainer is not running yet");
  nlohmann::json state = attn::state_to_json(*g_state);
  state["view_data"] = attn::ui::view_data(*g_state);
  return reply({{"state", state}});
}

// Applies a partial state; {"ok": true} or {"error": "key: what is wrong"}.
JS_EXPORT const char* attn_set_state(const char* json_text) {
  if (!g_state) return error_reply("the explainer is not running yet");
  try {
    attn::apply_state_json(*g_state, attn::parse_json_limited(json_text ? json_text : ""), ImGui::GetTime());
    return reply({{"ok", true}});
  } catch (const std::exception& e) {
    return error_reply(e.what());
  }
}

// The CLI's compute: {"result": {...}} or {"error": "..."}.
JS_EXPORT const char* attn_compute(const char* json_text) {
  try {
    return reply({{"result", attn::compute(attn::parse_json_limited(json_text ? json_text : ""))}});
  } catch (const std::exception& e) {
    return error_reply(e.what());
  }
}

// Where a named control was drawn last frame, in CSS pixels: {"rect": {x, y, w, h}} or an error.
JS_EXPORT const char* attn_item_rect(const char* name) {
  ImVec2 min, max;
  if (!name || !attn::ui::find_item_rect(name, &min, &max)) return error_reply(std::string("no control named ") + (name ? name : ""));
  const float dpr = platform::device_pixel_ratio();
  return reply({{"rect", {{"x", min.x / dpr}, {"y", min.y / dpr}, {"w", (max.x - min.x) / dpr}, {"h", (max.y - min.y) / dpr}}}});
}
