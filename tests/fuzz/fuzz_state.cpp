// libFuzzer target: any bytes as a setState()/URL-state JSON object. A refused change must leave
// the state exactly as it was; an accepted one must give finite weights with rows summing to 1
// (or to less, only under the mask-after-softmax mistake).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "../../src/api/compute_json.h"
#include "../../src/state/app_state.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const attn::AppState initial = attn::make_initial_state();
  attn::AppState state = initial;
  nlohmann::json partial;
  try {
    partial = attn::parse_json_limited(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const std::invalid_argument&) {
    return 0;
  }
  try {
    attn::apply_state_json(state, partial, 1.0);
  } catch (const std::invalid_argument&) {
    if (state.inputs != initial.inputs || state.revision != initial.revision) std::abort();
    return 0;
  }
  const attn::Matrix& w = state.model.trace.weights;
  if (!w.allFinite() || !state.model.trace.output.allFinite()) std::abort();
  if (state.inputs.mistake == attn::Mistake::None)
    for (Eigen::Index i = 0; i < w.rows(); ++i)
      if (std::fabs(w.row(i).sum() - 1.0f) > 1e-4f) std::abort();
  attn::state_to_json(state).dump();  // serialising any accepted state must work (e.g. odd UTF-8)
  return 0;
}
