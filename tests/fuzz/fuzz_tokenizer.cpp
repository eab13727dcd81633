// libFuzzer target: any bytes as a sentence. Tokens must cover only bytes of the input, each token
// non-empty; errors only as std::invalid_argument.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "../../src/core/model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string sentence(reinterpret_cast<const char*>(data), size);
  try {
    const attn::EmbeddedSentence e = attn::embed_sentence(sentence);
    std::size_t covered = 0;
    for (const attn::Token& t : e.tokens) {
      if (t.text.empty() || t.text.size() != t.lower.size()) std::abort();
      covered += t.text.size();
    }
    if (covered > size || e.x.rows() != static_cast<Eigen::Index>(e.tokens.size()) || !e.x.allFinite()) std::abort();
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
