// Unicode normalization forms NFC and NFKC, and per-character lowercasing, for the tokenizer's
// normalizers. Not a Unicode library: code points in, code points out, from generated tables.
#pragma once
#include <cstdint>
#include <vector>

namespace attn {

// The text in normalization form C (canonical) or KC (compatibility), as Hugging Face's NFC / NFKC
// normalizers give it: decompose, order the combining marks, compose.
std::vector<std::uint32_t> to_nfc(const std::vector<std::uint32_t>& text);
std::vector<std::uint32_t> to_nfkc(const std::vector<std::uint32_t>& text);
// Each character replaced by its lowercase, one character at a time (as Rust's char::to_lowercase,
// which Hugging Face's Lowercase uses: no context rule such as Greek final sigma).
std::vector<std::uint32_t> to_lowercase(const std::vector<std::uint32_t>& text);

}  // namespace attn
