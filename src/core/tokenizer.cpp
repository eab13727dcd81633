// Splits a sentence into word and punctuation tokens (see tokenizer.h).
// Not Unicode-aware beyond keeping multi-byte characters inside words.
#include "tokenizer.h"

#include <stdexcept>

namespace attn {

namespace {
bool is_word_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '\'' ||
         c >= 0x80;
}
bool is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
}  // namespace

std::vector<Token> tokenize(const std::string& sentence) {
  if (sentence.size() > kMaxSentenceBytes)
    throw std::invalid_argument("sentence is too long: " + std::to_string(sentence.size()) +
                                " characters (the limit is " + std::to_string(kMaxSentenceBytes) + ")");
  std::vector<Token> tokens;
  auto push = [&](std::string text, bool punct) {
    if (static_cast<int>(tokens.size()) == kMaxTokens)
      throw std::invalid_argument("sentence has more than " + std::to_string(kMaxTokens) +
                                  " tokens (words and punctuation); shorten it");
    Token t;
    t.lower = text;
    for (char& c : t.lower)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    t.text = std::move(text);
    t.is_punct = punct;
    tokens.push_back(std::move(t));
  };
  std::size_t i = 0;
  while (i < sentence.size()) {
    const unsigned char c = static_cast<unsigned char>(sentence[i]);
    if (is_space(c) || c < 0x20 || c == 0x7f) {
      ++i;
    } else if (is_word_byte(c)) {
      std::size_t j = i;
      while (j < sentence.size() && is_word_byte(static_cast<unsigned char>(sentence[j]))) ++j;
      push(sentence.substr(i, j - i), false);
      i = j;
    } else {
      push(std::string(1, sentence[i]), true);
      ++i;
    }
  }
  if (tokens.empty()) throw std::invalid_argument("sentence is empty: type at least one word");
  return tokens;
}

}  // namespace attn
