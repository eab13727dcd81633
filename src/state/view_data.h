// Every view's getState().view_data: the numbers and words the view shows, as JSON, so tests and
// embedding pages read exactly what the learner sees. Computed from AppState (after
// update_view_state for Build and Cost); the table of views (src/ui/app_ui.cpp) calls them, the
// panels draw the same numbers. No ImGui here: they run in the unit tests natively and under node.
#pragma once
#include <nlohmann/json.hpp>
#include <vector>

#include "app_state.h"

namespace attn {

// A view's data: a function of the state alone (the table of views' data column).
using ViewDataFn = nlohmann::json(const AppState& state);

ViewDataFn flow_view_data, weights_view_data, library_view_data, derive_view_data /* view_numbers.cpp */,
    break_view_data, mistakes_view_data, build_view_data, practice_view_data, train_view_data,
    compare_view_data /* compare_view.cpp */;
// The Heads view's, with the model family's pieces under "family" (family_view_data).
ViewDataFn heads_view_data, family_view_data;
// The Steps view's open step (step_view_data of inputs.step).
ViewDataFn steps_view_data;
constexpr int kStepCount = 7;  // the Steps view's steps
// The numbers of step `step` (0..6) of the Steps view for the selected query, whichever step is open.
nlohmann::json step_view_data(const AppState& state, int step);
// The Cost view's measured points and whole matrix (the K/V cache's numbers are added by the UI's
// table of views: kv_cache_view_data, src/ui/family_panels.h).
ViewDataFn cost_view_data;

// [SECTION] Break: the histogram of each row's largest weight

constexpr int kHistogramBins = 20;  // bins of width 0.05 over [0, 1]
// How many rows have their largest weight in each bin of [0, 1] (a weight of exactly 1 goes last).
std::vector<int> row_max_histogram(const std::vector<float>& row_max);

}  // namespace attn
