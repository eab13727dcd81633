// The Cost view's numbers: attention's time measured on this device as T grows (a few calls per
// frame, with a clock passed in), and one whole (T, T) weight matrix at T = inputs.cost_T. Not the view
// (src/ui/panel_cost.cpp draws them) and not a benchmark program (./build_wasm.sh bench).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "../core/matrix.h"

namespace attn {

struct AppInputs;
struct BackendChoice;
struct GpuFacts;

constexpr int kCostWidth = 64;  // d of every measured problem and of the whole matrix
constexpr int kCostSizes[] = {16, 32, 64, 128, 256, 512, 1024, 2048};
constexpr int kCostSizeCount = static_cast<int>(sizeof kCostSizes / sizeof kCostSizes[0]);
constexpr int kCostRepsPerSize = 5;  // the median of these is the point
// A rep of a small T repeats the call until it lasts this long: the browser's clock is coarse
// (performance.now can be rounded to 0.1 ms), far coarser than one call at T = 16.
// 2 ms keeps the frames that measure under the UI's 4 ms frame budget (bar single calls at large T).
constexpr double kCostMinRepSeconds = 0.002;
// A call of this many seconds or more (a software GPU, the scalar kernel at large T) is measured once.
constexpr double kCostSlowCallSeconds = 0.25;

// Bytes one call works on: the (T, T) weight matrix plus Q, K, V and the output, all (T, d) floats.
inline double cost_bytes_for(int T) { return 4.0 * T * T + 4.0 * 4.0 * T * kCostWidth; }
inline double cost_weight_bytes_for(int T) { return 4.0 * T * T; }
// A fused kernel that never stores the weights: only Q, K, V and the output, (T, d) floats each.
inline double cost_fused_bytes_for(int T) { return 4.0 * 4.0 * T * kCostWidth; }
// Multiply-adds count as 2: Q·Kᵀ is 2·T²·d, the weights times V another 2·T²·d.
inline double cost_flops_for(int T) { return 4.0 * T * T * kCostWidth; }

// A clock in seconds (any origin, never going back): std::chrono::steady_clock in the app
// (performance.now() in the browser), a fake one in the tests.
using CostClock = std::function<double()>;
CostClock steady_clock_seconds();

struct CostPoint {
  int T = 0;
  double ms = 0;        // median time of one call
  std::string backend;  // what computed it
};

// The measurements so far and the size being measured: measurements of this device, not inputs
// ("Measure again" starts a new run).
struct CostRun {
  explicit CostRun(std::string backend = "auto") : requested(std::move(backend)) {}
  std::string requested;          // AppInputs::backend the run was made for (a new one starts over)
  std::vector<CostPoint> points;  // in kCostSizes order
  int calls_per_rep = 0;          // for the size in progress; 0: not calibrated yet
  std::vector<double> rep_ms;     // per-call time of each rep so far
  Matrix query, key, value, output, weights;
  bool done() const { return static_cast<int>(points.size()) == kCostSizeCount; }
};

// One step of the measurement: a warm-up call that also calibrates how many calls make a rep, or one
// rep (a few ms, or one call at large T). `requested` is AppInputs::backend (another one starts the
// run over); each size is computed by choose_backend(requested, T, gpu), the SIMD kernel where a
// registered backend throws. Nothing once the run is done.
void cost_measure_step(CostRun& run, const std::string& requested, const GpuFacts& gpu, const CostClock& clock);

// [SECTION] The whole matrix

// Queries and keys that look like positions: sines and cosines of the token's position at 32
// frequencies (as Transformers encode positions; here the frequencies are fitted to T so the
// picture keeps its shape at every size) plus noise. A query then scores the keys near it highest
// and the weights form a band along the diagonal, about T/16 keys wide. Values are noise.
// Not a trained model: a pattern whose shape the eye can check at any T.
constexpr float kCostPositionAmplitude = 1.5f;  // a query's own position scores 32 · 1.5² / √64 = 9
constexpr float kCostPositionNoise = 0.3f;
// The whole matrix's query, key (position patterns) and value (noise), (T, kCostWidth) each, seed 7.
void cost_matrix_qkv(int T, Matrix* query, Matrix* key, Matrix* value);

struct CostMatrix {
  int T = 0;
  bool causal = false;
  std::string requested;
  std::string planned;   // the backend live_backend() chose for it
  std::string backend, reason;  // what computed it and why (simd if the planned GPU failed)
  Matrix weights;  // keys hidden by the causal mask are −∞
  double ms = 0;
  float max_weight = 0;
  float colour_top = 0;  // the weight drawn in the last colour: a typical row's largest weight
  float max_row_sum_error = 0;  // max over rows of |sum of the visible weights - 1|, for getState
  std::uint64_t version = 0;  // +1 per computation (the GPU image redraws on a new version)
};

// Recomputes `m` only when T (inputs.cost_T), the mask, the requested backend or the planned one
// (`choice`, live_backend: the GPU can come and go) changed: one call of that backend, timed with
// `clock`. Returns whether it computed.
bool update_cost_matrix(CostMatrix& m, const AppInputs& inputs, const BackendChoice& choice, const CostClock& clock);

// The Cost view's numbers, held by AppState.
struct CostState {
  CostRun run;
  CostMatrix matrix;
};

}  // namespace attn
