// Head summaries by rule (see head_summary.h): means of the weight on i − 1, 0 and i, the
// strongest single key, and the rows' relative entropy. Not a classifier trained on anything.
#include "head_summary.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace attn {

const char* head_pattern_name(HeadPattern p) {
  switch (p) {
    case HeadPattern::PreviousToken: return "previous_token";
    case HeadPattern::NextToken: return "next_token";
    case HeadPattern::FirstToken: return "first_token";
    case HeadPattern::Itself: return "itself";
    case HeadPattern::OneToken: return "one_token";
    case HeadPattern::LooksAhead: return "looks_ahead";
    case HeadPattern::SpreadOut: return "spread_out";
    case HeadPattern::Mixed: return "mixed";
    case HeadPattern::TooFew: return "too_few";
  }
  return "mixed";
}

HeadSummary summarize_head(const Matrix& weights, bool causal, const Matrix* values) {
  HeadSummary s;
  const int Tq = static_cast<int>(weights.rows()), Tk = static_cast<int>(weights.cols());
  if (Tq == 0 || Tk == 0) return s;
  // visible keys of row i: 0 … i under the mask (and within the matrix), else all of them
  auto visible = [&](int i) { return causal ? std::min(i + 1, Tk) : Tk; };
  std::vector<double> key_sum(static_cast<std::size_t>(Tk), 0.0);
  std::vector<int> key_rows(static_cast<std::size_t>(Tk), 0);
  double previous = 0, first = 0, self = 0, next = 0, ahead = 0, spread = 0;
  int previous_rows = 0, first_rows = 0, self_rows = 0, next_rows = 0;
  for (int i = 0; i < Tq; ++i) {
    const int n = visible(i);
    if (n < 2) continue;  // no choice: the row says nothing about the head
    ++s.rows_used;
    double entropy = 0;
    for (int j = 0; j < n; ++j) {
      const double w = std::isfinite(weights(i, j)) ? std::max(0.0f, weights(i, j)) : 0.0;
      if (w > 0) entropy -= w * std::log(w);
      key_sum[static_cast<std::size_t>(j)] += w;
      ++key_rows[static_cast<std::size_t>(j)];
    }
    spread += entropy / std::log(static_cast<double>(n));
    if (i >= 1 && i - 1 < n) {  // row 0's key 0 is itself: it counts for "itself" only
      first += std::isfinite(weights(i, 0)) ? weights(i, 0) : 0.0f;
      ++first_rows;
    }
    if (i >= 2 && i - 1 < n) {  // row 1's previous key is the first key: it tells the two apart for neither
      previous += std::isfinite(weights(i, i - 1)) ? weights(i, i - 1) : 0.0f;
      ++previous_rows;
    }
    if (i < n) {
      self += std::isfinite(weights(i, i)) ? weights(i, i) : 0.0f;
      ++self_rows;
    }
    if (i + 1 < n) {  // a later key is visible (never under a causal mask)
      next += std::isfinite(weights(i, i + 1)) ? weights(i, i + 1) : 0.0f;
      ++next_rows;
      for (int j = i + 1; j < n; ++j) ahead += std::isfinite(weights(i, j)) ? std::max(0.0f, weights(i, j)) : 0.0f;
    }
  }
  if (values && values->rows() == Tk && values->cols() > 0) {
    double mean = 0;
    for (int j = 0; j < Tk; ++j) mean += values->row(j).norm();
    mean /= Tk;
    if (mean > 0 && std::isfinite(mean)) s.first_value_ratio = static_cast<float>(values->row(0).norm() / mean);
  }
  if (s.rows_used == 0) {  // T = 1 (or a single visible key): all its weight is on itself
    s.pattern = HeadPattern::TooFew;
    s.self = s.first = 1;
    return s;
  }
  s.spread = static_cast<float>(spread / s.rows_used);
  s.previous = previous_rows ? static_cast<float>(previous / previous_rows) : 0.0f;
  s.first = first_rows ? static_cast<float>(first / first_rows) : 0.0f;
  s.self = self_rows ? static_cast<float>(self / self_rows) : 0.0f;
  s.next = next_rows ? static_cast<float>(next / next_rows) : 0.0f;
  s.ahead = static_cast<float>(ahead / s.rows_used);  // every row with a choice: the last one has nothing ahead
  // A key counts when at least half the rows see it (and kHeadMinRows): under a mask the last keys
  // are seen by a few rows only, and their choice does not make one "the" token the head looks for.
  const int min_rows = std::max(kHeadMinRows, (s.rows_used + 1) / 2);
  for (int j = 1; j < Tk; ++j) {
    const std::size_t k = static_cast<std::size_t>(j);
    if (key_rows[k] < min_rows) continue;
    const float share = static_cast<float>(key_sum[k] / key_rows[k]);
    if (share > s.top_key_share) {
      s.top_key_share = share;
      s.top_key = j;
    }
  }
  if (s.rows_used < kHeadMinRows) s.pattern = HeadPattern::TooFew;
  else if (previous_rows >= kHeadMinRows && s.previous >= kHeadPatternShare) s.pattern = HeadPattern::PreviousToken;
  else if (next_rows >= kHeadMinRows && s.next >= kHeadPatternShare) s.pattern = HeadPattern::NextToken;
  else if (s.first >= kHeadPatternShare) s.pattern = HeadPattern::FirstToken;
  else if (s.self >= kHeadPatternShare) s.pattern = HeadPattern::Itself;
  else if (s.top_key >= 0 && s.top_key_share >= kHeadPatternShare) s.pattern = HeadPattern::OneToken;
  else if (s.ahead >= kHeadPatternShare) s.pattern = HeadPattern::LooksAhead;
  else if (s.spread >= kHeadSpreadEntropy) s.pattern = HeadPattern::SpreadOut;
  s.sink = s.pattern == HeadPattern::FirstToken && s.first_value_ratio >= 0 && s.first_value_ratio < kSinkValueRatio;
  return s;
}

}  // namespace attn
