// Unit tests for head summaries: weight matrices written by hand (or by a rule per row) for each
// pattern, the means the rule reads checked as numbers. Not a test of any real model's heads.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include "../../src/core/head_summary.h"
#include "test_helpers.h"

using namespace attn;
using attn::test::rows;

namespace {

// A causal (T, T) matrix whose row i (i ≥ 1) puts `main` on key pick(i) and spreads the rest evenly
// over the row's other visible keys; row 0 is all on itself.
Matrix causal_rows(int T, float main, const std::function<int(int)>& pick) {
  Matrix w = Matrix::Zero(T, T);
  w(0, 0) = 1;
  for (int i = 1; i < T; ++i) {
    for (int j = 0; j <= i; ++j) w(i, j) = (1 - main) / static_cast<float>(i);
    w(i, pick(i)) = main;
  }
  return w;
}

}  // namespace

TEST_CASE("head summary: a previous-token head (causal), its means over rows 2 …") {
  const Matrix w = causal_rows(6, 0.8f, [](int i) { return i - 1; });
  const HeadSummary s = summarize_head(w, true);
  CHECK(s.pattern == HeadPattern::PreviousToken);
  CHECK(s.rows_used == 5);  // row 0 has no choice under the mask
  CHECK(s.previous == doctest::Approx(0.8).epsilon(1e-6));  // rows 2 … 5; row 1's previous key is the first
  CHECK(s.first == doctest::Approx((0.8 + 0.2 / 2 + 0.2 / 3 + 0.2 / 4 + 0.2 / 5) / 5).epsilon(1e-6));
  CHECK(std::string(head_pattern_name(s.pattern)) == "previous_token");
}

TEST_CASE("head summary: a first-token head is not called previous-token at short lengths") {
  // Row 1's key 0 is both its previous and its first key: counted for "previous", a first-token head
  // of five tokens had 0.9 + three rows' small shares, and came out previous-token.
  const Matrix w = rows({{1, 0, 0, 0, 0},
                         {0.9f, 0.1f, 0, 0, 0},
                         {0.6f, 0.3f, 0.1f, 0, 0},
                         {0.6f, 0.1f, 0.2f, 0.1f, 0},
                         {0.6f, 0.1f, 0.1f, 0.1f, 0.1f}});
  const HeadSummary s = summarize_head(w, true);
  CHECK(s.previous == doctest::Approx((0.3 + 0.2 + 0.1) / 3).epsilon(1e-6));
  CHECK(s.first == doctest::Approx((0.9 + 0.6 * 3) / 4).epsilon(1e-6));
  CHECK(s.pattern == HeadPattern::FirstToken);
}

TEST_CASE("head summary: too few rows to call; a previous-token label needs four rows past row 1") {
  const Matrix four = causal_rows(4, 0.9f, [](int i) { return i - 1; });  // 3 rows with a choice
  CHECK(summarize_head(four, true).pattern == HeadPattern::TooFew);
  CHECK(std::string(head_pattern_name(HeadPattern::TooFew)) == "too_few");
  CHECK(summarize_head(rows({{1}}), true).pattern == HeadPattern::TooFew);
  // Five tokens: 4 rows with a choice, but only 3 past row 1 for "previous"; the rest of the rule reads it.
  const HeadSummary five = summarize_head(causal_rows(5, 0.9f, [](int i) { return i - 1; }), true);
  CHECK(five.rows_used == 4);
  CHECK(five.previous >= kHeadPatternShare);
  CHECK(five.pattern != HeadPattern::PreviousToken);
  CHECK(summarize_head(causal_rows(6, 0.9f, [](int i) { return i - 1; }), true).pattern == HeadPattern::PreviousToken);
}

TEST_CASE("head summary: a uniform head is spread out, relative entropy 1") {
  Matrix w = causal_rows(6, 0.0f, [](int) { return 0; });
  for (int i = 1; i < 6; ++i) w.row(i).head(i + 1).setConstant(1.0f / static_cast<float>(i + 1));
  const HeadSummary s = summarize_head(w, true);
  CHECK(s.pattern == HeadPattern::SpreadOut);
  CHECK(s.spread == doctest::Approx(1.0).epsilon(1e-5));
  CHECK(s.first == doctest::Approx((1 / 2.0 + 1 / 3.0 + 1 / 4.0 + 1 / 5.0 + 1 / 6.0) / 5).epsilon(1e-5));
  CHECK(s.top_key == 1);  // seen by rows 1 … 5; key 2 by 4 rows, keys 3 … 5 by fewer than half
}

TEST_CASE("head summary: one key everyone reads (no mask), and a head looking at itself") {
  Matrix w(5, 5);
  for (int i = 0; i < 5; ++i) w.row(i) << 0.05f, 0.8f, 0.05f, 0.05f, 0.05f;
  const HeadSummary s = summarize_head(w, false);
  CHECK(s.pattern == HeadPattern::OneToken);
  CHECK(s.top_key == 1);
  CHECK(s.top_key_share == doctest::Approx(0.8).epsilon(1e-6));
  CHECK(s.rows_used == 5);
  Matrix diagonal = Matrix::Constant(4, 4, 0.1f);
  for (int i = 0; i < 4; ++i) diagonal(i, i) = 0.7f;
  const HeadSummary d = summarize_head(diagonal, false);
  CHECK(d.pattern == HeadPattern::Itself);
  CHECK(d.self == doctest::Approx(0.7).epsilon(1e-6));
}

TEST_CASE("head summary: a key seen by fewer than half the rows is not \"the\" token; mixed") {
  // 8 tokens, causal: 7 rows with a choice. Key 6 (seen by rows 6, 7) takes 0.9 of both: mostly that
  // key over the rows that see it, but two rows of seven are no head's habit.
  Matrix w = causal_rows(8, 0.3f, [](int i) { return i; });
  for (int i = 6; i < 8; ++i) {
    w.row(i).setZero();
    w(i, 6) = 0.9f;
    w(i, 0) = 0.1f;
  }
  const HeadSummary s = summarize_head(w, true);
  CHECK(s.top_key != 6);
  CHECK(s.top_key_share < kHeadPatternShare);
  CHECK(s.pattern == HeadPattern::Mixed);
}

TEST_CASE("head summary: a first-token head on a small value is a sink") {
  const Matrix w = causal_rows(6, 0.8f, [](int) { return 0; });
  Matrix values = Matrix::Constant(6, 4, 1.0f);
  const HeadSummary plain = summarize_head(w, true, &values);
  CHECK(plain.pattern == HeadPattern::FirstToken);
  CHECK(plain.first_value_ratio == doctest::Approx(1.0).epsilon(1e-6));
  CHECK_FALSE(plain.sink);
  values.row(0).setConstant(0.1f);  // ‖v_0‖ = 0.2, the mean (0.2 + 5 · 2) / 6 = 1.7
  const HeadSummary sink = summarize_head(w, true, &values);
  CHECK(sink.first_value_ratio == doctest::Approx(0.2 / 1.7).epsilon(1e-5));
  CHECK(sink.sink);
  CHECK(summarize_head(w, true).first_value_ratio == -1);  // no values given: not known
}

TEST_CASE("head summary, no causal mask: a next-token head and a head that looks ahead") {
  // Row i puts 0.7 on key i + 1 (the last row, which has no next key, on itself), the rest evenly.
  const int T = 6;
  Matrix next = Matrix::Constant(T, T, 0.3f / (T - 1));
  for (int i = 0; i < T; ++i) next(i, std::min(i + 1, T - 1)) = 0.7f;
  const HeadSummary n = summarize_head(next, false);
  CHECK(n.pattern == HeadPattern::NextToken);
  CHECK(std::string(head_pattern_name(n.pattern)) == "next_token");
  CHECK(n.next == doctest::Approx(0.7).epsilon(1e-6));  // rows 0 … 4
  // ahead: rows 0 … 4 have 0.7 + (T − 2 − i) · 0.06 after them, the last row nothing (mean over 6 rows)
  double ahead = 0;
  for (int i = 0; i < T - 1; ++i) ahead += 0.7 + (T - 2 - i) * 0.06;
  CHECK(n.ahead == doctest::Approx(ahead / T).epsilon(1e-5));

  // Every row spreads 0.8 over all its later keys (no single one wins), 0.2 over itself and earlier ones.
  Matrix later = Matrix::Zero(T, T);
  for (int i = 0; i < T; ++i) {
    const int after = T - 1 - i;
    for (int j = 0; j < T; ++j)
      later(i, j) = after == 0 ? 1.0f / T : j > i ? 0.8f / after : 0.2f / (i + 1);
  }
  const HeadSummary a = summarize_head(later, false);
  CHECK(a.pattern == HeadPattern::LooksAhead);
  CHECK(std::string(head_pattern_name(a.pattern)) == "looks_ahead");
  CHECK(a.ahead >= kHeadPatternShare);
  CHECK(a.next < kHeadPatternShare);

  // Under a causal mask the same matrix has nothing ahead: later keys are not visible.
  const HeadSummary masked = summarize_head(later, true);
  CHECK(masked.ahead == 0.0f);
  CHECK(masked.next == 0.0f);
  CHECK(masked.pattern != HeadPattern::LooksAhead);
}
