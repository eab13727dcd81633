// GPT-2's byte-level BPE and a word-level tokenizer: pre-tokenisation, byte-to-unicode map,
// merges by rank, and readable token text (also of the pipeline's BPE and WordPiece models). Not a
// file parser (src/api/tokenizer_files.cpp is).
#include "bpe.h"

#include <algorithm>
#include <cstdint>
#include <queue>
#include <stdexcept>

#include "unicode_ranges.h"  // generated at build time by tools/gen_unicode_ranges.py
#include "utf8.h"

namespace attn {
namespace {

// ---- UTF-8 (src/core/utf8.h) ------------------------------------------------------------------

using utf8::append;
std::size_t utf8_sequence(const std::string& s, std::size_t i, std::uint32_t* cp) { return utf8::sequence(s, i, cp); }
void append_utf8(std::string& out, std::uint32_t cp) { append(out, cp); }

struct CodePoint {
  std::uint32_t cp;
  std::size_t offset;  // byte offset in the text
};

// The text as code points; refuses invalid UTF-8 and text over the limit.
std::vector<CodePoint> decode_text(const std::string& text) {
  if (text.size() > kMaxModelTextBytes)
    throw std::invalid_argument("text: " + std::to_string(text.size()) + " bytes is over the limit of " +
                                std::to_string(kMaxModelTextBytes) + " bytes");
  std::vector<CodePoint> cps;
  cps.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    std::uint32_t cp = 0;
    const std::size_t len = utf8_sequence(text, i, &cp);
    if (len == 0) throw std::invalid_argument("text: not valid UTF-8 at byte " + std::to_string(i));
    cps.push_back({cp, i});
    i += len;
  }
  return cps;
}

// ---- character classes (JavaScript's \p{L}, \p{N}, \s) --------------------------------------

enum class CharClass : std::uint8_t { Letter, Number, Space, Other };

CharClass classify(std::uint32_t cp) {
  if (cp < 0x80) {  // the common case without a search
    if ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z') return CharClass::Letter;
    if (cp >= '0' && cp <= '9') return CharClass::Number;
    if (cp == ' ' || (cp >= 0x09 && cp <= 0x0D)) return CharClass::Space;
    return CharClass::Other;
  }
  if (unicode_ranges::contains(unicode_ranges::kLetterRanges, cp)) return CharClass::Letter;
  if (unicode_ranges::contains(unicode_ranges::kNumberRanges, cp)) return CharClass::Number;
  if (unicode_ranges::contains(unicode_ranges::kSpaceRanges, cp)) return CharClass::Space;
  return CharClass::Other;
}

// Byte ranges [begin, end) in code point indices of each GPT-2 pre-token, trying the regex's
// alternatives in its order at every position (a backtracking engine takes the first that matches).
std::vector<std::pair<std::size_t, std::size_t>> pretokenize_spans(const std::vector<CodePoint>& cps) {
  const std::size_t n = cps.size();
  std::vector<CharClass> cls(n);
  for (std::size_t i = 0; i < n; ++i) cls[i] = classify(cps[i].cp);
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  std::size_t i = 0;
  const auto at = [&](std::size_t k) { return k < n ? cps[k].cp : 0u; };
  while (i < n) {
    std::size_t end = i;
    // 's 't 're 've 'm 'll 'd (lower case only, as the regex has no i flag)
    if (at(i) == '\'') {
      const std::uint32_t a = at(i + 1), b = at(i + 2);
      if (a == 's' || a == 't' || a == 'm' || a == 'd')
        end = i + 2;
      else if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
        end = i + 3;
    }
    // ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+': an optional plain space, then a run of one class
    if (end == i) {
      const std::size_t start = at(i) == ' ' ? i + 1 : i;
      if (start < n && cls[start] != CharClass::Space) {
        const CharClass run = cls[start];
        end = start + 1;
        while (end < n && cls[end] == run) ++end;
      }
    }
    // '\s+(?!\S)' then '\s+': a whitespace run keeps its last character for the next token,
    // unless it ends the text; a lone whitespace character before a non-space stands alone
    if (end == i) {
      std::size_t run_end = i;
      while (run_end < n && cls[run_end] == CharClass::Space) ++run_end;
      if (run_end == n)
        end = n;
      else if (run_end - i >= 2)
        end = run_end - 1;
      else
        end = i + 1;
    }
    spans.emplace_back(i, end);
    i = end;
  }
  return spans;
}

using utf8::ByteMap;
using utf8::byte_map;
using utf8::hex_byte;

bool is_ascii_punct(std::uint32_t cp) {
  return (cp >= '!' && cp <= '/') || (cp >= ':' && cp <= '@') || (cp >= '[' && cp <= '`') || (cp >= '{' && cp <= '~');
}

}  // namespace

std::vector<std::string> gpt2_pretokenize(const std::string& text) {
  const std::vector<CodePoint> cps = decode_text(text);
  std::vector<std::string> pieces;
  for (const auto& [begin, end] : pretokenize_spans(cps)) {
    const std::size_t from = cps[begin].offset, to = end < cps.size() ? cps[end].offset : text.size();
    pieces.push_back(text.substr(from, to - from));
  }
  return pieces;
}

// ---- construction ---------------------------------------------------------------------------

// Shared checks: non-empty, valid UTF-8, no duplicates. Fills ids.
void detail::index_vocab(const std::vector<std::string>& vocab, std::unordered_map<std::string, int>& ids) {
  if (vocab.empty()) throw std::invalid_argument("the vocabulary is empty");
  if (vocab.size() > (1u << 24))
    throw std::invalid_argument("the vocabulary has " + std::to_string(vocab.size()) + " tokens, over the limit of 16777216");
  ids.reserve(vocab.size());
  for (std::size_t id = 0; id < vocab.size(); ++id) {
    const std::string& token = vocab[id];
    if (token.empty()) throw std::invalid_argument("token " + std::to_string(id) + " is empty");
    for (std::size_t i = 0; i < token.size();) {
      std::uint32_t cp = 0;
      const std::size_t len = utf8_sequence(token, i, &cp);
      if (len == 0) throw std::invalid_argument("token " + std::to_string(id) + " is not valid UTF-8");
      i += len;
    }
    if (!ids.emplace(token, static_cast<int>(id)).second)
      throw std::invalid_argument("token '" + printable_excerpt(token) + "' appears twice (ids " + std::to_string(ids.at(token)) + " and " +
                                  std::to_string(id) + ")");
  }
}

using detail::index_vocab;

TextTokenizer TextTokenizer::byte_level_bpe(std::vector<std::string> vocab,
                                            std::vector<std::pair<std::string, std::string>> merges) {
  TextTokenizer t;
  t.kind_ = Kind::ByteLevelBpe;
  index_vocab(vocab, t.ids_);
  t.vocab_ = std::move(vocab);
  const ByteMap& map = byte_map();
  // Bytes of each token: characters of the byte alphabet stand for their byte; any other character
  // (an added token such as a literal "<pad>") stands for its own UTF-8.
  t.bytes_.reserve(t.vocab_.size());
  for (const std::string& token : t.vocab_) {
    std::string bytes;
    for (std::size_t i = 0; i < token.size();) {
      std::uint32_t cp = 0;
      const std::size_t len = utf8_sequence(token, i, &cp);
      if (cp < 0x144 && map.cp_to_byte[cp] >= 0)
        bytes += static_cast<char>(map.cp_to_byte[cp]);
      else
        bytes.append(token, i, len);
      i += len;
    }
    t.bytes_.push_back(std::move(bytes));
  }
  for (int b = 0; b < 256; ++b) {
    std::string symbol;
    append_utf8(symbol, map.byte_to_cp[b]);
    const auto it = t.ids_.find(symbol);
    t.byte_ids_[b] = it == t.ids_.end() ? -1 : it->second;
  }
  if (merges.size() > (1u << 24))
    throw std::invalid_argument(std::to_string(merges.size()) + " merges is over the limit of 16777216");
  t.merges_.reserve(merges.size());
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const std::string& left = merges[rank].first;
    const std::string& right = merges[rank].second;
    const auto l = t.ids_.find(left), r = t.ids_.find(right), m = t.ids_.find(left + right);
    const auto refuse = [&](const std::string& what, const std::string& token) {
      throw std::invalid_argument("merge " + std::to_string(rank + 1) + " ('" + printable_excerpt(left) + "' '" +
                                  printable_excerpt(right) + "'): " + what + "'" + printable_excerpt(token) +
                                  "' is not in the vocabulary");
    };
    if (l == t.ids_.end()) refuse("", left);
    if (r == t.ids_.end()) refuse("", right);
    if (m == t.ids_.end()) refuse("the result ", left + right);
    const unsigned long long key = (static_cast<unsigned long long>(l->second) << 32) | static_cast<unsigned>(r->second);
    t.merges_[key] = Merge{static_cast<int>(rank), m->second};  // a repeated merge: the later rank wins, as in GPT-2's encoder.py
  }
  return t;
}

TextTokenizer TextTokenizer::word_level(std::vector<std::string> vocab, int unk_id, bool lowercase) {
  TextTokenizer t;
  t.kind_ = Kind::WordLevel;
  if (lowercase)
    for (const std::string& word : vocab)
      for (const char c : word)
        if (static_cast<unsigned char>(c) >= 0x80)
          throw std::invalid_argument("lowercasing is supported for an ASCII vocabulary only, and '" +
                                      printable_excerpt(word) + "' is not ASCII");
  t.lowercase_ = lowercase;
  index_vocab(vocab, t.ids_);
  if (unk_id < 0 || static_cast<std::size_t>(unk_id) >= vocab.size())
    throw std::invalid_argument("the unknown-word id " + std::to_string(unk_id) + " is not in the vocabulary (0.." +
                                std::to_string(vocab.size() - 1) + ")");
  t.unk_id_ = unk_id;
  t.bytes_ = vocab;
  t.vocab_ = std::move(vocab);
  return t;
}

// ---- encoding -------------------------------------------------------------------------------

// BPE of one pre-token, exactly GPT-2's loop: repeatedly take the adjacent pair of lowest rank and
// merge all its occurrences left to right, until no pair has a rank. Done with a heap of candidate
// pairs (rank, position) so a long word costs n log n, not n²; one rank's occurrences are merged in a
// pass before the pairs the merges create are queued, as GPT-2 does.
void TextTokenizer::bpe_piece(const std::string& piece, std::vector<int>& out) const {
  const std::size_t n = piece.size();
  std::vector<int> id(n), next(n), prev(n);
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char b = static_cast<unsigned char>(piece[i]);
    id[i] = byte_ids_[b];
    if (id[i] < 0)
      throw std::invalid_argument("text: the vocabulary has no token for the byte 0x" + hex_byte(b));
    next[i] = i + 1 < n ? static_cast<int>(i + 1) : -1;
    prev[i] = static_cast<int>(i) - 1;
  }
  struct Candidate {
    int rank, pos, left, right;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
  const auto push_pair = [&](int pos) {
    if (pos < 0 || next[pos] < 0) return;
    const int right = id[next[pos]];
    const auto it = merges_.find((static_cast<unsigned long long>(id[pos]) << 32) | static_cast<unsigned>(right));
    if (it != merges_.end()) heap.push({it->second.rank, pos, id[pos], right});
  };
  for (std::size_t i = 0; i + 1 < n; ++i) push_pair(static_cast<int>(i));
  std::vector<int> merged;
  while (!heap.empty()) {
    const int rank = heap.top().rank;
    merged.clear();
    while (!heap.empty() && heap.top().rank == rank) {
      const Candidate c = heap.top();
      heap.pop();
      // stale when either symbol changed since it was queued (merged away or grown)
      if (id[c.pos] != c.left || next[c.pos] < 0 || id[next[c.pos]] != c.right) continue;
      const int gone = next[c.pos];
      id[c.pos] = merges_.at((static_cast<unsigned long long>(c.left) << 32) | static_cast<unsigned>(c.right)).merged_id;
      id[gone] = -1;
      next[c.pos] = next[gone];
      if (next[gone] >= 0) prev[next[gone]] = c.pos;
      merged.push_back(c.pos);
    }
    for (int pos : merged) {
      push_pair(prev[pos]);
      push_pair(pos);
    }
  }
  for (int pos = 0; pos >= 0; pos = next[pos]) out.push_back(id[pos]);
}

std::vector<int> TextTokenizer::encode(const std::string& text) const {
  const std::vector<CodePoint> cps = decode_text(text);
  std::vector<int> ids;
  if (pipeline_) {
    encode_pipeline(text, ids);
    return ids;
  }
  if (kind_ == Kind::ByteLevelBpe) {
    for (const auto& [begin, end] : pretokenize_spans(cps)) {
      const std::size_t from = cps[begin].offset, to = end < cps.size() ? cps[end].offset : text.size();
      bpe_piece(text.substr(from, to - from), ids);
    }
    return ids;
  }
  // WordLevel: words between whitespace, each ASCII punctuation mark a word of its own
  std::string word;
  const auto flush = [&] {
    if (word.empty()) return;
    const auto it = ids_.find(word);
    ids.push_back(it == ids_.end() ? unk_id_ : it->second);
    word.clear();
  };
  for (std::size_t k = 0; k < cps.size(); ++k) {
    const std::uint32_t cp = cps[k].cp;
    const std::size_t len = (k + 1 < cps.size() ? cps[k + 1].offset : text.size()) - cps[k].offset;
    if (classify(cp) == CharClass::Space) {
      flush();
    } else if (is_ascii_punct(cp)) {
      flush();
      word = static_cast<char>(cp);
      flush();
    } else if (lowercase_ && cp >= 'A' && cp <= 'Z') {
      word += static_cast<char>(cp - 'A' + 'a');
    } else if (lowercase_ && cp == 0x212A) {  // KELVIN SIGN: its lowercase is 'k'
      word += 'k';
    } else {
      word.append(text, cps[k].offset, len);
    }
  }
  flush();
  return ids;
}

// ---- reading tokens back --------------------------------------------------------------------

void TextTokenizer::check_id(int id) const {
  if (id < 0 || id >= vocab_size())
    throw std::invalid_argument("token id " + std::to_string(id) + " is outside the vocabulary (0.." +
                                std::to_string(vocab_size() - 1) + ")");
}

const std::string& TextTokenizer::vocab_token(int id) const {
  check_id(id);
  return vocab_[static_cast<std::size_t>(id)];
}

std::string TextTokenizer::token_bytes(int id) const {
  check_id(id);
  return bytes_[static_cast<std::size_t>(id)];
}

std::string TextTokenizer::display(int id) const {
  // A model's rows may outnumber its tokenizer's tokens (Qwen pads its 151 669 to 151 936): such an
  // id can still come out of the LM head, and is shown for what it is.
  if (id >= vocab_size()) return "<unused " + std::to_string(id) + ">";
  check_id(id);
  if (is_special(id)) return vocab_[static_cast<std::size_t>(id)];  // <s>, <|im_start|>: as they are written
  // WordPiece: the vocabulary's spelling ("##ing"), which has no byte alphabet to undo
  const std::string& bytes = (kind_ == Kind::WordPiece ? vocab_ : bytes_)[static_cast<std::size_t>(id)];
  std::string out, loose;  // loose: bytes that are not whole characters, shown as <F0 9F>
  const auto flush_loose = [&] {
    if (loose.empty()) return;
    out += "<";
    for (std::size_t k = 0; k < loose.size(); ++k) out += (k ? " " : "") + hex_byte(static_cast<unsigned char>(loose[k]));
    out += ">";
    loose.clear();
  };
  for (std::size_t i = 0; i < bytes.size();) {
    std::uint32_t cp = 0;
    const std::size_t len = utf8_sequence(bytes, i, &cp);
    // control characters (C0 but newline and tab, DEL, C1) are invisible: shown as their bytes
    const bool control = len > 0 && ((cp < 0x20 && cp != '\n' && cp != '\t') || (cp >= 0x7F && cp < 0xA0));
    if (len == 0 || control) {
      const std::size_t take = len == 0 ? 1 : len;
      loose.append(bytes, i, take);
      i += take;
      continue;
    }
    flush_loose();
    if (cp == ' ')
      out += "\u00B7";  // ·
    else if (cp == '\n')
      out += "\u21B5";  // ↵
    else if (cp == '\t')
      out += "\u2192";  // →
    else
      out.append(bytes, i, len);
    i += len;
  }
  flush_loose();
  return out;
}

std::string TextTokenizer::decode(const std::vector<int>& ids) const {
  std::string wordpiece;
  if (kind_ == Kind::WordPiece && decode_wordpiece(ids, wordpiece)) return wordpiece;
  const bool spaced = kind_ == Kind::WordLevel || decode_joins_with_spaces();
  std::string out;
  for (std::size_t k = 0; k < ids.size(); ++k) {
    if (spaced && k) out += ' ';
    out += token_bytes(ids[k]);
  }
  decode_strip(out);
  return out;
}

}  // namespace attn

namespace attn {

std::string printable_excerpt(const std::string& s, std::size_t max_bytes) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = 0;
    std::size_t len = utf8_sequence(s, i, &cp);
    if (out.size() + std::max<std::size_t>(len, 1) > max_bytes) return out + "...";
    if (len == 0 || cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0) || cp == 0x2028 || cp == 0x2029) {
      out += '?';
      i += std::max<std::size_t>(len, 1);
    } else {
      out.append(s, i, len);
      i += len;
    }
  }
  return out;
}

}  // namespace attn
