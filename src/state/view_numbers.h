// The numbers the views show that the core does not store (a softmax row's exps and their sum, the
// Derive stages' answers, ...), computed once per input revision by apply_inputs and held by
// AppState::views, and the JSON of those views for getState().view_data. No ImGui: panels only draw these.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../core/attention.h"
#include "../core/head_summary.h"
#include "../core/transformer.h"

namespace attn {

struct AppState;

// Shared small pieces: the token labels of the query side and of the key side ("it", "animal").
std::vector<std::string> query_labels(const AppState& state);
std::vector<std::string> key_labels(const AppState& state);
// True where the causal mask hides key `col` from query `row`: its score was −∞ before the softmax,
// or (the "mask after softmax" mistake) its weight was zeroed afterwards. Under "mask with 0" the
// key is not hidden at all: it keeps a weight, and views must show that honestly.
bool key_hidden_by_mask(const AttentionTrace& trace, int row, int col);
// Whether the learner cut this link (input cut): hidden as the mask hides, but by hand.
bool link_cut(const AttentionTrace& trace, int row, int col);


// [SECTION] The one rule for writing exps on screen

// Plain exp keeps the numbers the lesson writes (e^0.707 ≈ 2.03). A row whose largest score is above
// this limit (e^20 ≈ 4.9e8: past it the plain exps are unreadable) takes its max off first, as real
// code always does: the weights come out the same.
constexpr double kPlainExpLimit = 20;

// One row of scores through the exps, as the views write them out.
struct ExpRow {
  std::vector<double> exps;  // exp(score − shift); 0 where the score is −∞ (a hidden key)
  double shift = 0;          // 0 (plain exp) or the row's largest finite score (above kPlainExpLimit)
  double sum_of_exps = 0;
};
ExpRow display_exps(const float* scores, int count);

// [SECTION] Derive: the lesson's 3×2 exercise, every number of its six stages

// Where a learner who multiplies the weights as printed (two decimals) by V gets a different
// two-decimal result than the output (which uses the unrounded weights).
struct RoundingGap {
  int token = 0, column = 0;
  double by_hand = 0, output = 0;
};

struct DeriveNumbers {
  double root_d = 0;         // √d
  Eigen::MatrixXd exps;      // e^(scaled score − shift) per cell
  Eigen::VectorXd shift;     // per row: 0 (plain exp) or the row's max (display_exps)
  Eigen::VectorXd row_sums;  // sum of each row of exps
  // The six stages' numbers, the answers to its typed predictions: raw scores, scaled, exps, row
  // sums (3, 1), weights, output (3, 2), in the order of kDeriveCheckStages.
  std::vector<Eigen::MatrixXd> stage_answers;
  std::vector<RoundingGap> rounding_gaps;
};
DeriveNumbers derive_numbers(const AttentionTrace& derive);

// Whether the learner's typed prediction for a Derive cell is there, and right.
struct DeriveCellMark {
  bool answered = false, right = false;
  std::string typed;
};
DeriveCellMark derive_cell_mark(const AppState& state, int stage, int row, int col);

// [SECTION] Steps: the selected query's row through the seven steps


struct StepsNumbers {
  // step 3: what the softmax saw (−∞ where a key is hidden), and its exps
  std::vector<float> softmax_scores;
  ExpRow softmax;
  float weights_sum = 0;  // the selected row of weights added up (1, or less under a mistake)
  // step 4: keys in order of the selected row's weight, largest first
  std::vector<int> keys_by_weight;
  // step 6: how spread out the raw scores are, before and after ÷ √d, and the selected row's weights
  // both ways (same temperature and mask as the trace)
  float sqrt_d = 1;
  float std_raw = 0, std_divided = 0;
  std::vector<float> weights_divided, weights_undivided;
};
StepsNumbers steps_numbers(const AttentionTrace& trace, int token, float temperature);

// [SECTION] Weights: each cell's softmax arithmetic (the hover tooltip) and each row's sum

struct WeightsNumbers {
  std::vector<float> row_sums;  // each row of weights added up (1 unless a mistake is on)
  // The softmax lines as the trace ran them: its rows, or its columns under the wrong-axis mistake.
  // Per line the largest visible score and the sum of exp(score − that max); per cell its exp and
  // exp ÷ sum (0 where the score is −∞). Always the max taken off, as real code does.
  bool by_column = false;
  std::vector<double> line_max, line_sum_of_exps;
  Eigen::MatrixXd exps, softmax;
};
WeightsNumbers weights_numbers(const AttentionTrace& trace, bool by_column);

// [SECTION] Heads: every head's summary, how many of each pattern, the chosen head's largest weights

constexpr int kHeadPatternCount = static_cast<int>(HeadPattern::TooFew) + 1;
constexpr int kShownTopKeys = 5;  // the chosen head's largest weights from the selected token

struct HeadsNumbers {
  int layers = 0, heads = 0;
  std::vector<HeadSummary> summaries;  // layers × heads, row-major: the forward's (head_summary)
  int pattern_counts[kHeadPatternCount] = {};  // how many heads the rule names each way (by HeadPattern)
  int sinks = 0;
  std::vector<int> top_keys;  // the selected token's largest weights in `trace`, best first
};
HeadsNumbers heads_numbers(const ModelTrace* forward, const AttentionTrace& trace, int token);

// [SECTION] Flow: whom the selected token reads from, and whether the rows sum to 1

// The keys with the largest weights in the selected row, best first; keys whose weight equals the
// largest (within float rounding) form one tie, reported as a tie: no arbitrary one of them is "the" best.
struct StrongestKeys {
  std::vector<int> keys;       // the tied best keys, then up to 2 more
  std::vector<float> weights;  // their weights
  int tied = 1;                // how many keys share the largest weight
};
StrongestKeys strongest_keys(const AttentionTrace& trace, int row);

struct FlowNumbers {
  StrongestKeys strongest;       // of the selected token
  bool rows_sum_to_one = true;   // every row of weights within 1e-3 of 1 (a mistake can break it)
};

// [SECTION] Library: the selected query as a reader, each key-side token a book

struct LibraryReading {
  int reader = 0;                    // the query row (the selected token)
  int best = 0;                      // the book whose title matches the question best (not hidden)
  std::vector<float> attention;      // the weights row: how much of each book attention reads
  std::vector<float> read;           // what the chosen mode reads: attention, or 1 on `best` only
  std::vector<float> blend;          // attention's take-home: the output row
  std::vector<float> best_book;      // a real library's take-home: the best book's contents
  std::vector<float> value_lengths;  // |contents| per book: the values, or the keys under the swap mistake
  // A book read a fair share of (≥ 5%, not the best) whose contents are under half as long as the
  // longest visible ones: the first such book by weight, or -1.
  int thin_book = -1;
};
LibraryReading library_reading(const AttentionTrace& trace, int reader, bool best_only, Mistake mistake);

// [SECTION] Every view's numbers, for the current inputs

struct ViewNumbers {
  DeriveNumbers derive;
  StepsNumbers steps;
  WeightsNumbers weights;
  HeadsNumbers heads;
  FlowNumbers flow;
  LibraryReading library;
};
ViewNumbers view_numbers(const AppState& state);

// [SECTION] Derive's answers (its getState().view_data: derive_view_data, view_data.h)

std::vector<Eigen::MatrixXd> derive_stage_answers(const AppState& state);

}  // namespace attn
