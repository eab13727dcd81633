// The Cost view's numbers (see cost_state.h): the measured run and the whole weight matrix.
// Not the view: nothing here draws, and the clock is whatever the caller passes.
#include "cost_state.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include "../api/compute_json.h"
#include "../core/kernels/kernels.h"
#include "../core/random.h"
#include "app_state.h"

namespace attn {

namespace {

// `calls` attention calls of `problem` through the backend named `backend`: a CPU kernel into
// preallocated buffers, or a registered one (the GPU: upload, passes and read-back included).
// Returns the seconds they took by `clock`; throws when a registered backend cannot run.
double time_calls(const std::string& backend, int calls, CostRun& run, const AttentionProblem& problem,
                  const CostClock& clock) {
  Backend cpu;
  const bool on_cpu = parse_backend(backend, &cpu);
  const auto found = registered_backends().find(backend);
  if (!on_cpu && found == registered_backends().end()) throw std::runtime_error("no backend " + backend);
  AttentionOptions options;
  options.causal = problem.causal;
  const double start = clock();
  for (int c = 0; c < calls; ++c) {
    if (on_cpu) attention_forward(cpu, problem, run.output.data(), run.weights.data());
    else found->second(run.query, run.key, run.value, options);
  }
  return clock() - start;
}

Matrix positional_rows(int T, Rng& rng) {
  Matrix m(T, kCostWidth);
  for (int i = 0; i < T; ++i)
    for (int f = 0; f < kCostWidth / 2; ++f) {
      const double frequency = 3.14159265358979 * (f + 1) / T;  // half a turn over T at the lowest
      m(i, 2 * f) = static_cast<float>(kCostPositionAmplitude * std::sin(i * frequency) + kCostPositionNoise * rng.normal());
      m(i, 2 * f + 1) = static_cast<float>(kCostPositionAmplitude * std::cos(i * frequency) + kCostPositionNoise * rng.normal());
    }
  return m;
}

}  // namespace

CostClock steady_clock_seconds() {
  return [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
}

void cost_measure_step(CostRun& run, const std::string& requested, const GpuFacts& gpu, const CostClock& clock) {
  if (run.requested != requested) run = CostRun(requested);
  if (run.done()) return;
  const int T = kCostSizes[run.points.size()];
  if (run.query.rows() != T) {
    Rng rng(static_cast<std::uint64_t>(T));
    run.query = normal_matrix(rng, T, kCostWidth);
    run.key = normal_matrix(rng, T, kCostWidth);
    run.value = normal_matrix(rng, T, kCostWidth);
    run.output.resize(T, kCostWidth);
    run.weights.resize(T, T);
  }
  AttentionProblem problem;
  problem.query = run.query.data();
  problem.key = run.key.data();
  problem.value = run.value.data();
  problem.Tq = problem.Tk = T;
  problem.d = problem.dv = kCostWidth;
  problem.scale = 1.0f / std::sqrt(static_cast<float>(kCostWidth));

  std::string backend = choose_backend(requested, T, gpu).name;
  double seconds = 0;
  const int calls = std::max(run.calls_per_rep, 1);
  try {
    seconds = time_calls(backend, calls, run, problem, clock);
  } catch (const std::exception&) {  // the GPU went away mid-run (a lost context): measure on the CPU
    backend = backend_name(Backend::Simd);
    seconds = time_calls(backend, calls, run, problem, clock);
  }

  if (run.calls_per_rep == 0) {  // warm-up (first touch of the buffers): not kept
    run.calls_per_rep = static_cast<int>(std::clamp(std::ceil(kCostMinRepSeconds / std::max(seconds, 1e-7)), 1.0, 1e5));
    return;
  }
  run.rep_ms.push_back(seconds * 1000.0 / calls);
  const bool slow = seconds / calls >= kCostSlowCallSeconds;
  if (static_cast<int>(run.rep_ms.size()) < kCostRepsPerSize && !slow) return;
  std::sort(run.rep_ms.begin(), run.rep_ms.end());
  run.points.push_back({T, run.rep_ms[run.rep_ms.size() / 2], backend});
  run.rep_ms.clear();
  run.calls_per_rep = 0;
  if (run.done()) {  // give the 18 MiB of the largest problem back
    for (Matrix* m : {&run.query, &run.key, &run.value, &run.output, &run.weights}) *m = Matrix();
  }
}

void cost_matrix_qkv(int T, Matrix* query, Matrix* key, Matrix* value) {
  Rng rng(7);
  *query = positional_rows(T, rng);  // in this order: the same numbers as ever
  *key = positional_rows(T, rng);
  *value = normal_matrix(rng, T, kCostWidth);
}

bool update_cost_matrix(CostMatrix& m, const AppInputs& in, const BackendChoice& choice, const CostClock& clock) {
  if (m.T == in.cost_T && m.causal == in.causal && m.requested == in.backend && m.planned == choice.name) return false;
  m.T = in.cost_T;
  m.causal = in.causal;
  m.requested = in.backend;
  m.planned = choice.name;
  m.backend = choice.name;
  m.reason = choice.reason;
  ++m.version;
  Matrix query, key, value;
  cost_matrix_qkv(m.T, &query, &key, &value);
  AttentionOptions options;
  options.causal = m.causal;
  const double start = clock();
  try {
    Backend cpu;
    m.weights = parse_backend(choice.name, &cpu) ? attend_with(cpu, query, key, value, options).weights
                                                 : registered_backends().at(choice.name)(query, key, value, options).weights;
  } catch (const std::exception& e) {  // e.g. the GPU was lost just now: the CPU computes it
    m.backend = backend_name(Backend::Simd);
    m.reason = std::string("the GPU failed (") + e.what() + "): the SIMD kernel computed it";
    m.weights = attend_with(Backend::Simd, query, key, value, options).weights;
  }
  m.ms = (clock() - start) * 1000.0;
  // Hidden keys are shown as masked (grey), not as weights of 0 that look like "ignored".
  if (m.causal)
    for (int i = 0; i < m.T; ++i) m.weights.row(i).tail(m.T - 1 - i).setConstant(-std::numeric_limits<float>::infinity());
  m.max_weight = m.weights.size() ? m.weights.maxCoeff() : 0.0f;
  m.max_row_sum_error = m.weights.size() ? (m.weights.array().isFinite().select(m.weights.array(), 0.0f).rowwise().sum() - 1.0f).abs().maxCoeff() : 0.0f;
  // Scaled to the whole range, the few rows with one or two keys (the first rows under the causal
  // mask, weight 1) would leave everything else in the darkest colour.
  m.colour_top = m.weights.size() ? m.weights.rowwise().maxCoeff().mean() : 0.0f;
  return true;
}

}  // namespace attn
