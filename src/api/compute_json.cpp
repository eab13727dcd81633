// Parsing, validation and formatting of compute requests (see compute_json.h).
#include "compute_json.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <stdexcept>
#include <vector>

#include "../core/attention.h"

namespace attn {

using nlohmann::json;

namespace {
[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument(message); }

bool get_bool(const json& request, const char* key, bool fallback) {
  if (!request.contains(key)) return fallback;
  if (!request[key].is_boolean()) fail(std::string("\"") + key + "\" must be true or false");
  return request[key].get<bool>();
}

std::map<std::string, BackendFunction>& backend_registry() {
  static std::map<std::string, BackendFunction> backends;
  return backends;
}

// "\"scalar\", \"eigen\", \"simd\" or \"webgl\"": every name compute accepts now.
std::string backend_names() {
  std::vector<std::string> names;
  for (const Backend b : {Backend::Scalar, Backend::Eigen, Backend::Simd}) names.push_back(backend_name(b));
  for (const auto& entry : backend_registry()) names.push_back(entry.first);
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i)
    text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + ("\"" + names[i] + "\"");
  return text;
}
}  // namespace

const std::map<std::string, BackendFunction>& registered_backends() { return backend_registry(); }

void register_backend(const std::string& name, BackendFunction compute) {
  Backend built_in;
  if (parse_backend(name, &built_in)) throw std::invalid_argument("\"" + name + "\" is a built-in backend");
  backend_registry()[name] = std::move(compute);
}

json parse_json_limited(const std::string& text) {
  if (text.size() > kMaxRequestBytes) fail("request is too large (the limit is 64 MiB of JSON)");
  // The callback sees each value as it is parsed, so deep nesting is refused before it is built.
  const json::parser_callback_t depth_guard = [](int depth, json::parse_event_t, json&) {
    if (depth > kMaxJsonDepth) fail("malformed JSON: nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    return true;
  };
  try {
    return json::parse(text, depth_guard);
  } catch (const json::exception& e) {  // parse errors, and numbers too large for a double
    std::string what = e.what();  // "[json.exception.parse_error.101] parse error at line 1, ..."
    const auto cut = what.find("] ");
    fail("malformed JSON: " + (cut == std::string::npos ? what : what.substr(cut + 2)));
  }
}

Matrix matrix_from_json(const json& rows, const char* what) {
  const std::string name = what;
  if (!rows.is_array()) fail("\"" + name + "\" must be an array of rows (arrays of numbers)");
  if (rows.empty()) fail("\"" + name + "\" is empty");
  if (rows.size() > static_cast<std::size_t>(kMaxSequence))
    fail("\"" + name + "\" has " + std::to_string(rows.size()) + " rows; the limit is " + std::to_string(kMaxSequence));
  if (!rows[0].is_array()) fail("\"" + name + "\"[0] must be an array of numbers");
  const std::size_t cols = rows[0].size();
  if (cols == 0) fail("\"" + name + "\"[0] is empty");
  if (cols > static_cast<std::size_t>(kMaxWidth))
    fail("\"" + name + "\" has rows of " + std::to_string(cols) + " numbers; the limit is " + std::to_string(kMaxWidth));
  Matrix m(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(cols));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const json& row = rows[i];
    const std::string where = "\"" + name + "\"[" + std::to_string(i) + "]";
    if (!row.is_array()) fail(where + " must be an array of numbers");
    if (row.size() != cols)
      fail(where + " has " + std::to_string(row.size()) + " numbers but row 0 has " + std::to_string(cols) +
           " (ragged rows)");
    for (std::size_t j = 0; j < cols; ++j) {
      if (!row[j].is_number()) fail(where + "[" + std::to_string(j) + "] is not a number");
      const double v = row[j].get<double>();
      if (!std::isfinite(v) || std::fabs(v) > kMaxAbsEntry)
        fail(where + "[" + std::to_string(j) + "] must be a finite number with |value| <= 1e6");
      m(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = static_cast<float>(v);
    }
  }
  return m;
}

json matrix_to_json(const Matrix& m) {
  json rows = json::array();
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    json row = json::array();
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
      const float v = m(i, j);
      row.push_back(std::isfinite(v) ? json(static_cast<double>(v)) : json(nullptr));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

json result_matrix_to_json(const Matrix& m, const char* what, bool masked_is_null) {
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
      const float v = m(i, j);
      const bool masked = masked_is_null && v == -std::numeric_limits<float>::infinity();
      if (!std::isfinite(v) && !masked)
        throw std::runtime_error(std::string("the result's \"") + what + "\"[" + std::to_string(i) + "][" +
                                 std::to_string(j) + "] is not a finite number: nothing is returned (a defect: " +
                                 "every accepted request should give finite numbers)");
    }
  return matrix_to_json(m);
}

json compute(const json& request) {
  if (!request.is_object()) fail("the request must be a JSON object");
  static const char* const known[] = {"Q", "K", "V", "X", "X_kv", "Wq", "Wk", "Wv", "causal", "scale", "temperature",
                                      "backend"};
  for (const auto& item : request.items()) {
    bool ok = false;
    for (const char* k : known) ok = ok || item.key() == k;
    if (!ok) fail("unknown key \"" + item.key() + "\"");
  }
  const bool has_qkv = request.contains("Q") || request.contains("K") || request.contains("V");
  const bool has_x = request.contains("X") || request.contains("Wq") || request.contains("Wk") ||
                     request.contains("Wv") || request.contains("X_kv");
  if (has_qkv == has_x) fail("give either \"Q\", \"K\", \"V\" or \"X\", \"Wq\", \"Wk\", \"Wv\" (not both, not neither)");
  const char* const needed_qkv[] = {"Q", "K", "V"};
  const char* const needed_x[] = {"X", "Wq", "Wk", "Wv"};
  for (const char* k : has_qkv ? std::vector<const char*>(std::begin(needed_qkv), std::end(needed_qkv))
                               : std::vector<const char*>(std::begin(needed_x), std::end(needed_x)))
    if (!request.contains(k)) fail(std::string("missing \"") + k + "\"");

  AttentionOptions options;
  options.causal = get_bool(request, "causal", false);
  options.scale = get_bool(request, "scale", true);
  if (request.contains("temperature")) {
    const json& t = request["temperature"];
    if (!t.is_number() || !temperature_in_domain(t.get<double>())) {
      char text[64];
      std::snprintf(text, sizeof text, "from %g to %g", kMinTemperature, kMaxTemperature);
      fail(std::string("\"temperature\" must be a number ") + text + (t.is_number() ? " (got " + t.dump() + ")" : ""));
    }
    options.temperature = t.get<float>();
  }
  Backend backend = Backend::Simd;
  std::string backend_label = backend_name(backend);
  const BackendFunction* registered = nullptr;  // set when the request names a registered backend
  if (request.contains("backend")) {
    const json& b = request["backend"];
    if (!b.is_string()) fail("\"backend\" must be " + backend_names());
    backend_label = b.get<std::string>();
    if (!parse_backend(backend_label, &backend)) {
      const auto found = backend_registry().find(backend_label);
      if (found == backend_registry().end()) fail("\"backend\" must be " + backend_names());
      registered = &found->second;
    }
  }

  Matrix query, key, value;
  if (has_qkv) {
    query = matrix_from_json(request["Q"], "Q");
    key = matrix_from_json(request["K"], "K");
    value = matrix_from_json(request["V"], "V");
  } else {
    const Matrix x = matrix_from_json(request["X"], "X");
    const Matrix x_kv = request.contains("X_kv") ? matrix_from_json(request["X_kv"], "X_kv") : x;
    const Matrix wq = matrix_from_json(request["Wq"], "Wq"), wk = matrix_from_json(request["Wk"], "Wk"),
                 wv = matrix_from_json(request["Wv"], "Wv");
    if (wq.rows() != x.cols()) fail("\"Wq\" needs one row per column of \"X\"");
    if (wk.rows() != x_kv.cols() || wv.rows() != x_kv.cols())
      fail(std::string("\"Wk\" and \"Wv\" need one row per column of \"") + (request.contains("X_kv") ? "X_kv" : "X") +
           "\"");
    // The product of two matrices within limits may be past them: named as the product.
    query = x * wq;
    key = x_kv * wk;
    value = x_kv * wv;
    validate_matrix(query, "Q = X·Wq");
    validate_matrix(key, request.contains("X_kv") ? "K = X_kv·Wk" : "K = X·Wk");
    validate_matrix(value, request.contains("X_kv") ? "V = X_kv·Wv" : "V = X·Wv");
  }
  validate_options(options);
  validate_qkv(query, key, value);
  // The size of the answer, checked before it is computed: scores and weights (Tq, Tk), output (Tq, dv).
  const long long Tq = query.rows(), Tk = key.rows(), dv = value.cols();
  const long long numbers = 2 * Tq * Tk + Tq * dv;
  if (numbers > kMaxResultNumbers)
    fail("the result would hold " + std::to_string(numbers) + " numbers (scores and weights " + std::to_string(Tq) +
         " x " + std::to_string(Tk) + ", output " + std::to_string(Tq) + " x " + std::to_string(dv) +
         "); the limit is " + std::to_string(kMaxResultNumbers) + ": ask for fewer queries or keys");
  const AttentionResult result =
      registered ? (*registered)(query, key, value, options) : attend_with(backend, query, key, value, options);

  Matrix scores = (query * key.transpose()) * score_factor(static_cast<int>(key.cols()), options);
  if (options.causal) apply_causal_mask(scores, -std::numeric_limits<float>::infinity());

  json out;
  // null means "masked" and nothing else: any other non-finite number is an error, not an answer.
  if (result.weights.rows() != Tq || result.weights.cols() != Tk || result.output.rows() != Tq ||
      result.output.cols() != dv)
    throw std::runtime_error("backend \"" + backend_label + "\" returned matrices of the wrong shape");
  out["scores"] = result_matrix_to_json(scores, "scores", options.causal);
  out["weights"] = result_matrix_to_json(result.weights, "weights", false);
  out["output"] = result_matrix_to_json(result.output, "output", false);
  out["backend"] = backend_label;
  return out;
}

std::string compute_text(const std::string& request_text) { return compute(parse_json_limited(request_text)).dump(); }

nlohmann::json break_result_json(const BreakResult& r, const BreakRatioRange& range) {
  const auto stats = [](const SaturationStats& s) {
    return nlohmann::json{{"score_std", s.score_std},
                          {"frac_one_hot", s.frac_one_hot},
                          {"mean_entropy", s.mean_entropy},
                          {"median_row_grad", s.median_row_grad},
                          {"min_row_grad", s.min_row_grad},
                          {"median_row_grad_raw", s.median_row_grad_raw},
                          {"q_grad_norm", s.q_grad_norm}};
  };
  const auto ratio = [](double v) { return v >= 0 && std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"d", r.d},
          {"T", r.T},
          {"seed", r.seed},
          {"scaled", stats(r.scaled)},
          {"unscaled", stats(r.unscaled)},
          // scaled / unscaled median row gradient, at each side's own softmax input and at the raw q·k
          {"gradient_ratio", ratio(break_gradient_ratio(r, false))},
          {"gradient_ratio_raw", ratio(break_gradient_ratio(r, true))},
          {"seed_range",
           {{"seeds", range.seeds},
            {"first_seed", range.first_seed},
            {"min", ratio(range.min)},
            {"median", ratio(range.median)},
            {"max", ratio(range.max)},
            {"min_raw", ratio(range.min_raw)},
            {"median_raw", ratio(range.median_raw)},
            {"max_raw", ratio(range.max_raw)}}}};
}

}  // namespace attn
