// What one attention head mostly does, read off its weight matrix by fixed rules with thresholds
// (previous token, first token, itself, one particular token, spread out). Not per model: nothing
// here knows a model's name or its tokens; the same rule reads every head.
#pragma once
#include <vector>

#include "matrix.h"

namespace attn {

enum class HeadPattern {
  PreviousToken,  // most weight on the token just before (i − 1)
  NextToken,      // most weight on the token just after (i + 1): only where later keys are visible
  FirstToken,     // most weight on token 0 (GPT-2's "attention sink")
  Itself,         // most weight on the query's own position (i)
  OneToken,       // most weight on one particular later-than-first token (HeadSummary::top_key)
  LooksAhead,     // most weight on keys after the query (j > i), no single one: only without a causal mask
  SpreadOut,      // weight spread nearly evenly over every key it may see
  Mixed,          // none of the above passes its threshold
  TooFew,         // fewer than kHeadMinRows rows with a choice: too few tokens to call
};
const char* head_pattern_name(HeadPattern p);  // "previous_token", "first_token", "itself", ...

// A pattern is named when its mean share reaches this (half of every row's weight on average).
constexpr float kHeadPatternShare = 0.5f;
// "spread out" when the mean relative entropy H_i / log(n_i) reaches this (1 = perfectly even).
constexpr float kHeadSpreadEntropy = 0.85f;
// Every label is read off at least this many rows (and a key's share off at least half the rows):
// two or three rows cannot tell a previous-token head from a first-token one.
constexpr int kHeadMinRows = 4;
// A first-token head whose first value is under this fraction of the mean value norm of the keys it
// reads is an "attention sink": weight parked where it adds little, a default "look nowhere".
constexpr float kSinkValueRatio = 0.5f;

struct HeadSummary {
  HeadPattern pattern = HeadPattern::Mixed;
  // Means over the query rows that have a choice (rows with at least two visible keys; under a
  // causal mask row 0 sees only itself and is left out):
  float previous = 0;  // weight on key i − 1, over rows 2 … (row 1's previous key is the first key)
  float first = 0;     // weight on key 0 (rows 1 … : row 0's key 0 is itself)
  float self = 0;      // weight on key i
  float next = 0;      // weight on key i + 1, over rows 0 … Tk − 2 (0 under a causal mask: not visible)
  float ahead = 0;     // weight on every key j > i together (0 under a causal mask)
  float spread = 0;    // entropy of the row / log(number of visible keys), in [0, 1]
  int top_key = -1;    // the key (other than 0) with the largest mean weight over the rows that see
  float top_key_share = 0;  // it, among keys seen by at least half the rows (and kHeadMinRows)
  int rows_used = 0;   // how many rows the means are over (0: the head has no choice to make)
  // ‖v_0‖ / the mean ‖v_j‖ over every key, when the values were given (else −1): under
  // kSinkValueRatio a first-token head is a sink (`sink`).
  float first_value_ratio = -1;
  bool sink = false;
};
// Reads a (Tq, Tk) weight matrix (rows sum to 1; under `causal`, keys j > i are not visible and
// their weights are ignored) and, where given, the head's (Tk, d_v) values. The first pattern that
// reaches its threshold, in the order of HeadPattern, names the head; with fewer than kHeadMinRows
// rows that have a choice it is TooFew (the means are still filled in).
HeadSummary summarize_head(const Matrix& weights, bool causal, const Matrix* values = nullptr);

// The sums summarize_head reads, gathered row by row: a forward that adds rows to a text (the
// incremental one, transformer.h) adds them to the sums of the rows before and gets the summary of
// the whole matrix bit for bit (every sum gets the same numbers in the same order).
class HeadSummarySums {
 public:
  // Row i with n visible keys (0 … n − 1): its weights from key `lo` on at `weights` (n − lo of them),
  // the keys before `lo` 0 (a sliding window's).
  void add_row(int i, int n, const float* weights, int lo = 0);
  // The summary of the rows added so far against Tk keys, with the head's (Tk, d_v) values where given.
  HeadSummary summary(int Tk, const Matrix* values = nullptr) const;

 private:
  std::vector<double> key_sum_;
  std::vector<int> key_rows_;
  double previous_ = 0, first_ = 0, self_ = 0, next_ = 0, ahead_ = 0, spread_ = 0;
  int rows_used_ = 0, previous_rows_ = 0, first_rows_ = 0, self_rows_ = 0, next_rows_ = 0;
};

}  // namespace attn
