// Hugging Face's tokenizer pipeline inside TextTokenizer: added tokens matched first, then per piece
// the normalizers, the pre-tokenizers and the BPE or WordPiece model, then the template. Not a file parser.
//
// [SECTION] the pipeline's built state     [SECTION] added tokens     [SECTION] normalizers
// [SECTION] pre-tokenizers                 [SECTION] the BPE model    [SECTION] the WordPiece model
// [SECTION] construction
#include <algorithm>
#include <queue>
#include <stdexcept>
#include <unordered_map>

#include "bpe.h"
#include "token_regex.h"
#include "unicode_norm.h"
#include "utf8.h"

namespace attn {

using Codes = std::vector<std::uint32_t>;
using Spans = std::vector<std::pair<std::size_t, std::size_t>>;

// ---- [SECTION] the pipeline's built state ---------------------------------------------------

namespace {

// Byte trie of added tokens' texts: at a position, the longest token that starts there.
struct Trie {
  std::unordered_map<std::uint64_t, int> edges;  // (node << 8 | byte) → child node
  std::vector<int> token;                        // node → index in the added list, or -1
  Trie() : token(1, -1) {}
  void add(const std::string& text, int index) {
    int node = 0;
    for (unsigned char b : text) {
      const std::uint64_t key = (static_cast<std::uint64_t>(node) << 8) | b;
      const auto it = edges.find(key);
      if (it != edges.end()) {
        node = it->second;
      } else {
        token.push_back(-1);
        node = static_cast<int>(token.size()) - 1;
        edges.emplace(key, node);
      }
    }
    if (token[node] < 0) token[node] = index;  // the first of two equal texts wins
  }
  // The longest token starting at s[i]: its index, and *len its length in bytes; -1 when none.
  // *steps (when given) grows by the bytes walked.
  int longest_at(const std::string& s, std::size_t i, std::size_t* len, long long* steps = nullptr) const {
    int node = 0, best = -1;
    for (std::size_t k = i; k < s.size(); ++k) {
      if (steps) ++*steps;
      const auto it = edges.find((static_cast<std::uint64_t>(node) << 8) | static_cast<unsigned char>(s[k]));
      if (it == edges.end()) break;
      node = it->second;
      if (token[node] >= 0) best = token[node], *len = k + 1 - i;
    }
    return best;
  }
  bool empty() const { return edges.empty(); }
};

// GPT-2's pre-tokenizer pattern, as the ByteLevel pre-tokenizer's use_regex applies it.
const char* const kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

}  // namespace

struct TextTokenizer::Pipeline {
  TokenizerPipeline spec;
  int model_size = 0;
  Trie raw_trie, normalized_trie;     // added tokens matched before / after normalization
  std::vector<int> char_ids_bmp;      // id of the token that is this one character (U+0000..U+FFFF), or -1
  std::unordered_map<std::uint32_t, int> char_ids_astral;
  int fallback_ids[256];              // id of <0xHH>, or -1
  std::vector<bool> special;          // per id
  std::shared_ptr<const TokenRegex> gpt2;
  // WordPiece: every token of the model (a word's first piece), and the continuations without their
  // prefix ("##ing" as "ing"); a node's index is the token's id.
  Trie word_starts, word_pieces;

  int char_id(std::uint32_t cp) const {
    if (cp < 0x10000) return char_ids_bmp[cp];
    const auto it = char_ids_astral.find(cp);
    return it == char_ids_astral.end() ? -1 : it->second;
  }
};

namespace {

using Pipeline = TokenizerPipeline;

struct Piece {
  Codes cps;
  bool at_origin;  // starts where the whole text starts (Metaspace's "first" scheme asks)
};

long long regex_budget(std::size_t n) { return 400LL * static_cast<long long>(n) + 100000; }

// Each non-overlapping occurrence of from (left to right) replaced by to, as Rust's str::replace.
std::string replace_text(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    if (s.compare(i, from.size(), from) == 0) {
      out += to;
      i += from.size();
    } else {
      out += s[i++];
    }
  }
  return out;
}

// Rust's char::is_ascii_punctuation: ! to /, : to @, [ to `, { to ~ (symbols such as $ + < = > ^ | ~ too).
bool is_ascii_punctuation(std::uint32_t c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

// ---- [SECTION] added tokens -----------------------------------------------------------------

struct Segment {
  std::size_t begin, end;
  int added;  // index in the added list, or -1 for text between tokens
};

std::size_t previous_char_start(const std::string& s, std::size_t i) {
  do --i;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80);
  return i;
}

bool is_word_char(std::uint32_t cp) {
  // Rust's char::is_alphanumeric (Alphabetic or Numeric), approximated by letters and numbers
  static const TokenRegex word("[\\p{L}\\p{N}]");
  Spans found;
  long long budget = 100;
  word.find_all(&cp, 1, found, &budget);
  return !found.empty();
}

// Hugging Face's AddedVocabulary::find_matches: leftmost-longest matches, then single_word, lstrip
// and rstrip as the library checks them. Every byte of s lands in exactly one segment.
std::vector<Segment> split_added(const std::string& s, const Trie& trie, const std::vector<Pipeline::AddedToken>& added) {
  std::vector<Segment> out;
  if (trie.empty() || s.empty()) {
    if (!s.empty()) out.push_back({0, s.size(), -1});
    return out;
  }
  std::size_t start_offset = 0;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = 0;
    const int k = trie.longest_at(s, i, &len);
    if (k < 0) {
      ++i;
      continue;
    }
    std::size_t start = i, stop = i + len;
    i = stop;  // the next search starts after this match, whatever is stripped
    const Pipeline::AddedToken& token = added[static_cast<std::size_t>(k)];
    if (token.single_word) {
      std::uint32_t before = 0, after = 0;
      bool word_before = false, word_after = false;
      if (start > 0) {
        utf8::sequence(s, previous_char_start(s, start), &before);
        word_before = is_word_char(before);
      }
      if (stop < s.size()) {
        utf8::sequence(s, stop, &after);
        word_after = is_word_char(after);
      }
      if (word_before || word_after) continue;
    }
    if (token.lstrip) {
      std::size_t j = start;
      while (j > 0) {
        const std::size_t p = previous_char_start(s, j);
        std::uint32_t cp = 0;
        utf8::sequence(s, p, &cp);
        if (!is_unicode_white_space(cp)) break;
        j = p;
      }
      start = std::max(j, start_offset);
    }
    if (token.rstrip) {
      std::uint32_t cp = 0;
      std::size_t l = 0;
      while (stop < s.size() && (l = utf8::sequence(s, stop, &cp)) > 0 && is_unicode_white_space(cp)) stop += l;
    }
    if (start < start_offset) start = start_offset;  // an earlier rstrip took these bytes already
    if (start > start_offset) out.push_back({start_offset, start, -1});
    out.push_back({start, stop, k});
    start_offset = stop;
    i = std::max(i, stop);
  }
  if (start_offset < s.size()) out.push_back({start_offset, s.size(), -1});
  return out;
}

// ---- [SECTION] normalizers ------------------------------------------------------------------

// A normalized text may grow (NFKC, Replace with a longer text) but not without bound.
constexpr std::size_t kMaxNormalizedLength = 4 * kMaxModelTextBytes;
void check_growth(std::size_t length) {
  if (length > kMaxNormalizedLength)
    throw std::invalid_argument("text: the normalizers make it over " + std::to_string(kMaxNormalizedLength) + " characters");
}

// Each non-overlapping occurrence of `from` (left to right) replaced by `to`.
Codes replace_all(const Codes& text, const Codes& from, const Codes& to) {
  if (from.empty() || text.size() < from.size()) return text;
  Codes out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (i + from.size() <= text.size() && std::equal(from.begin(), from.end(), text.begin() + static_cast<std::ptrdiff_t>(i))) {
      check_growth(out.size() + to.size());
      out.insert(out.end(), to.begin(), to.end());
      i += from.size();
    } else {
      out.push_back(text[i++]);
    }
  }
  return out;
}

// BertNormalizer's CJK ideographs (the CJK Unified Ideographs blocks and extensions A-E, the
// compatibility ideographs): each gets a space on both sides. Not Hangul, kana or CJK punctuation.
bool is_cjk_ideograph(std::uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

// Rust's char::is_whitespace (Unicode White_Space), with tab, newline and CR named as BERT's code does.
bool is_bert_space(std::uint32_t cp) { return cp == '\t' || cp == '\n' || cp == '\r' || is_unicode_white_space(cp); }

Codes bert_normalize(const Codes& text, const Pipeline::Normalizer& step) {
  Codes out;
  out.reserve(text.size());
  for (std::uint32_t cp : text) {
    if (step.clean_text) {
      // dropped: NUL, the replacement character, and Cc / Cf / Co but tab, newline and CR
      if (cp == 0 || cp == 0xFFFD) continue;
      if (cp != '\t' && cp != '\n' && cp != '\r' && char_category(cp) == CharCategory::Control) continue;
      if (is_bert_space(cp)) cp = ' ';
    }
    if (step.handle_chinese_chars && is_cjk_ideograph(cp)) {
      check_growth(out.size() + 3);
      out.insert(out.end(), {' ', cp, ' '});
    } else {
      out.push_back(cp);
    }
  }
  if (step.strip_accents) {
    out = to_nfd(out);
    out.erase(std::remove_if(out.begin(), out.end(), [](std::uint32_t c) { return char_category(c) == CharCategory::NonspacingMark; }),
              out.end());
  }
  if (step.lowercase) out = to_lowercase(out);
  return out;
}

Codes normalize(Codes text, const std::vector<Pipeline::Normalizer>& steps, long long* budget) {
  for (const auto& step : steps) {
    using T = Pipeline::Normalizer::Type;
    switch (step.type) {
      case T::NFC: text = to_nfc(text); break;
      case T::NFKC: text = to_nfkc(text); break;
      case T::NFD: text = to_nfd(text); break;
      case T::NFKD: text = to_nfkd(text); break;
      case T::Lowercase: text = to_lowercase(text); break;
      case T::StripAccents:  // every mark (Mn, Mc, Me) of Unicode 9.0, as the library's is_combining_mark
        text.erase(std::remove_if(text.begin(), text.end(),
                                  [](std::uint32_t c) {
                                    const CharCategory k = char_category(c);
                                    return k == CharCategory::NonspacingMark || k == CharCategory::OtherMark || k == CharCategory::LaterMark;
                                  }),
                   text.end());
        break;
      case T::Bert: text = bert_normalize(text, step); break;
      case T::Prepend:
        if (!text.empty()) {
          const Codes p = utf8::decode_valid(step.text);
          text.insert(text.begin(), p.begin(), p.end());
        }
        break;
      case T::Replace: {
        const Codes content = utf8::decode_valid(step.content);
        if (!step.regex) {
          text = replace_all(text, utf8::decode_valid(step.text), content);
          break;
        }
        Spans found;
        step.regex->find_all(text.data(), text.size(), found, budget);
        Codes out;
        std::size_t prev = 0;
        for (const auto& [b, e] : found) {
          check_growth(out.size() + (b - prev) + content.size());
          out.insert(out.end(), text.begin() + static_cast<std::ptrdiff_t>(prev), text.begin() + static_cast<std::ptrdiff_t>(b));
          out.insert(out.end(), content.begin(), content.end());
          prev = e;
        }
        out.insert(out.end(), text.begin() + static_cast<std::ptrdiff_t>(prev), text.end());
        text = std::move(out);
        break;
      }
    }
    check_growth(text.size());
  }
  return text;
}

// ---- [SECTION] pre-tokenizers ---------------------------------------------------------------

// Occurrences of a literal (left to right, non-overlapping), as a String pattern finds them.
Spans find_literal(const Codes& text, const Codes& needle) {
  Spans out;
  if (needle.empty()) return out;
  for (std::size_t i = 0; i + needle.size() <= text.size();) {
    if (std::equal(needle.begin(), needle.end(), text.begin() + static_cast<std::ptrdiff_t>(i))) {
      out.emplace_back(i, i + needle.size());
      i += needle.size();
    } else {
      ++i;
    }
  }
  return out;
}

// NormalizedString::split: the matches and the text between them, flagged, then the behaviour.
Spans split_by(std::size_t n, const Spans& matches, Pipeline::Behavior behavior, bool invert) {
  struct Part {
    std::size_t b, e;
    bool match;
  };
  std::vector<Part> parts;
  std::size_t prev = 0;
  for (const auto& [b, e] : matches) {
    if (prev != b) parts.push_back({prev, b, false});
    parts.push_back({b, e, true});
    prev = e;
  }
  if (prev != n) parts.push_back({prev, n, false});
  if (invert)
    for (Part& p : parts) p.match = !p.match;
  Spans out;
  using B = Pipeline::Behavior;
  bool previous_match = false;
  switch (behavior) {
    case B::Isolated:
      for (const Part& p : parts) out.emplace_back(p.b, p.e);
      break;
    case B::Removed:
      for (const Part& p : parts)
        if (!p.match) out.emplace_back(p.b, p.e);
      break;
    case B::MergedWithPrevious:
      for (const Part& p : parts) {
        if (p.match && !previous_match && !out.empty()) out.back().second = p.e;
        else out.emplace_back(p.b, p.e);
        previous_match = p.match;
      }
      break;
    case B::MergedWithNext:
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
        if (it->match && !previous_match && !out.empty()) out.back().first = it->b;
        else out.emplace_back(it->b, it->e);
        previous_match = it->match;
      }
      std::reverse(out.begin(), out.end());
      break;
    case B::Contiguous:
      for (const Part& p : parts) {
        if (p.match == previous_match && !out.empty()) out.back().second = p.e;
        else out.emplace_back(p.b, p.e);
        previous_match = p.match;
      }
      break;
  }
  return out;
}

void cut(const Piece& piece, const Spans& spans, std::vector<Piece>& out) {
  for (const auto& [b, e] : spans) {
    if (e <= b) continue;  // empty pieces are dropped, as PreTokenizedString::split does
    out.push_back({Codes(piece.cps.begin() + static_cast<std::ptrdiff_t>(b), piece.cps.begin() + static_cast<std::ptrdiff_t>(e)),
                   piece.at_origin && b == 0});
  }
}

void pre_tokenize(const Pipeline::PreTokenizer& step, const TokenRegex* gpt2, std::vector<Piece>& pieces, long long* budget) {
  using T = Pipeline::PreTokenizer::Type;
  std::vector<Piece> out;
  for (Piece& piece : pieces) {
    switch (step.type) {
      case T::ByteLevel: {
        if (step.add_prefix_space && (piece.cps.empty() || piece.cps[0] != ' ')) piece.cps.insert(piece.cps.begin(), ' ');
        std::vector<Piece> split;
        if (step.use_regex) {
          Spans found;
          gpt2->find_all(piece.cps.data(), piece.cps.size(), found, budget);
          cut(piece, split_by(piece.cps.size(), found, Pipeline::Behavior::Isolated, false), split);
        } else {
          split.push_back(std::move(piece));
        }
        const utf8::ByteMap& map = utf8::byte_map();
        for (Piece& p : split) {  // each byte of the UTF-8 becomes its character of the byte alphabet
          const std::string bytes = utf8::encode(p.cps.data(), p.cps.size());
          p.cps.clear();
          for (unsigned char b : bytes) p.cps.push_back(map.byte_to_cp[b]);
          out.push_back(std::move(p));
        }
        break;
      }
      case T::Split: {
        Spans found;
        if (step.regex) step.regex->find_all(piece.cps.data(), piece.cps.size(), found, budget);
        else found = find_literal(piece.cps, utf8::decode_valid(step.pattern));
        cut(piece, split_by(piece.cps.size(), found, step.behavior, step.invert), out);
        break;
      }
      case T::Bert:
      case T::WhitespaceSplit: {
        // whitespace runs are removed; with Bert each punctuation character is a piece of its own
        // (ASCII's punctuation, which counts $ + < = > ^ ` | ~ too, and Unicode's P* categories)
        const bool bert = step.type == T::Bert;
        Spans spans;
        std::size_t begin = 0;
        for (std::size_t i = 0; i <= piece.cps.size(); ++i) {
          const std::uint32_t c = i < piece.cps.size() ? piece.cps[i] : ' ';
          const bool space = is_unicode_white_space(c);
          const bool punct = bert && !space && (is_ascii_punctuation(c) || char_category(c) == CharCategory::Punctuation);
          if (!space && !punct) continue;
          if (i > begin) spans.emplace_back(begin, i);
          if (punct) spans.emplace_back(i, i + 1);
          begin = i + 1;
        }
        cut(piece, spans, out);
        break;
      }
      case T::Metaspace: {
        for (std::uint32_t& c : piece.cps)
          if (c == ' ') c = step.replacement;
        using P = Pipeline::PreTokenizer::Prepend;
        const bool starts = !piece.cps.empty() && piece.cps[0] == step.replacement;
        if ((step.prepend == P::Always && !starts) || (step.prepend == P::First && !starts && piece.at_origin))
          piece.cps.insert(piece.cps.begin(), step.replacement);
        if (step.split) {
          cut(piece, split_by(piece.cps.size(), find_literal(piece.cps, {step.replacement}), Pipeline::Behavior::MergedWithNext, false),
              out);
        } else {
          out.push_back(std::move(piece));
        }
        break;
      }
    }
  }
  pieces.clear();
  for (Piece& p : out)
    if (!p.cps.empty()) pieces.push_back(std::move(p));
}

}  // namespace

// ---- [SECTION] the BPE model ----------------------------------------------------------------

// Hugging Face's BPE on one pre-token: each character is a token, or its bytes as <0xHH> tokens
// (byte_fallback), or the unknown token (fused with its neighbours when fuse_unk); then the pair of
// lowest rank (leftmost on a tie) is merged, one merge at a time, until no pair has a rank.
void TextTokenizer::bpe_word(const Codes& word, std::vector<int>& out) const {
  const Pipeline& p = *pipeline_;
  const TokenizerPipeline& spec = p.spec;
  if (word.empty()) return;
  if (spec.ignore_merges) {
    const auto it = ids_.find(utf8::encode(word.data(), word.size()));
    if (it != ids_.end() && it->second < p.model_size) {
      out.push_back(it->second);
      return;
    }
  }
  const bool affixes = !spec.continuing_subword_prefix.empty() || !spec.end_of_word_suffix.empty();
  std::vector<int> symbols;
  symbols.reserve(word.size());
  bool pending_unk = false;
  for (std::size_t k = 0; k < word.size(); ++k) {
    int id = -1;
    std::string text;
    if (affixes || spec.byte_fallback) {
      if (k > 0) text += spec.continuing_subword_prefix;
      utf8::append(text, word[k]);
      if (k + 1 == word.size()) text += spec.end_of_word_suffix;
    }
    if (!affixes) {
      id = p.char_id(word[k]);
    } else {
      const auto it = ids_.find(text);
      if (it != ids_.end() && it->second < p.model_size) id = it->second;
    }
    if (id >= 0) {
      if (pending_unk) symbols.push_back(spec.unk_id), pending_unk = false;
      symbols.push_back(id);
      continue;
    }
    if (spec.byte_fallback) {
      bool all = true;
      for (unsigned char b : text) all = all && p.fallback_ids[b] >= 0;
      if (all) {  // (a pending unknown token stays pending across them, as in the library)
        for (unsigned char b : text) symbols.push_back(p.fallback_ids[b]);
        continue;
      }
    }
    if (spec.unk_id >= 0) {
      if (pending_unk && !spec.fuse_unk) symbols.push_back(spec.unk_id);
      pending_unk = true;
    }
  }
  if (pending_unk) symbols.push_back(spec.unk_id);

  const int n = static_cast<int>(symbols.size());
  std::vector<int> prev(static_cast<std::size_t>(n)), next(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) prev[i] = i - 1, next[i] = i + 1 < n ? i + 1 : -1;
  struct Candidate {
    int rank, pos, merged;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
  const auto find = [&](int left, int right) {
    return merges_.find((static_cast<unsigned long long>(static_cast<unsigned>(left)) << 32) | static_cast<unsigned>(right));
  };
  const auto push = [&](int pos) {
    if (pos < 0 || next[pos] < 0) return;
    const auto it = find(symbols[pos], symbols[next[pos]]);
    if (it != merges_.end()) heap.push({it->second.rank, pos, it->second.merged_id});
  };
  for (int i = 0; i + 1 < n; ++i) push(i);
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    if (symbols[c.pos] < 0 || next[c.pos] < 0) continue;  // merged away, or now the last symbol
    const int right = next[c.pos];
    const auto it = find(symbols[c.pos], symbols[right]);
    if (it == merges_.end() || it->second.merged_id != c.merged) continue;  // an expired entry
    symbols[c.pos] = c.merged;
    symbols[right] = -1;
    next[c.pos] = next[right];
    if (next[right] >= 0) prev[next[right]] = c.pos;
    push(prev[c.pos]);
    push(c.pos);
  }
  for (int id : symbols)
    if (id >= 0) out.push_back(id);
}

// ---- [SECTION] the WordPiece model ---------------------------------------------------------

// Hugging Face's WordPiece on one pre-token: from the word's start, the longest token that the text
// there begins with (a word start as spelled; later, a continuation, found without its prefix), again
// and again to the end. A word with no such token at some point, or longer than max_input_chars_per_word
// characters, is the unknown token as a whole. The tries find the longest match in one walk, so a long
// word costs (length × the longest token), not a lookup for every substring; the walks draw on the
// text's step budget, so a hostile file (a huge max_input_chars_per_word and a huge token) cannot hang.
void TextTokenizer::wordpiece_word(const Codes& word, std::vector<int>& out, long long* budget) const {
  const Pipeline& p = *pipeline_;
  const TokenizerPipeline& spec = p.spec;
  if (word.empty()) return;
  if (word.size() > spec.max_input_chars_per_word) {
    out.push_back(spec.unk_id);
    return;
  }
  const std::string text = utf8::encode(word.data(), word.size());
  const std::size_t first = out.size();
  for (std::size_t i = 0; i < text.size();) {
    std::size_t len = 0;
    long long steps = 0;
    const int id = (i == 0 ? p.word_starts : p.word_pieces).longest_at(text, i, &len, &steps);
    if ((*budget -= steps) < 0)
      throw std::invalid_argument("text: the WordPiece model needs too many steps for a word of " + std::to_string(word.size()) +
                                  " characters");
    if (id < 0) {
      out.resize(first);
      out.push_back(spec.unk_id);
      return;
    }
    out.push_back(id);
    i += len;
  }
}

bool TextTokenizer::decode_wordpiece(const std::vector<int>& ids, std::string& out) const {
  if (!pipeline_ || !pipeline_->spec.decoder.wordpiece) return false;
  const TokenizerPipeline::Decoder& decoder = pipeline_->spec.decoder;
  const std::string& prefix = decoder.wordpiece_prefix;
  // the library's cleanup, applied to each token (with its leading space) on its own
  static const std::pair<const char*, const char*> kCleanup[] = {
      {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"},
      {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  std::string text;
  for (std::size_t k = 0; k < ids.size(); ++k) {
    std::string token = vocab_token(ids[k]);
    if (k > 0) {
      if (!prefix.empty() && token.compare(0, prefix.size(), prefix) == 0) token.erase(0, prefix.size());
      else token.insert(0, " ");
    }
    if (decoder.cleanup)
      for (const auto& [from, to] : kCleanup) token = replace_text(token, from, to);
    text += token;
  }
  out = std::move(text);
  return true;
}

void TextTokenizer::encode_pipeline(const std::string& text, std::vector<int>& ids) const {
  const Pipeline& p = *pipeline_;
  const TokenizerPipeline& spec = p.spec;
  long long budget = regex_budget(text.size());
  std::vector<Piece> pieces;
  // pass 1: added tokens that are matched in the raw text (normalized: false)
  for (const Segment& raw : split_added(text, p.raw_trie, spec.added)) {
    if (raw.added >= 0) {
      ids.push_back(spec.added[static_cast<std::size_t>(raw.added)].id);
      continue;
    }
    // pass 2: the text between them normalized, then the added tokens matched in normalized text
    const Codes normalized = normalize(utf8::decode_valid(text.substr(raw.begin, raw.end - raw.begin)), spec.normalizers, &budget);
    const std::string normalized_text = utf8::encode(normalized.data(), normalized.size());
    for (const Segment& seg : split_added(normalized_text, p.normalized_trie, spec.added)) {
      if (seg.added >= 0) {
        ids.push_back(spec.added[static_cast<std::size_t>(seg.added)].id);
        continue;
      }
      // pass 3: the pre-tokenizers cut the piece, the model tokenizes each part
      pieces.clear();
      pieces.push_back({utf8::decode_valid(normalized_text.substr(seg.begin, seg.end - seg.begin)), raw.begin == 0 && seg.begin == 0});
      for (const auto& step : spec.pre_tokenizers) pre_tokenize(step, p.gpt2.get(), pieces, &budget);
      const bool wordpiece = spec.model == TokenizerPipeline::Model::WordPiece;
      for (const Piece& piece : pieces) wordpiece ? wordpiece_word(piece.cps, ids, &budget) : bpe_word(piece.cps, ids);
    }
  }
}

std::vector<int> TextTokenizer::encode(const std::string& text, bool add_special) const {
  std::vector<int> ids = encode(text);
  if (!add_special || !pipeline_) return ids;
  const TokenizerPipeline& spec = pipeline_->spec;
  std::vector<int> out(spec.template_before);
  out.insert(out.end(), ids.begin(), ids.end());
  out.insert(out.end(), spec.template_after.begin(), spec.template_after.end());
  return out;
}

int TextTokenizer::bos_id() const {
  return pipeline_ && !pipeline_->spec.template_before.empty() ? pipeline_->spec.template_before.front() : -1;
}

bool TextTokenizer::is_special(int id) const {
  check_id(id);
  return pipeline_ && pipeline_->special[static_cast<std::size_t>(id)];
}

int TextTokenizer::special_id(const std::string& content) const {
  const auto it = ids_.find(content);
  return it != ids_.end() && is_special(it->second) ? it->second : -1;
}

int TextTokenizer::mask_id() const {
  const int bert = special_id("[MASK]");
  return bert >= 0 ? bert : special_id("<mask>");
}

// ---- [SECTION] construction -----------------------------------------------------------------

namespace {

// What a token stands for in decoded text, by the decoder's per-token steps.
std::string decoded_bytes(const std::string& token, const TokenizerPipeline::Decoder& decoder) {
  if (decoder.byte_level) {
    const utf8::ByteMap& map = utf8::byte_map();
    std::string bytes;
    for (std::size_t i = 0; i < token.size();) {
      std::uint32_t cp = 0;
      const std::size_t len = utf8::sequence(token, i, &cp);
      const int b = map.byte_of(cp);
      if (b < 0) return token;  // a character outside the byte alphabet: the token is its own text
      bytes += static_cast<char>(b);
      i += len;
    }
    return bytes;
  }
  std::string s = token;
  for (const auto& [from, to] : decoder.replaces) s = replace_text(s, from, to);
  if (decoder.byte_fallback && s.size() == 6 && s.compare(0, 3, "<0x") == 0 && s[5] == '>') {
    const auto hex = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
    const int hi = hex(s[3]), lo = hex(s[4]);
    if (hi >= 0 && lo >= 0) return std::string(1, static_cast<char>(hi * 16 + lo));
  }
  return s;
}

}  // namespace

bool TextTokenizer::decode_joins_with_spaces() const { return pipeline_ && pipeline_->spec.decoder.join_with_spaces; }

// The Strip decoder after Fuse: up to strip_start copies of the character off the front, strip_stop off the end.
void TextTokenizer::decode_strip(std::string& text) const {
  if (!pipeline_) return;
  const TokenizerPipeline::Decoder& decoder = pipeline_->spec.decoder;
  std::string c;
  utf8::append(c, decoder.strip_char);
  for (int k = 0; k < decoder.strip_start && text.compare(0, c.size(), c) == 0; ++k) text.erase(0, c.size());
  for (int k = 0; k < decoder.strip_stop && text.size() >= c.size() && text.compare(text.size() - c.size(), c.size(), c) == 0; ++k)
    text.erase(text.size() - c.size());
}

TextTokenizer TextTokenizer::from_pipeline(TokenizerPipeline spec) {
  TextTokenizer t;
  const bool wordpiece = spec.model == TokenizerPipeline::Model::WordPiece;
  t.kind_ = wordpiece ? Kind::WordPiece : Kind::ByteLevelBpe;
  auto p = std::make_shared<Pipeline>();
  // the model's vocabulary (checked by the same rules as GPT-2's), then the added tokens past it
  std::unordered_map<std::string, int> model_ids;
  detail::index_vocab(spec.vocab, model_ids);  // empty, duplicate, invalid UTF-8 tokens refused
  p->model_size = static_cast<int>(spec.vocab.size());
  t.vocab_ = std::move(spec.vocab);
  int max_added = -1;
  for (std::size_t k = 0; k < spec.added.size(); ++k) {
    TokenizerPipeline::AddedToken& a = spec.added[k];
    if (a.content.empty() || !utf8::valid(a.content))
      throw std::invalid_argument("added token " + std::to_string(a.id) + " is empty or not valid UTF-8");
    const auto in_model = model_ids.find(a.content);
    // the library's own numbering: a token of the model keeps its id, a new one goes after the others
    const int expected = in_model != model_ids.end() ? in_model->second
                         : max_added >= p->model_size ? max_added + 1
                                                      : p->model_size;
    if (a.id != expected && in_model == model_ids.end() && a.id >= 0 && a.id < p->model_size)
      throw std::invalid_argument("added token " + std::to_string(a.id) + " is '" + printable_excerpt(a.content) +
                                  "' but the vocabulary has '" + printable_excerpt(t.vocab_[static_cast<std::size_t>(a.id)]) + "' there");
    if (a.id != expected)
      throw std::invalid_argument("added token '" + printable_excerpt(a.content) + "' has the id " + std::to_string(a.id) +
                                  (in_model != model_ids.end() ? ", but it is token " : ", outside the vocabulary and not the next free id, ") +
                                  std::to_string(expected) + " (the id Hugging Face's tokenizers would give it)");
    if (in_model == model_ids.end()) {
      if (t.vocab_.size() >= (1u << 24)) throw std::invalid_argument("too many added tokens");
      t.vocab_.push_back(a.content);
    }
    max_added = std::max(max_added, a.id);
  }
  // ids_ holds every token (added ones too, for ignore_merges' and the loader's lookups)
  for (const auto& a : spec.added) model_ids.emplace(a.content, a.id);
  t.ids_ = std::move(model_ids);
  const auto& all_ids = t.ids_;
  p->special.assign(t.vocab_.size(), false);
  for (const auto& a : spec.added) p->special[static_cast<std::size_t>(a.id)] = a.special;

  // added-token tries: the normalized ones match the normalized form of their own text
  for (std::size_t k = 0; k < spec.added.size(); ++k) {
    const auto& a = spec.added[k];
    if (!a.normalized) {
      p->raw_trie.add(a.content, static_cast<int>(k));
    } else {
      long long budget = regex_budget(a.content.size());
      const Codes n = normalize(utf8::decode_valid(a.content), spec.normalizers, &budget);
      if (!n.empty()) p->normalized_trie.add(utf8::encode(n.data(), n.size()), static_cast<int>(k));
    }
  }

  // single characters and <0xHH> byte tokens of the model
  p->char_ids_bmp.assign(0x10000, -1);
  for (int id = 0; id < p->model_size; ++id) {
    const std::string& token = t.vocab_[static_cast<std::size_t>(id)];
    std::uint32_t cp = 0;
    if (utf8::sequence(token, 0, &cp) != token.size()) continue;
    if (cp < 0x10000) p->char_ids_bmp[cp] = id;
    else p->char_ids_astral[cp] = id;
  }
  for (int b = 0; b < 256; ++b) {
    const auto it = all_ids.find("<0x" + utf8::hex_byte(static_cast<unsigned char>(b)) + ">");
    p->fallback_ids[b] = it == all_ids.end() || it->second >= p->model_size ? -1 : it->second;
  }
  if (spec.unk_id >= p->model_size) throw std::invalid_argument("the unk_token is not in the model's vocabulary");
  if (wordpiece) {
    // the library looks the unk token up only when a word fails; refused here, before any text
    if (spec.unk_id < 0) throw std::invalid_argument("the WordPiece model's unk_token is not in its vocabulary");
    if (!spec.merges.empty()) throw std::invalid_argument("a WordPiece model has no merges");
    const std::string& prefix = spec.continuing_subword_prefix;
    for (int id = 0; id < p->model_size; ++id) {
      const std::string& token = t.vocab_[static_cast<std::size_t>(id)];
      p->word_starts.add(token, id);
      if (token.size() > prefix.size() && token.compare(0, prefix.size(), prefix) == 0) p->word_pieces.add(token.substr(prefix.size()), id);
    }
    t.unk_id_ = spec.unk_id;
  }

  // merges: parts and result in the model's vocabulary (a continuing_subword_prefix comes off the right part)
  if (spec.merges.size() > (1u << 24))
    throw std::invalid_argument(std::to_string(spec.merges.size()) + " merges is over the limit of 16777216");
  t.merges_.reserve(spec.merges.size());
  const std::string& prefix = spec.continuing_subword_prefix;
  for (std::size_t rank = 0; rank < spec.merges.size(); ++rank) {
    const auto& [left, right] = spec.merges[rank];
    const auto refuse = [&](const std::string& what) {
      throw std::invalid_argument("merge " + std::to_string(rank + 1) + ": " + what);
    };
    const auto l = all_ids.find(left), r = all_ids.find(right);
    if (l == all_ids.end() || l->second >= p->model_size) refuse("'" + printable_excerpt(left) + "' is not in the vocabulary");
    if (r == all_ids.end() || r->second >= p->model_size) refuse("'" + printable_excerpt(right) + "' is not in the vocabulary");
    if (!prefix.empty() && right.compare(0, prefix.size(), prefix) != 0) refuse("the right part lacks the continuing_subword_prefix");
    const std::string result = left + right.substr(prefix.size());
    const auto m = all_ids.find(result);
    if (m == all_ids.end() || m->second >= p->model_size) refuse("the result '" + printable_excerpt(result) + "' is not in the vocabulary");
    const unsigned long long key = (static_cast<unsigned long long>(l->second) << 32) | static_cast<unsigned>(r->second);
    t.merges_[key] = Merge{static_cast<int>(rank), m->second};  // a repeated pair: the later rank wins, as in the library
  }

  t.bytes_.reserve(t.vocab_.size());
  for (std::size_t id = 0; id < t.vocab_.size(); ++id) {
    const std::string& token = t.vocab_[id];
    // a WordPiece continuation stands for its text without the prefix; a word start for itself
    const std::string& prefix = spec.decoder.wordpiece_prefix;
    if (wordpiece && spec.decoder.wordpiece && static_cast<int>(id) < p->model_size && !prefix.empty() &&
        token.compare(0, prefix.size(), prefix) == 0)
      t.bytes_.push_back(token.substr(prefix.size()));
    else
      t.bytes_.push_back(decoded_bytes(token, spec.decoder));
  }
  for (int b = 0; b < 256; ++b) t.byte_ids_[b] = -1;
  for (int id : spec.template_before) t.check_id(id);
  for (int id : spec.template_after) t.check_id(id);
  p->gpt2 = std::make_shared<TokenRegex>(kGpt2Pattern);
  p->spec = std::move(spec);
  p->spec.merges.clear();
  t.pipeline_ = std::move(p);
  return t;
}

}  // namespace attn
