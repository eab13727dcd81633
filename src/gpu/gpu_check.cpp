// GPU attention against the scalar reference (see gpu_check.h), natively (--gpu-check) and in the
// page (attn_gpu_check). Not the app's maths: it only compares two backends on random inputs.
#include "gpu_check.h"

#include <chrono>
#include <cmath>
#include <exception>

#include "../core/random.h"
#include "gpu.h"

namespace gpu {

namespace {

// max|gpu - reference| / max|reference|; infinity when the GPU gave a non-finite number.
double relative_error(const attn::Matrix& gpu, const attn::Matrix& reference) {
  if (gpu.rows() != reference.rows() || gpu.cols() != reference.cols() || !gpu.allFinite())
    return INFINITY;
  const double largest = reference.cwiseAbs().maxCoeff();
  const double difference = (gpu - reference).cwiseAbs().maxCoeff();
  return largest > 0 ? difference / largest : difference;
}

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

bool CheckRow::passed() const {
  return failure.empty() && weights_error <= kCheckTolerance && output_error <= kCheckTolerance && masked_nonzero == 0 &&
         draws > 0 && max_fetches_per_draw <= fetch_budget;
}

std::vector<CheckCase> standard_cases() {
  std::vector<CheckCase> cases;
  const int odd_sizes[] = {1, 3, 17, 64, 65, 300};
  for (const bool causal : {false, true}) {
    for (const int t : odd_sizes)
      for (const int d : odd_sizes) cases.push_back({t, t, d, d, causal, 1.0f});
    // cross shapes: more or fewer keys than queries, values narrower or wider than keys
    const int cross[][4] = {{3, 17, 65, 1}, {300, 65, 17, 64}, {65, 300, 3, 300}, {1, 300, 64, 65}, {17, 1, 300, 3}, {64, 3, 1, 17}};
    for (const auto& c : cross) cases.push_back({c[0], c[1], c[2], c[3], causal, 1.0f});
    cases.push_back({64, 64, 64, 64, causal, 0.05f});  // a sharp softmax: big score gaps through exp
    cases.push_back({65, 17, 300, 3, causal, 20.0f});  // a flat one
    // bands of a few rows: the same numbers as one draw per pass
    cases.push_back({300, 300, 65, 64, causal, 1.0f, 20000});
    cases.push_back({65, 300, 3, 17, causal, 0.05f, 2000});
  }
  cases.push_back({1024, 1024, 64, 64, false, 1.0f});
  return cases;
}

CheckRow check_case(GpuAttention& gpu, const CheckCase& shape) {
  CheckRow row;
  row.shape = shape;
  attn::Rng rng(0x5eed0000u + static_cast<std::uint64_t>(shape.query_count) * 131 + shape.key_count * 17 + shape.depth * 7 +
                shape.value_depth);
  const attn::Matrix query = attn::normal_matrix(rng, shape.query_count, shape.depth);
  const attn::Matrix key = attn::normal_matrix(rng, shape.key_count, shape.depth);
  const attn::Matrix value = attn::normal_matrix(rng, shape.key_count, shape.value_depth);
  attn::AttentionOptions options;
  options.causal = shape.causal;
  options.temperature = shape.temperature;

  auto start = std::chrono::steady_clock::now();
  const attn::AttentionResult reference = attn::attend_with(attn::Backend::Scalar, query, key, value, options);
  row.scalar_ms = milliseconds_since(start);
  try {
    gpu.set_fetch_budget(shape.fetch_budget);
    row.fetch_budget = gpu.fetch_budget();
    start = std::chrono::steady_clock::now();
    attn::AttentionResult result;
    try {
      result = gpu.attend(query, key, value, options);
    } catch (...) {
      gpu.set_fetch_budget(0);
      throw;
    }
    gpu.set_fetch_budget(0);
    row.gpu_ms = milliseconds_since(start);
    row.draws = gpu.last_draw_stats().draws;
    row.max_fetches_per_draw = gpu.last_draw_stats().max_fetches;
    row.weights_error = relative_error(result.weights, reference.weights);
    row.output_error = relative_error(result.output, reference.output);
    if (shape.causal && result.weights.rows() == shape.query_count && result.weights.cols() == shape.key_count)
      for (int i = 0; i < shape.query_count; ++i)
        for (int j = i + 1; j < shape.key_count; ++j) row.masked_nonzero += result.weights(i, j) != 0.0f;
  } catch (const std::exception& e) {
    row.failure = e.what();
  }
  return row;
}

bool print_check(GpuAttention& gpu, const std::vector<CheckCase>& cases, std::FILE* out) {
  std::fprintf(out, "GPU attention (\"webgl\" passes) against the scalar reference; tolerance %.0e relative\n",
               kCheckTolerance);
  if (!gpu.available()) {
    std::fprintf(out, "not ok - the GPU backend is unavailable: %s\n", gpu.unavailable_reason());
    return false;
  }
  std::fprintf(out, "%-24s %-7s %-6s %-12s %-12s %-7s %-6s %-10s %-10s %-10s %s\n", "shape (Tq, Tk, d, dv)", "causal",
               "temp", "weights err", "output err", "masked", "draws", "max reads", "gpu ms", "scalar ms", "verdict");
  int failed = 0;
  double worst = 0;
  for (const CheckCase& shape : cases) {
    const CheckRow row = check_case(gpu, shape);
    char label[48];
    std::snprintf(label, sizeof label, "(%d, %d, %d, %d)", shape.query_count, shape.key_count, shape.depth,
                  shape.value_depth);
    std::fprintf(out, "%-24s %-7s %-6.2f %-12.2e %-12.2e %-7ld %-6d %-10lld %-10.2f %-10.2f %s%s\n", label,
                 shape.causal ? "yes" : "no", static_cast<double>(shape.temperature), row.weights_error,
                 row.output_error, row.masked_nonzero, row.draws, row.max_fetches_per_draw, row.gpu_ms, row.scalar_ms, row.passed() ? "ok" : "NOT OK", row.failure.empty() ? "" : (" " + row.failure).c_str());
    failed += row.passed() ? 0 : 1;
    worst = std::fmax(worst, std::fmax(row.weights_error, row.output_error));
  }
  std::fprintf(out, "%s - %zu shapes, %d failed, worst relative error %.2e\n", failed ? "not ok" : "ok", cases.size(),
               failed, worst);
  return failed == 0;
}

nlohmann::json row_to_json(const CheckRow& row) {
  const auto finite_or_null = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"Tq", row.shape.query_count}, {"Tk", row.shape.key_count}, {"d", row.shape.depth},
          {"dv", row.shape.value_depth}, {"causal", row.shape.causal}, {"temperature", row.shape.temperature},
          {"weights_error", finite_or_null(row.weights_error)}, {"output_error", finite_or_null(row.output_error)},
          {"masked_nonzero", row.masked_nonzero}, {"draws", row.draws},
          {"max_fetches_per_draw", row.max_fetches_per_draw}, {"fetch_budget", row.fetch_budget},
          {"gpu_ms", row.gpu_ms}, {"scalar_ms", row.scalar_ms},
          {"failure", row.failure}, {"passed", row.passed()}};
}

}  // namespace gpu

// The page's view of the same check (tests and curious readers): attn_gpu_check('{"cases": [[Tq,
// Tk, d, dv, causal, temperature, fetch budget], ...]}' (the last three optional)) or attn_gpu_check('{}') for the standard cases. Returns
// {"available", "reason", "rows": [...], "passed"} as JSON text.
GPU_JS_EXPORT const char* attn_gpu_check(const char* request_text) {
  static std::string reply;
  nlohmann::json out;
  try {
    const nlohmann::json request = nlohmann::json::parse(request_text ? request_text : "{}");
    std::vector<gpu::CheckCase> cases;
    if (request.contains("cases"))
      for (const auto& c : request.at("cases"))
        cases.push_back({c.at(0).get<int>(), c.at(1).get<int>(), c.at(2).get<int>(), c.at(3).get<int>(),
                         c.size() > 4 && c.at(4).get<bool>(), c.size() > 5 ? c.at(5).get<float>() : 1.0f,
                         c.size() > 6 ? c.at(6).get<long long>() : 0});
    else
      cases = gpu::standard_cases();
    gpu::GpuAttention& attention = gpu::attention();
    out["available"] = attention.available();
    out["reason"] = attention.unavailable_reason();
    out["rows"] = nlohmann::json::array();
    bool passed = attention.available();
    for (const gpu::CheckCase& shape : cases) {
      const gpu::CheckRow row = gpu::check_case(attention, shape);
      out["rows"].push_back(gpu::row_to_json(row));
      passed = passed && row.passed();
    }
    out["passed"] = passed;
  } catch (const std::exception& e) {
    out = {{"error", e.what()}};
  }
  reply = out.dump();
  return reply.c_str();
}
