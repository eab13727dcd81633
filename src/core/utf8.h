// UTF-8 helpers and GPT-2's byte-to-unicode alphabet, shared by the tokenizer's source files.
// Not a public interface: only src/core/bpe.cpp and src/core/tokenizer_pipeline.cpp include it.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <unordered_map>
#include <vector>

namespace attn::utf8 {

// Length of the well-formed UTF-8 sequence at s[i] (1-4), or 0 if it is not one (overlong forms,
// surrogates, past U+10FFFF, truncated). *cp gets the code point.
inline std::size_t sequence(const std::string& s, std::size_t i, std::uint32_t* cp) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  }
  std::size_t len = 0;
  std::uint32_t c = 0, min = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2, c = b0 & 0x1F, min = 0x80;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3, c = b0 & 0x0F, min = 0x800;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4, c = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (s.size() - i < len) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    const unsigned char b = byte(i + k);
    if ((b & 0xC0) != 0x80) return 0;
    c = (c << 6) | (b & 0x3F);
  }
  if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  *cp = c;
  return len;
}

inline void append(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

inline std::string encode(const std::uint32_t* cps, std::size_t n) {
  std::string out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) append(out, cps[i]);
  return out;
}

// The code points of well-formed UTF-8 (the caller has checked it).
inline std::vector<std::uint32_t> decode_valid(const std::string& s) {
  std::vector<std::uint32_t> out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = 0;
    const std::size_t len = sequence(s, i, &cp);
    out.push_back(len ? cp : 0xFFFD);
    i += len ? len : 1;
  }
  return out;
}

inline bool valid(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = 0;
    const std::size_t len = sequence(s, i, &cp);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

inline std::string hex_byte(unsigned char b) {
  const char* digits = "0123456789ABCDEF";
  return std::string{digits[b >> 4], digits[b & 15]};
}

// GPT-2's bytes_to_unicode(): printable Latin-1 bytes stand for themselves, the other 68 bytes are
// moved to U+0100.. in byte order, so every token is printable text.
struct ByteMap {
  std::uint32_t byte_to_cp[256];
  int cp_to_byte[0x144];
  ByteMap() {
    std::fill(std::begin(cp_to_byte), std::end(cp_to_byte), -1);
    std::uint32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      byte_to_cp[b] = printable ? static_cast<std::uint32_t>(b) : next++;
      cp_to_byte[byte_to_cp[b]] = b;
    }
  }
  int byte_of(std::uint32_t cp) const { return cp < 0x144 ? cp_to_byte[cp] : -1; }
};

inline const ByteMap& byte_map() {
  static const ByteMap map;
  return map;
}

}  // namespace attn::utf8

namespace attn::detail {
// The vocabulary's checks (non-empty, valid UTF-8, no duplicates, at most 2^24 tokens); fills ids.
void index_vocab(const std::vector<std::string>& vocab, std::unordered_map<std::string, int>& ids);
}  // namespace attn::detail
