// The Build view's numbers: the attention on screen as a NumPy and a PyTorch program, and how far the
// project's backends are from the scalar reference on it. Computed here, drawn by src/ui/panel_build.cpp.
#pragma once
#include <string>
#include <vector>

#include "../core/attention.h"

namespace attn {

struct AppState;

constexpr double kBuildRelativeTolerance = 1e-5;     // a backend passes when max|Δ| / max|reference| is below it
constexpr double kBuildGpuRelativeTolerance = 1e-4;  // the GPU path's stated tolerance
// Backends added at run time (the GPU) run once the inputs rest for this many seconds, so dragging a
// slider does not wait on GPU read-backs every frame (~50 ms each in a software GPU).
constexpr double kBuildSlowCheckDelay = 0.3;

// One backend against the scalar reference, on the same Q, K, V and settings.
struct BackendAgreement {
  std::string backend;
  double max_abs_weights = 0, max_abs_output = 0;
  double relative = 0;   // the larger of max|Δ| / max|reference| over weights and over output
  double tolerance = kBuildRelativeTolerance;
  std::string unavailable;  // why a registered backend (the GPU) could not run just now
};

// Everything the view shows, redone only when what it depends on changes (not every frame, not for
// a new selected token or view).
struct BuildState {
  unsigned revision = ~0u;  // the AppState revision it was brought up to date for
  std::string key;          // the inputs the code and the table depend on
  std::string numpy, torch;
  std::string code_note;        // why the code starts from Q, K, V (a large model), "" otherwise
  bool builtin_check = false;   // the PyTorch program checks itself against scaled_dot_product_attention
  AttentionResult reference;    // the scalar kernel's
  std::vector<BackendAgreement> agreement;  // Eigen, SIMD, then the registered backends once they ran
  bool slow_pending = false;    // the registered backends' rows are still to come
  int computations = 0;         // how many times the code and the CPU rows were made (for tests)
};

// Which program the Build view shows: a reading choice like a tab, not an input a URL restores
// (getState's view_data has both programs and both hints; the UI state keeps the one shown).
enum class CodeLanguage { NumPy, PyTorch };
// What to do with the program and what it checks, as this program does.
std::string build_hint(CodeLanguage language, const BuildState& cache);

// Brings state.build up to date: the programs and the CPU backends' rows when the model, layer, head,
// text or switches changed; the registered backends' rows (the GPU) once `now` (seconds, the clock of
// state.changed_at) is kBuildSlowCheckDelay past the last change. now = −∞: never those (getState
// must not wait on GPU read-backs).
void update_build_state(AppState& state, double now);

}  // namespace attn
