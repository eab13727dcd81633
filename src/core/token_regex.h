// A small backtracking regex engine for the pre-tokenizer patterns in tokenizer.json files (Llama 3's,
// Qwen's, GPT-2's), with Oniguruma's semantics. Not a general regex library: anything else is refused.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attn {

// What it understands: literals (UTF-8), `.`, alternation, groups `(...)` `(?:...)` `(?i:...)`,
// lookahead `(?!...)` `(?=...)`, classes `[...]` `[^...]` with ranges, the escapes \s \S \p{L} \p{N}
// \P{L} \P{N} \r \n \t \f \v and escaped punctuation, and greedy quantifiers ? * + {m} {m,} {m,n}.
// Matching is leftmost-first with backtracking, as Oniguruma (Hugging Face's regex engine) does;
// \s is Unicode White_Space (Oniguruma's, not JavaScript's: U+0085 is a space, U+FEFF is not).
class TokenRegex {
 public:
  // Throws std::invalid_argument("regex '<pattern>': <problem>") for what it does not understand.
  explicit TokenRegex(const std::string& pattern);

  // The matches in cps[0, n) as Oniguruma's find_iter gives them (non-overlapping, left to right, an
  // empty match right after the previous one skipped), as code point index pairs [begin, end).
  // Each instruction run costs one step of *budget; throws std::invalid_argument when it runs out, so
  // a pattern that backtracks without end cannot hang the caller.
  void find_all(const std::uint32_t* cps, std::size_t n, std::vector<std::pair<std::size_t, std::size_t>>& out,
                long long* budget) const;

  const std::string& pattern() const { return pattern_; }

  struct ClassSet {
    bool negated = false;
    std::uint8_t props = 0;  // bits: kLetter, kNumber, kSpace, and their complements
    std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges;
    bool test(std::uint32_t cp) const;
  };
  struct Inst {
    std::uint8_t op = 0;
    bool negate = false;  // for a lookahead: (?! rather than (?=
    int cls = -1;         // the class of a Class or Repeat instruction
    int x = 0, y = 0;     // jump targets (Split prefers x); a lookahead's body starts at x and goes on at y
    long min = 0, max = 0;
  };

 private:
  bool match_at(int pc, std::size_t pos, const std::uint32_t* cps, std::size_t n, std::size_t* end, long long* budget,
                int depth) const;

  std::string pattern_;
  std::vector<ClassSet> classes_;
  std::vector<Inst> program_;
};

// Oniguruma's \s (Unicode White_Space), also what Rust's char::is_whitespace tests.
bool is_unicode_white_space(std::uint32_t cp);

}  // namespace attn
