// The Practice view's texts and data (see practice_view.h): the four exercises with answers that
// quote the live numbers, the checklist and what unlocks each line. Not their drawing
// (src/ui/panel_practice.cpp).
#include "practice_view.h"

#include <cmath>
#include <cstdio>

#include "checks.h"
#include "view_data.h"
#include "view_text.h"

namespace attn {

namespace {

// [SECTION] Text helpers

std::string fixed(double v, int decimals) { return number_text(static_cast<float>(v), decimals); }

// "[0.40, 0.20, 0.40]"; decimals < 0: as few digits as the number needs ("[1, 0, 2]", "[0.5, 1]").
std::string row_text(const Matrix& m, int row, int decimals) {
  std::string out = "[";
  for (int c = 0; c < m.cols(); ++c) {
    char compact[32];
    std::snprintf(compact, sizeof compact, "%.4g", static_cast<double>(m(row, c)));
    out += (c ? ", " : "") + (decimals < 0 ? std::string(compact) : fixed(m(row, c), decimals));
  }
  return out + "]";
}

// "[0.40, 0.20, 0.40], [0.20, 0.40, 0.40], ..." one row per token
std::string rows_text(const Matrix& m, int decimals) {
  std::string out;
  for (int r = 0; r < m.rows(); ++r) out += (r ? ", " : "") + row_text(m, r, decimals);
  return out;
}

// [SECTION] The four exercises


std::string explain_answer(const AppState& state) {
  const AttentionTrace& t = state.model.trace;
  const int reader = state.inputs.token;
  const std::vector<std::string> readers = query_labels(state), books = key_labels(state);
  int best = 0;
  for (int j = 1; j < t.weights.cols(); ++j)
    if (t.weights(reader, j) > t.weights(reader, best)) best = j;
  std::string answer =
      "Picture a reader in a library. The question they walk in with is the query. Every book has a title "
      "on its spine: that is its key. What is written inside is its value. The reader holds the question "
      "against every title, and the better a title fits, the more of that book they read. They leave with "
      "a blend of many books, mostly the best fits.\n\n"
      "In self-attention every token is a reader and a book at once: it asks with its query, is found by "
      "its key, and hands over its value.";
  answer += " Right now " + in_quotes(readers[reader]) + " asks its question, and the best-fitting title is the "
            "key of " + in_quotes(books[best]) + ": it reads " + percent(t.weights(reader, best)) +
            " of that book, so the value of " + in_quotes(books[best]) + " makes up the largest part of what " +
            in_quotes(readers[reader]) + " carries on.";
  if (t.weights(reader, best) < 0.5f)
    answer += " (Here no single book wins a majority: the blend is spread out.)";
  return answer;
}

std::string derive_answer(const AppState& state) {
  const AttentionTrace& d = state.model.derive;
  const bool lesson = state.inputs.derive_q == AppInputs::derive_default_qk() &&
                      state.inputs.derive_k == AppInputs::derive_default_qk() &&
                      state.inputs.derive_v == AppInputs::derive_default_v();
  std::string answer =
      "Four moves, in order. Dot every query with every key: Q·Kᵀ, a (3, 3) table. Divide it all by "
      "√d = √2 ≈ 1.414. In each row, take e to the power of each number and divide by the row's total, so the "
      "row adds up to 1: those are the weights. Finally each token's output is its weights times the rows "
      "of V, added up.\n\n";
  answer += lesson ? "With the lesson's numbers (Q = K = [[1, 0], [0, 1], [1, 1]], V = [[1, 2], [3, 4], [5, 6]]):\n"
                   : "With the numbers now set in the Derive view:\n";
  answer += "Q·Kᵀ = " + rows_text(d.raw_scores, -1) + "\n";
  answer += "scaled = " + rows_text(d.scaled_scores, 3) + "\n";
  answer += "weights ≈ " + rows_text(d.weights, 2) + "\n";
  answer += "outputs ≈ " + rows_text(d.output, 2) + "\n\n";
  answer +=
      "Every output is a weighted average of the rows of V, so it sits between them: a token whose query "
      "matches one key much better than the others takes mostly that token's value.";
  return answer;
}

std::string build_answer() {
  return "Start from token vectors X, shape (T, d_model), and three weight matrices. Project: Q = X·W_Q, "
         "K = X·W_K, V = X·W_V, each (T, d). Score every pair: S = Q·Kᵀ / √d, shape (T, T).\n\n"
         "For the causal mask, set every score above the diagonal (a key later than its query) to −∞ before "
         "the softmax: e^−∞ is exactly 0, so those weights are exactly 0, and the rest of each row still adds "
         "up to 1.\n\n"
         "Softmax along each row, subtracting the row's largest score first so exp can never overflow (the "
         "weights do not change). Output = weights · V, shape (T, d).\n\n"
         "In NumPy that is a handful of array lines; in PyTorch the same lines on tensors, with masked_fill "
         "for the mask and softmax(dim=-1). Feed both the same random X and weights and print the largest "
         "absolute difference: it should be around 1e-6 (float rounding), and "
         "torch.nn.functional.scaled_dot_product_attention(..., is_causal=True) makes a third check. The "
         "weight matrix comes out lower-triangular: token t reads only tokens 1 to t.";
}

std::string break_answer(const AppState& state) {
  const BreakResult& b = state.model.saturation;
  const SaturationStats &on = b.scaled, &off = b.unscaled;
  const double root_d = std::sqrt(static_cast<double>(b.d));
  const BreakRatioRange& range = state.model.saturation_range;
  const double grad_ratio = break_gradient_ratio(b, false);
  char buf[2400];
  std::snprintf(
      buf, sizeof buf,
      "Why one-hot: a score q·k adds up d = %d products. If the entries of q and k are spread around 0 with "
      "variance 1, the sum has a spread of √d ≈ %.1f. In this app's run (T = %d tokens, seed %llu) the scores "
      "have a standard deviation of %.1f without the division and %.2f with it. Softmax exaggerates gaps: a "
      "score 20 above the rest gets about 485 million times the weight (e^20). So %s of rows put more than 0.99 on "
      "a single key without √d (%s with it), and the average spread of a row (its entropy) falls from %.2f "
      "to %.2f (a uniform row of %d would be %.2f).\n\n"
      "What it does to gradients: the gradient of a softmax output with respect to score i is "
      "wᵢ(gᵢ − Σⱼ wⱼgⱼ). With one weight near 1 and the others near 0, every one of those terms is near 0, "
      "so the row passes almost nothing back to its scores. Here the typical (median) row passes back %.2g "
      "with scaling and %.2g without, about %.0f times less (over seeds 0 to %d: %.0f to %.0f times), and the "
      "most saturated row only %.1g. Those rows stop learning where to look. (That compares each side at "
      "its own softmax input; at the raw q·k the scaled side is also divided by √d, so the gap is √d ≈ %.0f "
      "times smaller: %.1f to %.1f times.)\n\n"
      "The catch: the total gradient into q is not smaller without the division (%.2g against %.2g here). "
      "The few rows that are not saturated get very large gradients and dominate, so training is steered by "
      "a handful of rows and becomes unstable.\n\n"
      "Dividing by √d brings the spread back near 1, where softmax keeps several keys in play and every row "
      "keeps a usable gradient.",
      b.d, root_d, b.T, static_cast<unsigned long long>(b.seed), off.score_std, on.score_std,
      percent(off.frac_one_hot).c_str(), percent(on.frac_one_hot).c_str(), on.mean_entropy, off.mean_entropy, b.T,
      std::log(static_cast<double>(b.T)), on.median_row_grad, off.median_row_grad, grad_ratio, range.seeds - 1,
      range.min, range.max, off.min_row_grad, root_d, range.min_raw, range.max_raw, off.q_grad_norm,
      on.q_grad_norm);
  return buf;
}

}  // namespace

std::vector<Exercise> exercises(const AppState& state) {
  return {
      {"Explain", "say it in plain words, no notes",
       "Explain queries, keys and values using the picture of a library.", explain_answer(state), View::Library,
       "Open the Library view", true},
      {"Derive", "the maths by hand",
       "Take 3 tokens with d = 2 and small Q, K and V of your own. Work out the attention weights and the "
       "outputs on paper.",
       derive_answer(state), View::Derive, "Open the Derive view", true},
      {"Build", "code it from scratch",
       "Write single-head self-attention in NumPy, then in PyTorch, and check that both give the same "
       "numbers. Then add the causal mask.",
       build_answer(), View::Build, "Open the Build view", false},
      {"Break", "make it fail, and say why",
       "Drop the √d scaling and use d = 512. What do the softmax rows look like, why are they almost "
       "one-hot, and what happens to the gradients?",
       break_answer(state), View::Break, "Open the Break view", true},
  };
}

// [SECTION] Prove it, go further

bool self_checked(int item) { return kChecklistProof[item] == View::Practice; }
bool unlocked(const AppState& state, int item) { return self_checked(item) || check_passed(state, kChecklistProof[item]); }
bool ticked(const AppState& state, int item) { return ((state.inputs.checklist >> item) & 1u) && unlocked(state, item); }



nlohmann::json practice_view_data(const AppState& state) {
  nlohmann::json out;
  out["exercises"] = nlohmann::json::array();
  for (const Exercise& e : exercises(state))
    out["exercises"].push_back(
        {{"name", e.name}, {"question", e.question}, {"answer", e.answer}, {"view", view_name(e.view)}});
  out["checklist"] = nlohmann::json::array();
  for (int i = 0; i < kChecklistSize; ++i)
    out["checklist"].push_back({{"text", kChecklist[i]}, {"checked", ticked(state, i)},
                                {"self_checked", self_checked(i)}, {"unlocked", unlocked(state, i)},
                                {"check", self_checked(i) ? nlohmann::json(nullptr) : nlohmann::json(view_name(kChecklistProof[i]))}});
  out["references"] = nlohmann::json::array();
  for (const Reference& r : kReferences)
    out["references"].push_back(
        {{"title", r.title}, {"source", r.source}, {"url", r.url}, {"recommended", r.recommended}});
  return out;
}

}  // namespace attn
