// The Cost and Build views' numbers in the state room, without ImGui: the measured run driven by a
// fake clock, the whole weight matrix against a softmax written out here, and Build's programs and
// backend rows, each recomputed only when what it depends on changes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "../../src/api/compute_json.h"
#include "../../src/state/app_state.h"
#include "../../src/state/build_state.h"
#include "../../src/state/cost_state.h"

using namespace attn;

namespace {

// A clock that stands still while it is read at the start of a timing and moves by the next of
// `steps` (seconds; the last one repeats) when it is read at the end. The code under test reads it
// in pairs (start, end), so each timing lasts exactly one step.
struct FakeClock {
  std::vector<double> steps;
  double now = 0.0;
  int reads = 0;
  std::size_t next = 0;
  CostClock clock() {
    return [this] {
      if (reads++ % 2 == 1) {
        now += steps[std::min(next, steps.size() - 1)];
        ++next;
      }
      return now;
    };
  }
};

const GpuFacts kNoGpu{};

}  // namespace

TEST_CASE("cost run: a call of a quarter second or more is measured once, and the point is the clock's time") {
  FakeClock fake{{0.5}};
  CostRun run;
  const CostClock clock = fake.clock();
  // Per size: a warm-up (calibrates 1 call per rep), then one rep of 500 ms: slow, so it is the point.
  for (int step = 0; step < 2 * kCostSizeCount; ++step) cost_measure_step(run, "auto", kNoGpu, clock);
  REQUIRE(run.done());
  REQUIRE(run.points.size() == static_cast<std::size_t>(kCostSizeCount));
  for (int i = 0; i < kCostSizeCount; ++i) {
    CHECK(run.points[i].T == kCostSizes[i]);
    CHECK(run.points[i].ms == doctest::Approx(500.0).epsilon(1e-9));
    CHECK(run.points[i].backend == "simd");  // "auto" without a GPU
  }
  CHECK(run.query.size() == 0);  // the largest problem's buffers are given back
  const int reads = fake.reads;
  cost_measure_step(run, "auto", kNoGpu, clock);  // done: nothing more is timed
  CHECK(fake.reads == reads);
}

TEST_CASE("cost run: a fast call is repeated to 2 ms per rep, and the point is the median rep") {
  // Warm-up: one call in 1 ms, so a rep is 2 calls. Then five reps of 2, 10, 6, 8, 4 ms: per call
  // 1, 5, 3, 4, 2 ms, whose median is 3 ms.
  FakeClock fake{{0.001, 0.002, 0.010, 0.006, 0.008, 0.004}};
  CostRun run("scalar");
  const CostClock clock = fake.clock();
  cost_measure_step(run, "scalar", kNoGpu, clock);
  CHECK(run.points.empty());
  CHECK(run.calls_per_rep == 2);
  for (int rep = 0; rep < kCostRepsPerSize - 1; ++rep) cost_measure_step(run, "scalar", kNoGpu, clock);
  CHECK(run.points.empty());
  CHECK(run.rep_ms.size() == static_cast<std::size_t>(kCostRepsPerSize - 1));
  cost_measure_step(run, "scalar", kNoGpu, clock);
  REQUIRE(run.points.size() == 1);
  CHECK(run.points[0].T == 16);
  CHECK(run.points[0].ms == doctest::Approx(3.0).epsilon(1e-9));
  CHECK(run.points[0].backend == "scalar");
  CHECK(run.calls_per_rep == 0);  // the next size calibrates again
  CHECK(run.rep_ms.empty());
  CHECK(fake.reads == 2 * (1 + kCostRepsPerSize));

  // Another backend asked for: the run starts over.
  cost_measure_step(run, "eigen", kNoGpu, clock);
  CHECK(run.requested == "eigen");
  CHECK(run.points.empty());
}

namespace {

// The whole matrix's weights, written out: scores q·k/√64, the causal mask, softmax per row in double.
Matrix reference_weights(int T, bool causal) {
  Matrix query, key, value;
  cost_matrix_qkv(T, &query, &key, &value);
  Matrix weights(T, T);
  for (int i = 0; i < T; ++i) {
    std::vector<double> scores(T, -std::numeric_limits<double>::infinity());
    double largest = -std::numeric_limits<double>::infinity();
    for (int j = 0; j < (causal ? i + 1 : T); ++j) {
      double dot = 0;
      for (int c = 0; c < kCostWidth; ++c) dot += static_cast<double>(query(i, c)) * key(j, c);
      scores[j] = dot / 8.0;  // √64
      largest = std::max(largest, scores[j]);
    }
    double sum = 0;
    for (double& s : scores) sum += (s = std::exp(s - largest));
    for (int j = 0; j < T; ++j)
      weights(i, j) = causal && j > i ? -std::numeric_limits<float>::infinity() : static_cast<float>(scores[j] / sum);
  }
  return weights;
}

}  // namespace

TEST_CASE("cost matrix: rows sum to 1, the scalar reference's numbers, recomputed only when T, the mask or the backend changes") {
  AppInputs in;
  in.cost_T = 7;  // odd and small: the loops' tails
  in.backend = "simd";
  const BackendChoice simd{"simd", "asked for"};
  FakeClock fake{{0.25}};
  const CostClock clock = fake.clock();
  CostMatrix m;
  REQUIRE(update_cost_matrix(m, in, simd, clock));
  CHECK(m.version == 1);
  CHECK(m.T == 7);
  CHECK(m.backend == "simd");
  CHECK(m.ms == doctest::Approx(250.0).epsilon(1e-9));  // the clock's time
  REQUIRE(m.weights.rows() == 7);
  REQUIRE(m.weights.cols() == 7);
  const Matrix expected = reference_weights(7, false);
  for (int i = 0; i < 7; ++i) {
    CHECK(m.weights.row(i).sum() == doctest::Approx(1.0).epsilon(1e-5));
    for (int j = 0; j < 7; ++j) CHECK(m.weights(i, j) == doctest::Approx(expected(i, j)).epsilon(1e-5));
  }
  CHECK(m.max_row_sum_error < 1e-5f);
  CHECK(m.max_weight == doctest::Approx(expected.maxCoeff()).epsilon(1e-5));

  // Nothing it depends on changed: not recomputed (another selected token is not its business).
  in.token = 2;
  CHECK_FALSE(update_cost_matrix(m, in, simd, clock));
  CHECK(m.version == 1);

  // The mask: the keys after each query are −∞, every row's visible weights still sum to 1.
  in.causal = true;
  REQUIRE(update_cost_matrix(m, in, simd, clock));
  CHECK(m.version == 2);
  const Matrix expected_causal = reference_weights(7, true);
  for (int i = 0; i < 7; ++i) {
    float visible = 0;
    for (int j = 0; j < 7; ++j) {
      if (j > i) {
        CHECK(std::isinf(m.weights(i, j)));
        continue;
      }
      visible += m.weights(i, j);
      CHECK(m.weights(i, j) == doctest::Approx(expected_causal(i, j)).epsilon(1e-5));
    }
    CHECK(visible == doctest::Approx(1.0).epsilon(1e-5));
  }
  CHECK(m.weights(0, 0) == doctest::Approx(1.0));  // the first query sees only itself

  // Another planned backend (the GPU came or went) and another T recompute it.
  CHECK(update_cost_matrix(m, in, BackendChoice{"scalar", "fallback"}, clock));
  CHECK(m.backend == "scalar");
  CHECK(m.reason == "fallback");
  in.cost_T = 5;
  CHECK(update_cost_matrix(m, in, BackendChoice{"scalar", "fallback"}, clock));
  CHECK(m.weights.rows() == 5);
  CHECK(m.version == 4);
}

TEST_CASE("build state: the programs and the CPU rows once per change of what they show; the registered rows once the inputs rest") {
  // A registered backend that is exactly the scalar kernel (as the app registers the GPU's).
  register_backend("test-exact", [](const Matrix& q, const Matrix& k, const Matrix& v, const AttentionOptions& o) {
    return attend_with(Backend::Scalar, q, k, v, o);
  });
  AppState state = make_initial_state();
  const double never = -std::numeric_limits<double>::infinity();
  update_build_state(state, never);
  CHECK(state.build.computations == 1);
  CHECK(state.build.numpy.find("import numpy as np") != std::string::npos);
  CHECK(state.build.torch.find("import torch") != std::string::npos);
  CHECK(state.build.code_note.empty());
  // The scalar reference is the trace's attention (the lesson's sentence, no mistake).
  REQUIRE(state.build.reference.weights.rows() == state.model.trace.weights.rows());
  CHECK((state.build.reference.weights - state.model.trace.weights).cwiseAbs().maxCoeff() < 1e-5f);
  REQUIRE(state.build.agreement.size() == 2);  // eigen and simd; the registered ones wait
  CHECK(state.build.agreement[0].backend == "eigen");
  CHECK(state.build.agreement[1].backend == "simd");
  for (const BackendAgreement& a : state.build.agreement) {
    CHECK(a.relative <= kBuildRelativeTolerance);
    CHECK(a.tolerance == kBuildRelativeTolerance);
  }
  CHECK(state.build.slow_pending);

  // Not yet rested: still waiting; then the registered rows come, at the GPU's tolerance.
  update_build_state(state, state.changed_at + kBuildSlowCheckDelay * 0.5);
  CHECK(state.build.slow_pending);
  update_build_state(state, state.changed_at + kBuildSlowCheckDelay);
  CHECK_FALSE(state.build.slow_pending);
  const BackendAgreement* exact = nullptr;
  for (const BackendAgreement& a : state.build.agreement)
    if (a.backend == "test-exact") exact = &a;
  REQUIRE(exact != nullptr);
  CHECK(exact->relative == 0.0);
  CHECK(exact->tolerance == kBuildGpuRelativeTolerance);
  CHECK(state.build.computations == 1);

  // Another selected token: a new revision, but the programs do not show it: not recomputed.
  AppInputs next = state.inputs;
  next.token = 2;
  REQUIRE(apply_inputs(state, next, 1.0));
  update_build_state(state, never);
  CHECK(state.build.computations == 1);
  CHECK_FALSE(state.build.slow_pending);

  // A temperature the programs print: recomputed, the new number in both programs.
  const std::string numpy_before = state.build.numpy, torch_before = state.build.torch;
  next.temperature = 0.5f;
  REQUIRE(apply_inputs(state, next, 2.0));
  update_build_state(state, never);
  CHECK(state.build.computations == 2);
  CHECK(state.build.numpy != numpy_before);
  CHECK(state.build.torch != torch_before);
  CHECK(state.build.numpy.find("0.5") != std::string::npos);
  CHECK((state.build.reference.weights - state.model.trace.weights).cwiseAbs().maxCoeff() < 1e-5f);
  CHECK(state.build.agreement.size() == 2);
  CHECK(state.build.slow_pending);
}
