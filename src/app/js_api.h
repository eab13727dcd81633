// The functions the page's JavaScript calls (window.attentionExplainer is built on them in
// web/explainer.js). Not used natively beyond attach().
#pragma once

namespace attn {
struct AppState;
}

namespace js_api {
// The state the exported functions read and change (owned by main).
void attach(attn::AppState* state);
// The attached state (null before attach), for the other export files (js_model_api.cpp).
attn::AppState* attached_state();
}  // namespace js_api
