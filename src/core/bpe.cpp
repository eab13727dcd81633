// PLACEHOLDER until the tokenizer lands (replaced wholesale by its implementation).
#include "bpe.h"

#include <stdexcept>

namespace attn {
TextTokenizer TextTokenizer::byte_level_bpe(std::vector<std::string>, std::vector<std::pair<std::string, std::string>>) {
  throw std::invalid_argument("tokenizer: not built yet");
}
TextTokenizer TextTokenizer::word_level(std::vector<std::string>, int) { throw std::invalid_argument("tokenizer: not built yet"); }
std::vector<int> TextTokenizer::encode(const std::string&) const { throw std::invalid_argument("tokenizer: not built yet"); }
std::string TextTokenizer::token_bytes(int) const { return ""; }
std::string TextTokenizer::display(int) const { return ""; }
std::string TextTokenizer::decode(const std::vector<int>&) const { return ""; }
}  // namespace attn
