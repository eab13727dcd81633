// libFuzzer target: any bytes as Hugging Face tokenizer files, then a text through the tokenizer.
// Not a check of the tokens' values: only that nothing crashes or hangs, ids are in range, displays are
// valid UTF-8, errors are one line, and GPT-2's vocab.json + merges.txt decode back to the text.
// Input: byte 0 picks the form. Bit 0 clear: vocab.json \0 merges.txt \0 text. Bit 0 set, bit 1 clear:
// tokenizer.json \0 text. Bits 0 and 1 set: a pipeline built around the input (bits 2-7 choose the
// normalizer, the pre-tokenizer's behaviour and the model's options): regex \0 added token \0 text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../../src/api/tokenizer_files.h"
#include "../../src/core/bpe.h"

namespace {

// A small SentencePiece-like file: every <0xHH> byte token, a few characters and merges, with the
// fuzzer's regex as a Split pattern and its added token, in the configuration the flags choose.
std::string generated_json(unsigned flags, const std::string& regex, const std::string& added) {
  using nlohmann::json;
  json vocab = json::object();
  int id = 0;
  for (const char* t : {"<unk>", "<s>", "</s>"}) vocab[t] = id++;
  static const char* hex = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) vocab[std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">"] = id++;
  for (const char* t : {"\u2581", "a", "b", " ", "\u0120", "\u2581a", "ab", "\u2581ab", "e", "\u00e9", "\u0301"}) vocab[t] = id++;
  const json merges = json::array({"\u2581 a", "a b", "\u2581a b"});
  static const char* behaviors[] = {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"};
  json normalizers = json::array();
  if (flags & 4) normalizers.push_back({{"type", (flags & 8) ? "NFKC" : "NFC"}});
  if (flags & 16) normalizers.push_back({{"type", "Prepend"}, {"prepend", "\u2581"}});
  normalizers.push_back({{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}});
  if (flags & 32) normalizers.push_back({{"type", "Lowercase"}});
  json pre = json::array();
  pre.push_back({{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", behaviors[(flags >> 2) % 5]}, {"invert", (flags & 64) != 0}});
  if (flags & 128) pre.push_back({{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "first"}, {"split", true}});
  else pre.push_back({{"type", "ByteLevel"}, {"add_prefix_space", (flags & 16) != 0}, {"use_regex", (flags & 8) != 0}});
  json added_tokens = json::array({{{"id", 1}, {"content", "<s>"}, {"special", true}, {"normalized", false}}});
  if (!added.empty() && !vocab.contains(added))
    added_tokens.push_back({{"id", id}, {"content", added}, {"special", (flags & 4) != 0}, {"normalized", (flags & 32) != 0},
                            {"lstrip", (flags & 8) != 0}, {"rstrip", (flags & 16) != 0}, {"single_word", (flags & 64) != 0}});
  const json root = {
      {"added_tokens", added_tokens},
      {"normalizer", {{"type", "Sequence"}, {"normalizers", normalizers}}},
      {"pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", pre}}},
      {"post_processor", {{"type", "TemplateProcessing"}, {"single", json::array({{{"SpecialToken", {{"id", "<s>"}}}}, {{"Sequence", {{"id", "A"}}}}})},
                          {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {1}}}}}}}},
      {"decoder", {{"type", "Sequence"}, {"decoders", json::array({{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}},
                                                                   {{"type", "ByteFallback"}}, {{"type", "Fuse"}},
                                                                   {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}})}}},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}, {"unk_token", (flags & 4) ? json("<unk>") : json(nullptr)},
                 {"byte_fallback", (flags & 8) != 0}, {"fuse_unk", (flags & 16) != 0}, {"ignore_merges", (flags & 32) != 0}}}};
  return root.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool json_form = data[0] & 1;
  const bool generated = json_form && (data[0] & 2);
  const std::size_t n_parts = generated ? 3u : json_form ? 2u : 3u;
  std::vector<std::string> parts(1);
  for (std::size_t i = 1; i < size; ++i) {
    if (data[i] == 0 && parts.size() < n_parts)
      parts.emplace_back();
    else
      parts.back() += static_cast<char>(data[i]);
  }
  const std::size_t text_part = json_form && !generated ? 1 : 2;
  const std::string text = parts.size() > text_part ? parts[text_part] : "Hello world, it's 2026 \xF0\x9F\x98\x80!\n";
  try {
    const attn::TextTokenizer t =
        generated ? attn::tokenizer_from_json(generated_json(data[0], parts[0], parts.size() > 1 ? parts[1] : ""))
        : json_form ? attn::tokenizer_from_json(parts[0])
                    : attn::tokenizer_from_vocab_merges(parts[0], parts.size() > 1 ? parts[1] : "");
    for (const bool special : {false, true}) {
      const std::vector<int> ids = t.encode(text, special);
      for (int id : ids) {
        if (id < 0 || id >= t.vocab_size()) std::abort();
        (void)attn::gpt2_pretokenize(t.display(id));  // throws (an abort below) unless valid UTF-8
        (void)t.is_special(id);
      }
      (void)t.decode(ids);
      if (!json_form && t.kind() == attn::TextTokenizer::Kind::ByteLevelBpe && t.decode(ids) != text) std::abort();
    }
    if (t.bos_id() >= t.vocab_size()) std::abort();
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    if (what.empty() || what.find('\n') != std::string::npos) std::abort();  // one line, always
  }
  return 0;
}
