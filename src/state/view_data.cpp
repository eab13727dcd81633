// The getState().view_data of the views whose numbers are already computed elsewhere in the state
// (Break: the experiment; Build: build_state; Cost: cost_state; Train: the session), and the Break
// view's histogram. The larger views have a file each (compare_view.cpp, ...). No ImGui here.
#include "view_data.h"

#include <algorithm>
#include <cmath>

#include "../api/compute_json.h"
#include "../core/kernels/kernels.h"

namespace attn {

std::vector<int> row_max_histogram(const std::vector<float>& row_max) {
  std::vector<int> counts(kHistogramBins, 0);
  for (float w : row_max) ++counts[std::clamp(static_cast<int>(w * kHistogramBins), 0, kHistogramBins - 1)];
  return counts;
}

nlohmann::json break_view_data(const AppState& state) {
  const BreakResult& r = state.model.saturation;
  const BreakRatioRange& range = state.model.saturation_range;
  nlohmann::json data = break_result_json(r, range);
  data.update({{"histogram_scaled", row_max_histogram(r.row_max_scaled)},
               {"histogram_unscaled", row_max_histogram(r.row_max_unscaled)},
               {"bins", kHistogramBins},
               {"max_entropy", std::log(static_cast<double>(r.T))}});
  return data;
}

nlohmann::json build_view_data(const AppState& state) {
  // getState reads what the view shows: the code and the CPU rows are made once per change of the
  // inputs, the GPU rows only while the view is drawn once they rest (never for getState: no read-backs).
  const BuildState& cache = state.build;
  nlohmann::json agreement = nlohmann::json::array();
  for (const BackendAgreement& a : cache.agreement)
    agreement.push_back({{"backend", a.backend},
                         {"max_abs_weights", a.max_abs_weights},
                         {"max_abs_output", a.max_abs_output},
                         {"relative", a.relative},
                         {"tolerance", a.tolerance},
                         {"available", a.unavailable.empty()}});
  return {{"from_qkv", !cache.code_note.empty()},
          {"builtin_check", cache.builtin_check},
          {"numpy_hint", build_hint(CodeLanguage::NumPy, cache)},
          {"torch_hint", build_hint(CodeLanguage::PyTorch, cache)},
          {"numpy", cache.numpy},
          {"torch", cache.torch},
          {"agreement", agreement},
          {"tolerance", kBuildRelativeTolerance},
          {"gpu_check_pending", cache.slow_pending},
          {"simd_flavour", simd_flavour()}};
}

nlohmann::json cost_view_data(const AppState& state) {
  const CostRun& run = state.cost.run;
  nlohmann::json points = nlohmann::json::array();
  for (const CostPoint& p : run.points)
    points.push_back({{"T", p.T}, {"ms", p.ms}, {"bytes", cost_bytes_for(p.T)}, {"bytes_fused", cost_fused_bytes_for(p.T)},
                      {"backend", p.backend}});
  const CostMatrix& m = state.cost.matrix;  // update_view_state made it for this state (view_data)
  const nlohmann::json matrix = {{"T", m.T},          {"d", kCostWidth},
                                 {"causal", m.causal}, {"backend", m.backend},
                                 {"reason", m.reason}, {"ms", m.ms},
                                 {"max_weight", m.max_weight}, {"colour_top", m.colour_top}, {"max_row_sum_error", m.max_row_sum_error}};
  return {{"d", kCostWidth}, {"points", points}, {"done", run.done()}, {"matrix", matrix}};
}

nlohmann::json train_view_data(const AppState& state) { return train_state_json(*state.train, state.inputs.train); }

}  // namespace attn
