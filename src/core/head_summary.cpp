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

void HeadSummarySums::add_row(int i, int n, const float* weights, int lo) {
  if (n < 2) return;  // no choice: the row says nothing about the head
  const auto at = [&](int j) { return j < lo ? 0.0f : weights[j - lo]; };
  if (static_cast<int>(key_sum_.size()) < n) key_sum_.resize(static_cast<std::size_t>(n), 0.0), key_rows_.resize(static_cast<std::size_t>(n), 0);
  ++rows_used_;
  double entropy = 0;
  for (int j = 0; j < n; ++j) {
    const double w = std::isfinite(at(j)) ? std::max(0.0f, at(j)) : 0.0;
    if (w > 0) entropy -= w * std::log(w);
    key_sum_[static_cast<std::size_t>(j)] += w;
    ++key_rows_[static_cast<std::size_t>(j)];
  }
  spread_ += entropy / std::log(static_cast<double>(n));
  if (i >= 1 && i - 1 < n) {  // row 0's key 0 is itself: it counts for "itself" only
    first_ += std::isfinite(at(0)) ? at(0) : 0.0f;
    ++first_rows_;
  }
  if (i >= 2 && i - 1 < n) {  // row 1's previous key is the first key: it tells the two apart for neither
    previous_ += std::isfinite(at(i - 1)) ? at(i - 1) : 0.0f;
    ++previous_rows_;
  }
  if (i < n) {
    self_ += std::isfinite(at(i)) ? at(i) : 0.0f;
    ++self_rows_;
  }
  if (i + 1 < n) {  // a later key is visible (never under a causal mask)
    next_ += std::isfinite(at(i + 1)) ? at(i + 1) : 0.0f;
    ++next_rows_;
    for (int j = i + 1; j < n; ++j) ahead_ += std::isfinite(at(j)) ? std::max(0.0f, at(j)) : 0.0f;
  }
}

HeadSummary HeadSummarySums::summary(int Tk, const Matrix* values) const {
  HeadSummary s;
  if (Tk == 0) return s;
  s.rows_used = rows_used_;
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
  s.spread = static_cast<float>(spread_ / s.rows_used);
  s.previous = previous_rows_ ? static_cast<float>(previous_ / previous_rows_) : 0.0f;
  s.first = first_rows_ ? static_cast<float>(first_ / first_rows_) : 0.0f;
  s.self = self_rows_ ? static_cast<float>(self_ / self_rows_) : 0.0f;
  s.next = next_rows_ ? static_cast<float>(next_ / next_rows_) : 0.0f;
  s.ahead = static_cast<float>(ahead_ / s.rows_used);  // every row with a choice: the last one has nothing ahead
  // A key counts when at least half the rows see it (and kHeadMinRows): under a mask the last keys
  // are seen by a few rows only, and their choice does not make one "the" token the head looks for.
  const int min_rows = std::max(kHeadMinRows, (s.rows_used + 1) / 2);
  for (int j = 1; j < std::min(Tk, static_cast<int>(key_rows_.size())); ++j) {
    const std::size_t k = static_cast<std::size_t>(j);
    if (key_rows_[k] < min_rows) continue;
    const float share = static_cast<float>(key_sum_[k] / key_rows_[k]);
    if (share > s.top_key_share) {
      s.top_key_share = share;
      s.top_key = j;
    }
  }
  if (s.rows_used < kHeadMinRows) s.pattern = HeadPattern::TooFew;
  else if (previous_rows_ >= kHeadMinRows && s.previous >= kHeadPatternShare) s.pattern = HeadPattern::PreviousToken;
  else if (next_rows_ >= kHeadMinRows && s.next >= kHeadPatternShare) s.pattern = HeadPattern::NextToken;
  else if (s.first >= kHeadPatternShare) s.pattern = HeadPattern::FirstToken;
  else if (s.self >= kHeadPatternShare) s.pattern = HeadPattern::Itself;
  else if (s.top_key >= 0 && s.top_key_share >= kHeadPatternShare) s.pattern = HeadPattern::OneToken;
  else if (s.ahead >= kHeadPatternShare) s.pattern = HeadPattern::LooksAhead;
  else if (s.spread >= kHeadSpreadEntropy) s.pattern = HeadPattern::SpreadOut;
  s.sink = s.pattern == HeadPattern::FirstToken && s.first_value_ratio >= 0 && s.first_value_ratio < kSinkValueRatio;
  return s;
}

HeadSummary summarize_head(const Matrix& weights, bool causal, const Matrix* values) {
  const int Tq = static_cast<int>(weights.rows()), Tk = static_cast<int>(weights.cols());
  if (Tq == 0 || Tk == 0) return {};
  HeadSummarySums sums;
  // visible keys of row i: 0 … i under the mask (and within the matrix), else all of them
  for (int i = 0; i < Tq; ++i) sums.add_row(i, causal ? std::min(i + 1, Tk) : Tk, weights.row(i).data());
  return sums.summary(Tk, values);
}

}  // namespace attn
