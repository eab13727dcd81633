// Exports for the page: get/set state and compute, as JSON strings (see web/explainer.js).
// Every function catches everything: a bad call from JavaScript returns an error, never aborts.
#include "js_api.h"

#include <imgui.h>
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "../api/compute_json.h"
#include "../state/checks.h"
#include "../core/kernels/matmul.h"
#include "../state/app_state.h"
#include "../state/input_table.h"
#include "../ui/panels.h"
#include "../ui/widgets.h"
#include "fonts.h"
#include "platform.h"

namespace {
attn::AppState* g_state = nullptr;
std::string g_reply;
using clock_type = std::chrono::steady_clock;
double ms_since(clock_type::time_point t0) { return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count(); }
}  // namespace

namespace js_api {
void attach(attn::AppState* state) { g_state = state; }
attn::AppState* attached_state() { return g_state; }

const char* reply(const nlohmann::json& j) {
  g_reply = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return g_reply.c_str();
}
const char* error_reply(const std::string& message) { return reply({{"error", message}}); }

double median_ms(const std::function<void()>& call, int reps, double* estimate_ms) {
  const int batch = std::max(1, static_cast<int>(std::ceil(5.0 / std::max(*estimate_ms, 1e-4))));
  std::vector<double> samples(reps);
  for (double& sample : samples) {
    const auto t0 = clock_type::now();
    for (int b = 0; b < batch; ++b) call();
    sample = ms_since(t0) / batch;
  }
  std::sort(samples.begin(), samples.end());
  *estimate_ms = samples[reps / 2];
  return reps % 2 ? samples[reps / 2] : 0.5 * (samples[reps / 2 - 1] + samples[reps / 2]);
}
}  // namespace js_api

using js_api::error_reply;
using js_api::reply;

// {"state": {...}} with inputs and results, the open view's numbers and which backend is live.
JS_EXPORT const char* attn_get_state() {
  if (!g_state) return error_reply("the explainer is not running yet");
  nlohmann::json state = attn::state_to_json(*g_state);
  state["view_data"] = attn::ui::view_data(*g_state);
  const attn::BackendChoice live = attn::ui::live_backend(*g_state);
  const attn::GpuFacts gpu = attn::ui::gpu_facts();
  state["backend_live"] = {{"name", live.name}, {"reason", live.reason}};
  state["gpu"] = {{"available", gpu.available}, {"software", gpu.software}, {"renderer", gpu.renderer},
                  {"unavailable_reason", gpu.available ? "" : gpu.unavailable_reason}};
  state["fonts"] = fonts::state_json(g_state->fonts);
  state["gpu"]["speed_check"] = nullptr;
  if (gpu.speed_checked)
    state["gpu"]["speed_check"] = {{"T", gpu.speed_check_T}, {"gpu_ms", gpu.gpu_ms}, {"cpu_ms", gpu.cpu_ms}};
  return reply({{"state", state}});
}

// {"state": {...}} with the inputs and tokens only, and "selected_weights": the selected query's
// row of weights, and "progress": every check's marks. What the page needs after every change
// (address bar, screen-reader summary, progress messages), without the cost of the full state's matrices.
JS_EXPORT const char* attn_get_summary() {
  if (!g_state) return error_reply("the explainer is not running yet");
  nlohmann::json state = attn::inputs_to_json(*g_state);
  const attn::Matrix& w = g_state->model.trace.weights;
  nlohmann::json row = nlohmann::json::array();
  for (Eigen::Index j = 0; j < w.cols(); ++j) row.push_back(w(g_state->inputs.token, j));
  state["selected_weights"] = row;
  state["progress"] = attn::progress_json(*g_state);  // the page posts each change to a course page
  return reply({{"state", state}});
}

// {"handout": {"steps": [...], "practice": {...}}}: what the printable handout (web/handout.js)
// shows besides getState(): each of the seven steps' numbers for the selected query (whichever
// step is open) and the Practice view's exercises. Reads only.
JS_EXPORT const char* attn_get_handout() {
  if (!g_state) return error_reply("the explainer is not running yet");
  try {
    nlohmann::json steps = nlohmann::json::array();
    for (int step = 0; step < attn::kStepCount; ++step) steps.push_back(attn::step_view_data(*g_state, step));
    return reply({{"handout", {{"steps", steps}, {"practice", attn::practice_view_data(*g_state)}}}});
  } catch (const std::exception& e) {
    return error_reply(e.what());
  }
}

// {"inputs": [...]}: the table of inputs (input_table.h), from which the page makes its URL
// parameters and permalinks.
JS_EXPORT const char* attn_inputs_table() {
  try {
    return reply({{"inputs", attn::input_table_json()}});
  } catch (const std::exception& e) {
    return error_reply(e.what());
  }
}

// A fallback font file the page fetched (web/explainer.js) is in the file system at `path`, or
// could not be had (path empty); the atlas takes it before the next frame.
JS_EXPORT void attn_font_arrived(const char* file, const char* path) {
  fonts::file_arrived(file ? file : "", path ? path : "");
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

// attentionExplainer.bench: the median milliseconds of one kernel call (output only: no weights, no
// JSON, no copies) on T x d random Q, K, V made once per shape, outside the timing. Each of the
// `reps` samples is a batch of calls lasting >= 5 ms (the browser's clock is coarse). -1: bad request.
JS_EXPORT double attn_bench(int T, int d, int causal, const char* backend_name, int reps) {
  try {
    attn::Backend backend;
    if (!backend_name || !attn::parse_backend(backend_name, &backend) || T < 1 || T > attn::kMaxSequence || d < 1 ||
        d > attn::kMaxWidth || reps < 1 || reps > 1000)
      return -1;
    static std::vector<float> q, k, v, out;
    static int shape_T = 0, shape_d = 0;
    static std::string last_key;  // the previous call's backend and mask: no warm-up when unchanged
    static double last_ms = 0;
    if (T != shape_T || d != shape_d) {
      const std::size_t n = static_cast<std::size_t>(T) * d;
      std::uint32_t s = 12345;
      for (auto* m : {&q, &k, &v, &out}) {
        m->resize(n);
        for (float& x : *m) x = (s = s * 1664525u + 1013904223u) / 4294967296.0f * 2 - 1;
      }
      shape_T = T, shape_d = d, last_key.clear();
    }
    attn::AttentionProblem p;
    p.query = q.data(), p.key = k.data(), p.value = v.data();
    p.Tq = p.Tk = T, p.d = p.dv = d;
    p.scale = 1.0f / std::sqrt(static_cast<float>(d));
    p.causal = causal != 0;
    const auto call = [&] { attn::attention_forward(backend, p, out.data(), nullptr); };
    const std::string key = std::string(backend_name) + (p.causal ? "/causal" : "");
    if (key != last_key) {  // warm-up, and a first estimate for the batch size
      const auto t0 = clock_type::now();
      call();
      last_ms = ms_since(t0), last_key = key;
    }
    return js_api::median_ms(call, reps, &last_ms);
  } catch (...) {
    return -1;
  }
}

// Bytes of the heap in use by the program now (malloc's count, not the size of wasm memory, which
// never shrinks): what the tests measure memory with.
JS_EXPORT double attn_heap_in_use() {
#ifdef __EMSCRIPTEN__
  return static_cast<double>(mallinfo().uordblks);
#else
  return static_cast<double>(mallinfo2().uordblks);
#endif
}

// Draws one frame now (soak tests: thousands of frames without waiting for animation frames).
JS_EXPORT void attn_run_frame() { platform::run_one_frame(); }

// attentionExplainer.benchMatmul: the median milliseconds of one matrix product c = a·b (+ bias) of
// the given shape and layout ("NN", "NT" or "TN", "+bias" appended for a bias) on random operands
// made once per shape, outside the timing; samples are batches lasting >= 5 ms. -1: bad request.
JS_EXPORT double attn_bench_matmul(int M, int K, int N, const char* layout_name, const char* backend_name, int reps) {
  try {
    attn::Backend backend;
    if (!backend_name || !attn::parse_backend(backend_name, &backend) || !layout_name || M < 1 || K < 1 || N < 1 ||
        M > 65536 || K > 65536 || N > 65536 || reps < 1 || reps > 1000)
      return -1;
    const std::string layout_text(layout_name);
    const bool with_bias = layout_text.size() == 7 && layout_text.compare(2, 5, "+bias") == 0;
    if (layout_text.size() != 2 && !with_bias) return -1;
    const std::string base = layout_text.substr(0, 2);
    attn::MatmulLayout layout;
    if (base == "NN") layout = attn::MatmulLayout::NN;
    else if (base == "NT") layout = attn::MatmulLayout::NT;
    else if (base == "TN") layout = attn::MatmulLayout::TN;
    else return -1;
    const std::size_t a_size = static_cast<std::size_t>(M) * K, b_size = static_cast<std::size_t>(K) * N,
                      c_size = static_cast<std::size_t>(M) * N;
    if (a_size + b_size + c_size > (std::size_t{80} << 20)) return -1;  // 320 MB of operands at most
    static std::vector<float> a, b, bias, c;
    static std::size_t shape_a = 0, shape_b = 0, shape_n = 0;
    static std::string last_key;
    static double last_ms = 0;
    const auto fill = [](std::vector<float>& m, std::size_t n, std::uint32_t seed) {
      std::vector<float>().swap(m);  // the previous shape's memory goes back first
      m.resize(n);
      for (float& x : m) x = (seed = seed * 1664525u + 1013904223u) / 4294967296.0f * 2 - 1;
    };
    if (a_size != shape_a) fill(a, a_size, 1), shape_a = a_size, last_key.clear();
    if (b_size != shape_b) fill(b, b_size, 2), shape_b = b_size, last_key.clear();
    if (static_cast<std::size_t>(N) != shape_n) fill(bias, N, 3), shape_n = N, last_key.clear();
    if (c.size() != c_size) fill(c, c_size, 4);
    attn::MatmulProblem p;
    p.layout = layout, p.a = a.data(), p.b = b.data(), p.bias = with_bias ? bias.data() : nullptr;
    p.M = M, p.K = K, p.N = N;
    const auto call = [&] { attn::matmul(backend, p, c.data()); };
    const std::string key = std::string(backend_name) + "/" + layout_text + "/" + std::to_string(M) + "x" +
                            std::to_string(K) + "x" + std::to_string(N);
    if (key != last_key) {  // warm-up for >= 100 ms (the engine compiles hot code again, optimised,
      // in the background: the first calls of a kernel can run its baseline code), and a batch size
      const auto t0 = clock_type::now();
      int calls = 0;
      do {
        const auto t1 = clock_type::now();
        call();
        last_ms = ms_since(t1), ++calls;
      } while (ms_since(t0) < 100 && calls < 1000);
      last_key = key;
    }
    return js_api::median_ms(call, reps, &last_ms);
  } catch (...) {
    return -1;
  }
}
