// The JSON face of the core: one request object in, one result object out. Shared by the native
// CLI (`compute`) and the page's attentionExplainer.compute(), so both speak exactly the same JSON.
// Not the maths: it parses, validates and formats; src/core computes.
#pragma once
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "../core/attention.h"
#include "../core/break_experiment.h"
#include "../core/matrix.h"

namespace attn {

constexpr std::size_t kMaxRequestBytes = 64u << 20;  // 64 MiB of JSON text
constexpr int kMaxJsonDepth = 8;                     // {"Q": [[1]]} is depth 3

// Parses JSON text with the limits above; throws std::invalid_argument("malformed JSON: ...").
nlohmann::json parse_json_limited(const std::string& text);

// Request keys: either "Q","K","V" (arrays of rows) or "X","Wq","Wk","Wv" (and optional "X_kv"
// for cross-attention); options "causal" (bool, false), "scale" (bool, true), "temperature"
// (number from kMinTemperature to kMaxTemperature, 1), "backend" ("scalar" | "eigen" | "simd" |
// a registered one, default "simd"). Limits: attention.h's numeric domain, and at most
// kMaxResultNumbers numbers in the result (checked before anything is computed).
// Result: {"scores": rows with null where masked, "weights": rows, "output": rows, "backend": name}.
// null means masked, only: every other number is finite, or nothing is returned.
// Any problem with the request throws std::invalid_argument with one line naming the key and what
// is wrong; a backend that returns a non-finite number throws std::runtime_error (never null).
nlohmann::json compute(const nlohmann::json& request);

// A backend added at run time, beside the built-in CPU kernels (the app adds "webgl" once its GL
// context exists). It receives validated Q, K, V and options and returns weights and output, or
// throws with one line saying why it cannot (e.g. the GPU is unavailable just now). Registering
// a name again replaces it; the built-in names cannot be taken.
using BackendFunction = std::function<AttentionResult(const Matrix& query, const Matrix& key, const Matrix& value,
                                                      const AttentionOptions& options)>;
void register_backend(const std::string& name, BackendFunction compute);
// The backends registered so far, by name (for views that compare every backend).
const std::map<std::string, BackendFunction>& registered_backends();

// Text in, text out (for the CLI and the JS API).
std::string compute_text(const std::string& request_text);

// A JSON array of equal-length rows of finite numbers -> Matrix; `what` names it in errors.
Matrix matrix_from_json(const nlohmann::json& rows, const char* what);
// Matrix -> array of rows; non-finite entries (masked scores) become null.
nlohmann::json matrix_to_json(const Matrix& m);
// The same for a result named `what`: -inf becomes null where masked_is_null, and any other
// non-finite entry throws std::runtime_error naming the entry.
nlohmann::json result_matrix_to_json(const Matrix& m, const char* what, bool masked_is_null);

// The Break experiment's numbers as the CLI's `break` and the Break view's data both report them:
// {d, T, seed, scaled, unscaled, gradient_ratio, gradient_ratio_raw, seed_range}; a ratio that does
// not exist (a side with no gradient) is null.
nlohmann::json break_result_json(const BreakResult& r, const BreakRatioRange& range);

}  // namespace attn
