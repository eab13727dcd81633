// Splits a sentence into word and punctuation tokens for the worked example.
// Not a subword tokenizer (no BPE): one word = one token, so a learner can read every row.
#pragma once
#include <string>
#include <vector>

namespace attn {

// Documented limits: past them tokenize() throws std::invalid_argument with a readable message.
constexpr int kMaxTokens = 128;           // rows of the weight matrix a learner can still read
constexpr std::size_t kMaxSentenceBytes = 4096;

struct Token {
  std::string text;   // as typed (original case)
  std::string lower;  // ASCII-lowercased, for the lexicon
  bool is_punct = false;
};

// Words are runs of letters, digits, apostrophes and any non-ASCII bytes (so "didn't", "café"
// and emoji stay whole); each ASCII punctuation mark is a token of its own; spaces separate.
std::vector<Token> tokenize(const std::string& sentence);

}  // namespace attn
