// Unit tests for head summaries: weight matrices written by hand for each pattern, the means the
// rule reads checked as numbers. Not a test of any real model's heads.
#include <doctest/doctest.h>

#include <cmath>

#include "../../src/core/head_summary.h"
#include "test_helpers.h"

using namespace attn;
using attn::test::rows;

TEST_CASE("head summary: a previous-token head (causal)") {
  const Matrix w = rows({{1, 0, 0, 0}, {0.9f, 0.1f, 0, 0}, {0.1f, 0.8f, 0.1f, 0}, {0.05f, 0.05f, 0.8f, 0.1f}});
  const HeadSummary s = summarize_head(w, true);
  CHECK(s.pattern == HeadPattern::PreviousToken);
  CHECK(s.rows_used == 3);  // row 0 has no choice under the mask
  CHECK(s.previous == doctest::Approx((0.9 + 0.8 + 0.8) / 3).epsilon(1e-6));
  CHECK(s.first == doctest::Approx((0.9 + 0.1 + 0.05) / 3).epsilon(1e-6));
  CHECK(s.self == doctest::Approx(0.1).epsilon(1e-6));
  CHECK(std::string(head_pattern_name(s.pattern)) == "previous_token");
}

TEST_CASE("head summary: a first-token head (causal)") {
  const Matrix w = rows({{1, 0, 0, 0}, {0.8f, 0.2f, 0, 0}, {0.7f, 0.2f, 0.1f, 0}, {0.6f, 0.2f, 0.1f, 0.1f}});
  const HeadSummary s = summarize_head(w, true);
  CHECK(s.pattern == HeadPattern::FirstToken);
  CHECK(s.first == doctest::Approx(0.7).epsilon(1e-6));
  CHECK(s.previous == doctest::Approx((0.8 + 0.2 + 0.1) / 3).epsilon(1e-6));
  CHECK(s.previous < kHeadPatternShare);
}

TEST_CASE("head summary: a uniform head is spread out, relative entropy 1") {
  const Matrix w = rows({{1, 0, 0, 0}, {0.5f, 0.5f, 0, 0}, {1 / 3.f, 1 / 3.f, 1 / 3.f, 0}, {0.25f, 0.25f, 0.25f, 0.25f}});
  const HeadSummary s = summarize_head(w, true);
  CHECK(s.pattern == HeadPattern::SpreadOut);
  CHECK(s.spread == doctest::Approx(1.0).epsilon(1e-5));
  const double each = (1 / 2.0 + 1 / 3.0 + 1 / 4.0) / 3;  // the same share on i − 1, 0 and i
  CHECK(s.previous == doctest::Approx(each).epsilon(1e-5));
  CHECK(s.first == doctest::Approx(each).epsilon(1e-5));
  CHECK(s.self == doctest::Approx(each).epsilon(1e-5));
  CHECK(s.top_key == 1);
  CHECK(s.top_key_share == doctest::Approx(each).epsilon(1e-5));
}

TEST_CASE("head summary: one key everyone reads (no mask), and a head looking at itself") {
  const Matrix w = rows({{0.1f, 0.8f, 0.1f}, {0.1f, 0.8f, 0.1f}, {0.1f, 0.8f, 0.1f}});
  const HeadSummary s = summarize_head(w, false);
  CHECK(s.pattern == HeadPattern::OneToken);
  CHECK(s.top_key == 1);
  CHECK(s.top_key_share == doctest::Approx(0.8).epsilon(1e-6));
  CHECK(s.previous == doctest::Approx(0.45).epsilon(1e-6));  // rows 1, 2: 0.1 and 0.8
  CHECK(s.rows_used == 3);
  const HeadSummary diagonal = summarize_head(rows({{0.9f, 0.1f}, {0.2f, 0.8f}}), false);
  CHECK(diagonal.pattern == HeadPattern::Itself);
  CHECK(diagonal.self == doctest::Approx(0.85).epsilon(1e-6));
  CHECK(diagonal.first == doctest::Approx(0.2).epsilon(1e-6));
}

TEST_CASE("head summary: no pattern passes its threshold: mixed; T = 1: itself") {
  const Matrix w = rows({{0.7f, 0.1f, 0.1f, 0.1f}, {0.1f, 0.1f, 0.7f, 0.1f}, {0.1f, 0.1f, 0.1f, 0.7f}, {0.1f, 0.7f, 0.1f, 0.1f}});
  const HeadSummary s = summarize_head(w, false);
  CHECK(s.pattern == HeadPattern::Mixed);
  const double h = -(0.7 * std::log(0.7) + 3 * 0.1 * std::log(0.1)) / std::log(4.0);  // 0.678 for every row
  CHECK(s.spread == doctest::Approx(h).epsilon(1e-5));
  CHECK(s.first == doctest::Approx(0.1).epsilon(1e-6));  // rows 1 … 3; row 0's key 0 is itself
  CHECK(s.self == doctest::Approx(0.25).epsilon(1e-6));
  const HeadSummary one = summarize_head(rows({{1}}), true);
  CHECK(one.pattern == HeadPattern::Itself);
  CHECK(one.rows_used == 0);
  // The last key, seen by the last row only, is not "the" token of a causal head.
  const HeadSummary last = summarize_head(rows({{1, 0, 0}, {0.5f, 0.5f, 0}, {0.2f, 0.2f, 0.6f}}), true);
  CHECK(last.top_key == 1);
  CHECK(last.top_key_share == doctest::Approx(0.35).epsilon(1e-6));  // rows 1, 2: 0.5 and 0.2
  CHECK(last.self == doctest::Approx(0.55).epsilon(1e-6));
  CHECK(last.pattern == HeadPattern::Itself);
}
