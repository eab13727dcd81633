// The functions the page's JavaScript calls (window.attentionExplainer is built on them in
// web/explainer.js). Natively: attach() and --print-state's attn_get_state().
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#if defined(__EMSCRIPTEN__)
#include <emscripten.h>
#define JS_EXPORT extern "C" EMSCRIPTEN_KEEPALIVE
#else
#define JS_EXPORT extern "C"
#endif

namespace attn {
struct AppState;
}

// getState()'s JSON: the inputs and results, the open view's numbers (view_data), the live backend
// (natively: main's --print-state).
JS_EXPORT const char* attn_get_state();

namespace js_api {
// The state the exported functions read and change (owned by main).
void attach(attn::AppState* state);
// The attached state (null before attach), for the other export files (js_model_api.cpp).
attn::AppState* attached_state();
inline attn::AppState* state() { return attached_state(); }  // (the exports' shorthand)

// Every export answers with JSON text in one buffer that lives until the next call (JavaScript
// copies it out at once). Bytes that are not UTF-8 (a token that is a piece of a character, as BPE
// makes them) are written as U+FFFD rather than refused.
const char* reply(const nlohmann::json& j);
const char* error_reply(const std::string& message);

// The median milliseconds of one `call`, over `reps` samples, each a batch of calls lasting about
// 5 ms (the browser's clock is coarse) sized from *estimate_ms, which becomes the median.
double median_ms(const std::function<void()>& call, int reps, double* estimate_ms);
}  // namespace js_api
