// The table of views, the state's half (see views.h), and the guided tour.
#include "views.h"

#include "app_state.h"
#include "checks.h"

namespace attn {

namespace {

constexpr bool same_text(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}
// kCheckViews (check_answers.h) names exactly the rows with a question, in the table's order.
constexpr bool check_views_match() {
  constexpr int listed = sizeof kCheckViews / sizeof kCheckViews[0];
  int n = 0;
  for (const ViewRow& row : kViews) {
    if (!row.check) continue;
    if (n >= listed || !same_text(row.name, kCheckViews[n])) return false;
    ++n;
  }
  return n == listed;
}
static_assert(check_views_match(), "kCheckViews lists the views whose row has a check question");

}  // namespace

const ViewRow& view_row(View v) { return kViews[static_cast<int>(v)]; }
const char* view_name(View v) { return view_row(v).name; }
const char* view_title(View v) { return view_row(v).title; }
bool parse_view(const std::string& name, View* v) {
  for (const ViewRow& row : kViews)
    if (name == row.name) {
      *v = row.view;
      return true;
    }
  return false;
}

const std::vector<TourStop>& tour_stops() {
  static const std::vector<TourStop> stops = {
      {View::Library, "A reader with a question walks along a shelf. Before you look: which book will 'it' read most? "
                      "Then compare with the shelf and press Next.", kHandmadeModel},
      {View::Steps, "The same reading as seven steps of arithmetic. Step through them and follow the numbers of 'it'.", kHandmadeModel},
      {View::Flow, "Now every token at once: X gives Q, K and V, then scores, weights and outputs. Click another "
                   "word and see which boxes change.", kHandmadeModel},
      {View::Weights, "Each row is one token's attention. Predict where 'it' looks, then find its row.", kHandmadeModel},
      {View::Derive, "Your turn by hand: 3 tokens, d = 2. Hide all stages, work each on paper, reveal and compare.", kHandmadeModel},
      {View::Mistakes, "Switch on each common mistake and find its symptom before reading the explanation.", kHandmadeModel},
      {View::Break, "Why divide by √d? At d = 512 without it most rows go one-hot. Which gradient shrinks, and "
                    "which does not?", kHandmadeModel},
      {View::Cost, "Every query meets every key: guess how much longer twice as many tokens take, then watch.", kHandmadeModel},
      {View::Compare, "One word changed: tired or wide. Does the toy model's 'it' look anywhere else? Why not?", kHandmadeModel},
      {View::Flow, "A trained model now: a head is one part of a layer. Its output goes through W_O into the residual "
                   "stream, and the MLP adds its own part. Guess which head adds the most at the selected word, then "
                   "read the bars under \"Around this head\".", kBuiltInTrainedModel},
      {View::Heads, "Weights say where a head looks, not what it does. Ask the model: press \"Switch L1 H1 off\", "
                    "and it runs again without that head; the next-token strip says what changed. Switch it back on "
                    "and try H2: which one does the answer need?", kBuiltInTrainedModel},
      {View::Practice, "Last: the four exercises. Try each one before you open its answer.", kHandmadeModel},
  };
  return stops;
}

void go_to_tour_stop(const AppState& state, AppInputs& next, int stop) {
  next.tour_step = stop;
  if (stop < 0) return;
  const TourStop& s = tour_stops()[static_cast<std::size_t>(stop)];
  next.view = s.view;
  if (next.model != s.model && (s.model == std::string(kHandmadeModel) || find_model(state, s.model))) {
    next.model = s.model;
    next.layer = next.head = 0;
  }
}

}  // namespace attn
