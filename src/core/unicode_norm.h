// Unicode normalization forms NFC, NFKC, NFD and NFKD, per-character lowercasing and the few general
// categories BERT's pipeline tests, for the tokenizer's normalizers. Not a Unicode library: code points
// in, code points out, from generated tables.
#pragma once
#include <cstdint>
#include <vector>

namespace attn {

// The text in normalization form C (canonical) or KC (compatibility), as Hugging Face's NFC / NFKC
// normalizers give it: decompose, order the combining marks, compose.
std::vector<std::uint32_t> to_nfc(const std::vector<std::uint32_t>& text);
std::vector<std::uint32_t> to_nfkc(const std::vector<std::uint32_t>& text);
// Forms D and KD: decompose and order the combining marks, without composing again.
std::vector<std::uint32_t> to_nfd(const std::vector<std::uint32_t>& text);
std::vector<std::uint32_t> to_nfkd(const std::vector<std::uint32_t>& text);
// Each character replaced by its lowercase, one character at a time (as Rust's char::to_lowercase,
// which Hugging Face's Lowercase uses: no context rule such as Greek final sigma).
std::vector<std::uint32_t> to_lowercase(const std::vector<std::uint32_t>& text);

// The general categories that BERT's normalizer and pre-tokenizer ask about, as Hugging Face's
// tokenizers has them: Unicode 8.0's (tools/gen_unicode_norm.py says how); every other category is Other.
enum class CharCategory : std::uint8_t {
  Other,
  NonspacingMark,  // Mn: what BertNormalizer's strip_accents drops after NFD
  OtherMark,       // Mc, Me: a mark too (the StripAccents normalizer drops every mark)
  Punctuation,     // Pc, Pd, Ps, Pe, Pi, Pf, Po
  Control,         // Cc, Cf, Co: what BertNormalizer's clean_text drops (but tab, newline, CR)
  LaterMark,       // a mark since Unicode 9.0: Other to BERT's categories, a mark to StripAccents
};
CharCategory char_category(std::uint32_t cp);

}  // namespace attn
