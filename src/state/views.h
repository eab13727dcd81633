// The views of the app: the View enum and the state's half of the table of views (name, title,
// check question), and the guided tour through them. Not the panels (src/ui/app_ui.cpp holds the
// UI's half: draw and data functions, banner, place among the tabs); no ImGui here.
#pragma once
#include <string>
#include <vector>

namespace attn {

// Every view of the app. The order is the public one (embed_views bits); the names are the public
// ones (?view=NAME, getState().view). Adding a view: a value here, kViewCount, a row in kViews
// (views.cpp) and one in kPanels (src/ui/app_ui.cpp); both tables fail to compile until then.
enum class View { Flow, Weights, Heads, Library, Steps, Derive, Break, Mistakes, Build, Cost, Practice, Train, Compare };
constexpr int kViewCount = 13;

struct AppState;
struct AppInputs;
struct CheckQuestion;  // checks.h
// Fills a view's check question from the live state (its id is set before).
using CheckQuestionFn = void (*)(const AppState& state, CheckQuestion& q);

// One row of the table of views (views.cpp), indexed by View.
struct ViewRow {
  View view;              // the row's own view: row i is View i (checked at compile time)
  const char* name;       // "flow": the public name
  const char* title;      // "Flow": its tab
  CheckQuestionFn check;  // its check question (checks.cpp); nullptr: it asks none (Derive's are its grids)
};
const ViewRow& view_row(View v);

const char* view_name(View v);    // "flow", "weights", ...
const char* view_title(View v);   // "Flow", "Weights", ...
bool parse_view(const std::string& name, View* v);

// The guided tour (?tour=1): the views in teaching order, one prompt each. A path through the views,
// not a column of the table: a view may be a stop twice (Flow: the toy, then a trained model) or not at all.
struct TourStop {
  View view;
  const char* prompt;
  const char* model;  // the model the stop opens with (its prompt is about that model's numbers)
};
const std::vector<TourStop>& tour_stops();
// Opens stop `stop` of the tour (-1: ends it): its view, and its model where the page holds it.
void go_to_tour_stop(const AppState& state, AppInputs& next, int stop);

}  // namespace attn
