// The check questions (see checks.h): each view's question from the state's numbers, its marking,
// and the progress over every check. Not their drawing (src/ui/checks.cpp), not the stored answers.
#include "checks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "compare_view.h"
#include "view_text.h"

namespace attn {

namespace {

// [SECTION] Text helpers

std::string fixed(double v, int decimals) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// At most `decimals` decimals, without trailing zeros: "6", "0.707", "1.5".
std::string short_fixed(double v, int decimals) {
  std::string out = fixed(v, decimals);
  if (out.find('.') != std::string::npos) {
    out.erase(out.find_last_not_of('0') + 1);
    if (out.back() == '.') out.pop_back();
  }
  return out == "-0" ? "0" : out;
}

// A word as a choice: its text, with its position when the sentence has it more than once.
std::string word_choice(const std::vector<std::string>& words, int index) {
  const bool repeated = std::count(words.begin(), words.end(), words[index]) > 1;
  return repeated ? words[index] + " (word " + std::to_string(index + 1) + ")" : words[index];
}


// With a model loaded, the Flow view's question is about its part around the head: which head of
// the layer adds most to the attention's update at the selected token (by share along the update,
// or by length where sandwich norms break the sum).
void around_question(const AppState& state, CheckQuestion& q) {
  const AroundHeadView& a = state.model.around;
  const std::vector<float>& values = a.shares_add_up ? a.head_shares : a.head_parts;
  const int H = static_cast<int>(values.size());
  std::vector<int> order(static_cast<std::size_t>(H));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return values[x] > values[y]; });
  // the three largest and the smallest, in head order
  std::vector<int> shown(order.begin(), order.begin() + std::min(H, 3));
  if (H > 3) shown.push_back(order.back());
  std::sort(shown.begin(), shown.end());
  const std::string token = in_quotes(state.model.queries.tokens[static_cast<std::size_t>(a.token)].text);
  q.prompt = a.shares_add_up ? "At " + token + ", which head of layer " + std::to_string(state.inputs.layer + 1) +
                                   " brings the largest share of what the attention adds to the residual stream?"
                             : "At " + token + ", which head of layer " + std::to_string(state.inputs.layer + 1) +
                                   " has the longest part in the attention's output (its output × its rows of W_O)?";
  const float top = values[static_cast<std::size_t>(order.front())];
  std::string listing;
  for (int h : shown) {
    q.choices.push_back("head " + std::to_string(h + 1));
    if (std::fabs(values[h] - top) <= 1e-6f * std::max(1.0f, std::fabs(top))) q.right.push_back(q.choices.back());
    listing += (listing.empty() ? "" : ", ") + q.choices.back() + " " +
               (a.shares_add_up ? short_fixed(values[h] * 100.0, 0) + "%" : short_fixed(values[h], 2));
  }
  q.why = "From the bars under \"Around this head\": " + listing + ". A head's weights alone do not tell this: its "
          "values and its rows of W_O decide how much it writes.";
}

}  // namespace

// [SECTION] One question per view

namespace check_questions {

void weights(const AppState& state, CheckQuestion& q) {
  // the matrix the view shows: the weights, or a reading of them (value-weighted, rollout)
  const AppModel::Influence* reading = state.model.influence.get();
  const Matrix& w = reading ? reading->values : state.model.trace.weights;
  const int query = state.inputs.token, T = static_cast<int>(w.cols());
  const std::vector<std::string> keys = key_labels(state);
  std::vector<int> order(T);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return w(query, a) > w(query, b); });
  // The three largest and the smallest, in the sentence's order (so the order gives nothing away).
  std::vector<int> shown(order.begin(), order.begin() + std::min(T, 3));
  if (T > 3) shown.push_back(order.back());
  std::sort(shown.begin(), shown.end());
  const float top = w(query, order.front());
  const std::string asked = in_quotes(query_labels(state)[query]);
  q.prompt = !reading ? "Which word does " + asked + " give the most weight to?"
             : state.inputs.weights_show == WeightsShow::Rollout
                 ? "By rollout, which word's share is largest in " + asked + "'s stream?"
                 : "Which word does " + asked + " take the most from, weight × the length of what the word sends?";
  int tied = 0;
  std::string listing;
  for (int j = 0; j < T; ++j) tied += std::fabs(w(query, j) - top) <= 1e-6f * std::max(1.0f, top);
  for (int j : shown) {
    q.choices.push_back(word_choice(keys, j));
    if (std::fabs(w(query, j) - top) <= 1e-6f * std::max(1.0f, top)) q.right.push_back(q.choices.back());
    listing += (listing.empty() ? "" : ", ") + q.choices.back() + " " + fixed(w(query, j), 3);
  }
  q.why = (reading ? "Its row: " : "Its weights: ") + listing + "." +
          (tied > 1 ? " " + std::to_string(tied) + " words tie for the most: each of them is right." : "");
}

void flow(const AppState& state, CheckQuestion& q) {
  if (state.model.around.loaded && !state.model.around.head_parts.empty()) return around_question(state, q);
  const int n = static_cast<int>(state.model.queries.tokens.size()), m = static_cast<int>(state.model.keys.tokens.size());
  q.prompt = n == m && !state.inputs.cross
                 ? "This sentence has " + std::to_string(n) + " tokens. How many scores does Q·Kᵀ hold?"
                 : "There are " + std::to_string(n) + " queries and " + std::to_string(m) +
                       " keys. How many scores does Q·Kᵀ hold?";
  q.number = static_cast<double>(n) * m;
  q.whole = true;
  q.why = "One score for every query and key pair: " + std::to_string(n) + " × " + std::to_string(m) + " = " +
          grouped_digits(q.number) + ".";
}

void library(const AppState&, CheckQuestion& q) {
  q.prompt = "In the library picture, what plays the part of a word's key?";
  q.choices = {"The reader's question", "The title on the spine", "What is written inside"};
  q.right = {q.choices[1]};
  q.why = "The query is the question, the key is the title it is held against, and the value is the "
          "contents that get blended in.";
}

void steps(const AppState& state, CheckQuestion& q) {
  const AttentionTrace& t = state.model.trace;
  const int query = state.inputs.token, d = static_cast<int>(t.key.cols());
  int best = 0;
  for (int j = 1; j < t.weights.cols(); ++j)
    if (t.weights(query, j) > t.weights(query, best)) best = j;
  const double raw = std::round(static_cast<double>(t.raw_scores(query, best)) * 1000.0) / 1000.0;
  const double root = std::sqrt(static_cast<double>(d));
  const std::string score = short_fixed(raw, 3);
  const std::string pair = "The raw score of " + in_quotes(query_labels(state)[query]) + " with " +
                           in_quotes(key_labels(state)[best]) + " is " + score;
  if (trace_scaling(t, state.inputs.temperature) == Scaling::ModelFactor) {
    // Gemma's heads: the model's own factor, not 1/√d (before any cap)
    const double factor = std::round(static_cast<double>(t.score_factor) * 10000.0) / 10000.0;
    q.prompt = pair + ". This model multiplies every raw score by its own factor, " + short_fixed(factor, 4) +
               " (not 1/√" + std::to_string(d) + "). What does this one become" +
               (score_softcap(state) > 0 ? " before its cap" : "") + "? (2 decimals)";
    q.number = raw * factor;
    q.why = score + " × " + short_fixed(factor, 4) + " = " + short_fixed(q.number, 3) + ".";
    return;
  }
  q.prompt = pair + ", and d = " + std::to_string(d) + ". What is that score divided by √d? (2 decimals)";
  q.number = raw / root;
  q.why = score + " ÷ √" + std::to_string(d) + " = " + score + " ÷ " + short_fixed(root, 3) + " = " +
          short_fixed(q.number, 3) + ".";
}

void break_(const AppState& state, CheckQuestion& q) {
  const BreakResult& b = state.model.saturation;
  const long off = std::lround(b.unscaled.frac_one_hot * b.T), on = std::lround(b.scaled.frac_one_hot * b.T);
  q.prompt = "At d = " + std::to_string(b.d) + " and T = " + std::to_string(b.T) +
             ": which side has more rows that put over 0.99 of their weight on a single key?";
  q.choices = {"Without √d", "With √d", "Both have as many"};
  q.right = {q.choices[off > on ? 0 : off < on ? 1 : 2]};
  q.why = "Without √d, " + std::to_string(off) + " of " + std::to_string(b.T) + " rows do; with it, " +
          std::to_string(on) + ". Unscaled scores spread about √d times wider, and softmax turns wide gaps into "
          "near one-hot rows.";
}

void mistakes(const AppState&, CheckQuestion& q) {
  q.prompt = "Where does the causal mask belong?";
  // Short enough for a phone's width: a button does not wrap.
  q.choices = {"Before the softmax: future scores to −∞", "After the softmax: future weights to 0",
               "Either: the weights come out the same"};
  q.right = {q.choices[0]};
  q.why = "e^−∞ is exactly 0 and the rest of the row still adds up to 1. Zeroing after the softmax leaves rows "
          "that add up to less than 1 (only dividing by the new row sums would repair them).";
}

void build(const AppState& state, CheckQuestion& q) {
  const long n = static_cast<long>(state.model.queries.tokens.size());
  q.prompt = "Code the causal mask for a sentence of " + std::to_string(n) +
             " tokens attending to itself. How many of its " + std::to_string(n) + " × " + std::to_string(n) +
             " weights become exactly 0?";
  q.number = static_cast<double>(n * (n - 1) / 2);
  q.whole = true;
  q.why = "Every key after its query: the first row hides " + std::to_string(n - 1) +
          ", each next row one fewer, the last none: " + std::to_string(n) + " × " + std::to_string(n - 1) +
          " / 2 = " + grouped_digits(q.number) + ".";
}

void cost(const AppState& state, CheckQuestion& q) {
  const long T = state.inputs.cost_T;
  q.prompt = "One head at T = " + std::to_string(T) + " tokens: how many scores does it compute?";
  q.number = static_cast<double>(T) * static_cast<double>(T);
  q.whole = true;
  q.why = std::to_string(T) + " × " + std::to_string(T) + " = " + grouped_digits(q.number) +
          ": double T and there are four times as many (the time grows as T², and so does memory wherever the "
          "weights are stored).";
}

void compare(const AppState& state, CheckQuestion& q) {
  // The two rows the Compare view sets side by side: two query tokens of one sentence, or the same
  // word in the second sentence.
  const Comparison c = compare(state);
  const CompareSide &a = c.a, &b = c.b;
  const bool tokens = c.tokens;
  q.prompt = tokens ? "Do " + in_quotes(a.query_text) + " and " + in_quotes(b.query_text) +
                          " give their most weight to the same word?"
                    : "Does " + in_quotes(a.query_text) + " give its most weight to the same word in both sentences?";
  q.choices = {"Yes, the same word", "No, another word", "A tie on one side"};
  const bool tie = a.tied > 1 || b.tied > 1;
  const bool same = tokens ? a.best == b.best : a.keys[a.best] == b.keys[b.best];
  q.right = {q.choices[tie ? 2 : same ? 0 : 1]};
  const auto side = [](const CompareSide& s) {
    return s.tied > 1 ? std::to_string(s.tied) + " words tie" : in_quotes(s.keys[s.best]);
  };
  q.why = "A: " + side(a) + ", B: " + side(b) + "." +
          (tie ? "" : same ? " The same word wins on both sides." : " The input changed where it looks most.");
}

}  // namespace check_questions

// [SECTION] Marking

bool view_check(const AppState& state, View view, CheckQuestion* out) {
  const CheckQuestionFn ask = view_row(view).check;
  if (!ask) return false;
  CheckQuestion q;
  q.id = view_name(view);
  ask(state, q);
  *out = q;
  return true;
}

bool check_is_right(const CheckQuestion& q, const std::string& answer) {
  if (!q.choices.empty()) return std::find(q.right.begin(), q.right.end(), answer) != q.right.end();
  double typed = 0;
  if (!parse_typed_number(answer, &typed)) return false;
  return q.whole ? typed == q.number : within_rounding(typed, q.number);
}

const CheckAnswer* current_answer(const AppState& state, const CheckQuestion& q) {
  const auto it = state.inputs.checks.find(q.id);
  return it != state.inputs.checks.end() && it->second.question == q.prompt ? &it->second : nullptr;
}

CheckAnswer graded_answer(const AppState& state, const CheckQuestion& q, const std::string& given) {
  const auto old = state.inputs.checks.find(q.id);
  const bool right = check_is_right(q, given);
  const bool passed = right || (old != state.inputs.checks.end() && old->second.passed);
  return CheckAnswer{given.substr(0, kMaxAnswerChars), q.prompt.substr(0, kMaxQuestionChars), right, passed};
}

nlohmann::json view_check_json(const AppState& state) {
  CheckQuestion q;
  if (!view_check(state, state.inputs.view, &q)) return nullptr;
  const CheckAnswer* given = current_answer(state, q);
  const auto stored = state.inputs.checks.find(q.id);
  return {{"id", q.id},
          {"prompt", q.prompt},
          {"kind", q.choices.empty() ? "number" : "choice"},
          {"choices", q.choices},
          {"answered", given != nullptr},
          {"answer", given ? nlohmann::json(given->answer) : nlohmann::json(nullptr)},
          {"correct", given ? nlohmann::json(given->right) : nlohmann::json(nullptr)},
          {"passed", stored != state.inputs.checks.end() && stored->second.passed},
          {"why", given ? nlohmann::json(q.why) : nlohmann::json(nullptr)}};
}

// [SECTION] Derive's grids and the progress

namespace {
// Derive's cells: how many are answered and right now, per stage (the answers follow Q, K and V).
struct StageMarks {
  int answered = 0, correct = 0, total = 0;
};
std::vector<StageMarks> derive_marks(const AppState& state) {
  std::vector<StageMarks> marks(kDeriveCheckStageCount);
  bool any = false;
  for (const auto& [id, a] : state.inputs.checks) any |= id.rfind("derive.", 0) == 0;
  const std::vector<Eigen::MatrixXd> answers = any ? derive_stage_answers(state) : std::vector<Eigen::MatrixXd>();
  for (int s = 0; s < kDeriveCheckStageCount; ++s) {
    const DeriveStage& stage = kDeriveCheckStages[s];
    marks[s].total = stage.rows * stage.cols;
    if (!any) continue;
    for (int i = 0; i < stage.rows; ++i)
      for (int j = 0; j < stage.cols; ++j) {
        const auto it = state.inputs.checks.find(derive_cell_id(s, i, j));
        double typed = 0;
        if (it == state.inputs.checks.end() || !parse_typed_number(it->second.answer, &typed)) continue;
        ++marks[s].answered;
        marks[s].correct += within_rounding(typed, answers[s](i, j));
      }
  }
  return marks;
}
}  // namespace

bool check_passed(const AppState& state, View view) {
  if (view == View::Derive) {
    const StageMarks weights = derive_marks(state)[4];
    return weights.correct == weights.total;
  }
  const auto it = state.inputs.checks.find(view_name(view));
  return it != state.inputs.checks.end() && it->second.passed;
}

nlohmann::json progress_json(const AppState& state) {
  nlohmann::json out = nlohmann::json::object();
  StageMarks all;
  nlohmann::json stages = nlohmann::json::object();
  const std::vector<StageMarks> marks = derive_marks(state);
  for (int s = 0; s < kDeriveCheckStageCount; ++s) {
    all.answered += marks[s].answered, all.correct += marks[s].correct, all.total += marks[s].total;
    stages[kDeriveCheckStages[s].id] = {{"correct", marks[s].correct}, {"answered", marks[s].answered}, {"total", marks[s].total}};
  }
  out["derive"] = {{"correct", all.correct}, {"answered", all.answered}, {"total", all.total}, {"stages", stages}};
  for (const char* view : kCheckViews) {
    const auto it = state.inputs.checks.find(view);
    const bool answered = it != state.inputs.checks.end();
    out[view] = {{"correct", answered && it->second.right ? 1 : 0}, {"answered", answered ? 1 : 0}, {"total", 1},
                 {"passed", answered && it->second.passed}};
  }
  return out;
}

}  // namespace attn
