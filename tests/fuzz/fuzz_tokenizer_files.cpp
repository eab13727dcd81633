// libFuzzer target: any bytes as Hugging Face tokenizer files, then a text through the tokenizer.
// Not a check of the tokens' values: only that nothing crashes and that BPE decodes back to the text.
// Input: byte 0 picks the form (even: vocab.json \0 merges.txt \0 text; odd: tokenizer.json \0 text).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../src/api/tokenizer_files.h"
#include "../../src/core/bpe.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool json_form = data[0] & 1;
  std::vector<std::string> parts(1);
  for (std::size_t i = 1; i < size; ++i) {
    if (data[i] == 0 && parts.size() < (json_form ? 2u : 3u))
      parts.emplace_back();
    else
      parts.back() += static_cast<char>(data[i]);
  }
  const std::size_t text_part = json_form ? 1 : 2;
  const std::string text = parts.size() > text_part ? parts[text_part] : "Hello world, it's 2026 \xF0\x9F\x98\x80!\n";
  try {
    const attn::TextTokenizer t = json_form ? attn::tokenizer_from_json(parts[0])
                                            : attn::tokenizer_from_vocab_merges(parts[0], parts.size() > 1 ? parts[1] : "");
    const std::vector<int> ids = t.encode(text);
    for (int id : ids) {
      if (id < 0 || id >= t.vocab_size()) std::abort();
      (void)attn::gpt2_pretokenize(t.display(id));  // throws (an abort below) unless valid UTF-8
    }
    if (t.kind() == attn::TextTokenizer::Kind::ByteLevelBpe && t.decode(ids) != text) std::abort();
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    if (what.empty() || what.find('\n') != std::string::npos) std::abort();  // one line, always
  }
  return 0;
}
