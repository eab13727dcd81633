// The views of the app: the View enum and the state's half of the table of views (name, title,
// picture, check question), and the guided tour through them. Not the panels (src/ui/app_ui.cpp holds the
// UI's half: draw and data functions, banner, place among the tabs); no ImGui here.
#pragma once
#include <string>
#include <vector>

namespace attn {

// Every view of the app. The order is the public one (embed_views bits); the names are the public
// ones (?view=NAME, getState().view). Adding a view: a value here, a row in kViews below and one in
// kPanels (src/ui/app_ui.cpp). kViewCount is kViews' length: every list of views (the tabs, the
// embed's bits, parse_view) follows the table, and kPanels fails to compile until it has as many
// rows, each in the table's order.
enum class View { Flow, Weights, Heads, Library, Steps, Derive, Break, Mistakes, Build, Cost, Practice, Train, Compare };

struct AppState;
struct AppInputs;
struct CheckQuestion;  // checks.h
// Fills a view's check question from the live state (its id is set before).
using CheckQuestionFn = void (*)(const AppState& state, CheckQuestion& q);

// Each view's question (the check column of the table below; checks.cpp): fills q's prompt,
// choices or number, and why from the state's numbers.
namespace check_questions {
void flow(const AppState& state, CheckQuestion& q);
void weights(const AppState& state, CheckQuestion& q);
void library(const AppState& state, CheckQuestion& q);
void steps(const AppState& state, CheckQuestion& q);
void break_(const AppState& state, CheckQuestion& q);
void mistakes(const AppState& state, CheckQuestion& q);
void build(const AppState& state, CheckQuestion& q);
void cost(const AppState& state, CheckQuestion& q);
void compare(const AppState& state, CheckQuestion& q);
}  // namespace check_questions

// One row of the table of views, indexed by View.
struct ViewRow {
  View view;              // the row's own view: row i is View i (checked at compile time)
  const char* name;       // "flow": the public name
  const char* title;      // "Flow": its tab
  // Where its main picture is: the name its panel publishes the picture's rect under
  // (publish_picture_rect, src/ui/widgets.h; the page's attentionExplainer.itemRect(name) and
  // getState().view_data.picture), what a phone or an embed must show first.
  const char* picture;
  CheckQuestionFn check;  // its check question (checks.cpp); nullptr: it asks none (Derive's are its grids)
};

// The table of views, the state's half: one row per view, indexed by View. The UI's half of each
// row (draw and data functions, banner, place among the tabs) is kPanels in src/ui/app_ui.cpp,
// indexed the same way: the state room must not know ImGui's draw functions. The views that ask a
// check (kCheckViews, the ids the stored answers accept) are checked against the rows with a
// question in views.cpp.
inline constexpr ViewRow kViews[] = {
    {View::Flow, "flow", "Flow", "flow:X", check_questions::flow},
    {View::Weights, "weights", "Weights", "weights:matrix", check_questions::weights},
    {View::Heads, "heads", "Heads", "heads:picture", nullptr},
    {View::Library, "library", "Library", "library:picture", check_questions::library},
    {View::Steps, "steps", "Steps", "steps:picture", check_questions::steps},
    {View::Derive, "derive", "Derive", "derive:picture", nullptr},  // its check is its typed grids (derive_stage_answers)
    {View::Break, "break", "Break", "break:picture", check_questions::break_},
    {View::Mistakes, "mistakes", "Mistakes", "mistakes:picture", check_questions::mistakes},
    {View::Build, "build", "Build", "build:picture", check_questions::build},
    {View::Cost, "cost", "Cost T²", "cost:picture", check_questions::cost},
    {View::Practice, "practice", "Practice", "practice:picture", nullptr},
    {View::Train, "train", "Train", "train:picture", nullptr},
    {View::Compare, "compare", "Compare", "compare:picture", check_questions::compare},
};
// How many views there are: the table's length (every array sized by views follows it).
constexpr int kViewCount = static_cast<int>(sizeof kViews / sizeof kViews[0]);

constexpr bool rows_in_view_order() {
  for (int i = 0; i < kViewCount; ++i)
    if (static_cast<int>(kViews[i].view) != i) return false;
  return true;
}
static_assert(rows_in_view_order(), "row i of kViews is View i");

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
