// NFC, NFKC, NFD, NFKD, lowercase and BERT's categories over generated tables: the canonical
// decomposition, ordering and composition algorithm of Unicode's UAX #15, Hangul by formula. Not a file
// parser or a tokenizer.
#include "unicode_norm.h"

#include <algorithm>
#include <iterator>
#include <unordered_map>

#include "unicode_norm_tables.h"  // generated at build time by tools/gen_unicode_norm.py

namespace attn {
namespace {

namespace tables = unicode_norm;

constexpr std::uint32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr std::uint32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;
constexpr std::uint32_t kCpMask = 0x1FFFFF, kCompatBit = 1u << 21, kExcludedBit = 1u << 22;
constexpr std::size_t kDecompCount = std::size(tables::kDecompKey);

int find_decomposition(std::uint32_t cp) {
  const auto* begin = std::begin(tables::kDecompKey);
  const auto* it = std::lower_bound(begin, std::end(tables::kDecompKey), cp,
                                    [](std::uint32_t key, std::uint32_t c) { return (key & kCpMask) < c; });
  if (it == std::end(tables::kDecompKey) || (*it & kCpMask) != cp) return -1;
  return static_cast<int>(it - begin);
}

// Where each mapping starts in the pool (the table stores lengths; the sums are made once).
const std::vector<std::uint16_t>& decomp_offsets() {
  static const auto offsets = [] {
    std::vector<std::uint16_t> o(kDecompCount + 1, 0);
    for (std::size_t k = 0; k < kDecompCount; ++k) o[k + 1] = static_cast<std::uint16_t>(o[k] + tables::kDecompLength[k]);
    return o;
  }();
  return offsets;
}

// The mapping of decomposition entry k as code points (the pool holds well-formed UTF-8).
void mapping_of(int k, std::vector<std::uint32_t>& out) {
  const auto& offsets = decomp_offsets();
  std::size_t i = offsets[static_cast<std::size_t>(k)];
  const std::size_t end = offsets[static_cast<std::size_t>(k) + 1];
  while (i < end) {
    const unsigned char b0 = tables::kDecompPool[i];
    const std::size_t len = b0 < 0x80 ? 1 : b0 >= 0xF0 ? 4 : b0 >= 0xE0 ? 3 : 2;
    std::uint32_t cp = len == 1 ? b0 : (b0 & (0x7F >> len));
    for (std::size_t j = 1; j < len; ++j) cp = (cp << 6) | (tables::kDecompPool[i + j] & 0x3F);
    out.push_back(cp);
    i += len;
  }
}

int combining_class(std::uint32_t cp) {
  if (cp < 0x300) return 0;
  const auto* begin = std::begin(tables::kCccStart);
  const auto* it = std::upper_bound(begin, std::end(tables::kCccStart), cp,
                                    [](std::uint32_t c, std::uint32_t start) { return c < (start & kCpMask); });
  if (it == begin) return 0;
  --it;
  const std::uint32_t lo = *it & kCpMask;
  return cp - lo <= tables::kCccLen[it - begin] ? static_cast<int>(*it >> 24) : 0;
}

void decompose(std::uint32_t cp, bool compat, std::vector<std::uint32_t>& out, int depth = 0) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    const std::uint32_t s = cp - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount) out.push_back(kTBase + s % kTCount);
    return;
  }
  const int k = cp < 0xA0 ? -1 : find_decomposition(cp);
  if (k < 0 || depth > 8 || ((tables::kDecompKey[k] & kCompatBit) && !compat)) {
    out.push_back(cp);
    return;
  }
  std::vector<std::uint32_t> parts;
  mapping_of(k, parts);
  for (std::uint32_t p : parts) decompose(p, compat, out, depth + 1);
}

// (first << 21 | second) → the primary composite, from the canonical pairs not excluded.
const std::unordered_map<std::uint64_t, std::uint32_t>& compositions() {
  static const auto map = [] {
    std::unordered_map<std::uint64_t, std::uint32_t> m;
    std::vector<std::uint32_t> parts;
    for (std::size_t k = 0; k < kDecompCount; ++k) {
      if (tables::kDecompKey[k] & kExcludedBit) continue;
      parts.clear();
      mapping_of(static_cast<int>(k), parts);
      if (parts.size() == 2) m[(static_cast<std::uint64_t>(parts[0]) << 21) | parts[1]] = tables::kDecompKey[k] & kCpMask;
    }
    return m;
  }();
  return map;
}

bool compose_pair(std::uint32_t a, std::uint32_t b, std::uint32_t* out) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount) {
    *out = kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
    return true;
  }
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase && b < kTBase + kTCount) {
    *out = a + (b - kTBase);
    return true;
  }
  const auto& m = compositions();
  const auto it = m.find((static_cast<std::uint64_t>(a) << 21) | b);
  if (it == m.end()) return false;
  *out = it->second;
  return true;
}

std::vector<std::uint32_t> normalize(const std::vector<std::uint32_t>& text, bool compat, bool compose = true) {
  if (std::all_of(text.begin(), text.end(), [](std::uint32_t c) { return c < 0xA0; })) return text;
  // pass 1: full decomposition
  std::vector<std::uint32_t> d;
  d.reserve(text.size());
  for (std::uint32_t cp : text) decompose(cp, compat, d);
  // pass 2: canonical order: a run of marks is stably sorted by combining class
  std::vector<int> ccc(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) ccc[i] = combining_class(d[i]);
  for (std::size_t i = 0; i < d.size();) {
    if (ccc[i] == 0) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < d.size() && ccc[j] != 0) ++j;
    std::vector<std::pair<int, std::uint32_t>> run;
    for (std::size_t k = i; k < j; ++k) run.push_back({ccc[k], d[k]});
    std::stable_sort(run.begin(), run.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t k = i; k < j; ++k) ccc[k] = run[k - i].first, d[k] = run[k - i].second;
    i = j;
  }
  if (!compose) return d;
  // pass 3: canonical composition: each mark joins the last starter unless blocked
  std::vector<std::uint32_t> out;
  out.reserve(d.size());
  // (a mark is blocked from the last starter when a character between them has a class of 0 or not less)
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t starter = kNone;
  int last_ccc = 0;  // class of the last character kept after the starter
  for (std::size_t i = 0; i < d.size(); ++i) {
    const std::uint32_t cp = d[i];
    const int c = ccc[i];
    if (starter != kNone) {
      const bool adjacent = out.size() == starter + 1;
      const bool blocked = !adjacent && (last_ccc == 0 || last_ccc >= c);
      std::uint32_t composed = 0;
      if (!blocked && compose_pair(out[starter], cp, &composed)) {
        out[starter] = composed;
        continue;
      }
    }
    if (c == 0) starter = out.size();
    last_ccc = c;
    out.push_back(cp);
  }
  return out;
}

}  // namespace

std::vector<std::uint32_t> to_nfc(const std::vector<std::uint32_t>& text) { return normalize(text, false); }
std::vector<std::uint32_t> to_nfkc(const std::vector<std::uint32_t>& text) { return normalize(text, true); }
std::vector<std::uint32_t> to_nfd(const std::vector<std::uint32_t>& text) { return normalize(text, false, false); }
std::vector<std::uint32_t> to_nfkd(const std::vector<std::uint32_t>& text) { return normalize(text, true, false); }

CharCategory char_category(std::uint32_t cp) {
  constexpr std::uint32_t kLoMask = 0x1FFFFF;
  const auto* begin = std::begin(tables::kCategoryStart);
  const auto* it = std::upper_bound(begin, std::end(tables::kCategoryStart), cp,
                                    [](std::uint32_t c, std::uint32_t start) { return c < (start & kLoMask); });
  if (it == begin) return CharCategory::Other;
  --it;
  if (cp - (*it & kLoMask) > tables::kCategoryLen[it - begin]) return CharCategory::Other;
  return static_cast<CharCategory>(*it >> 21);
}

std::vector<std::uint32_t> to_lowercase(const std::vector<std::uint32_t>& text) {
  std::vector<std::uint32_t> out;
  out.reserve(text.size());
  for (std::uint32_t cp : text) {
    if (cp < 0x80) {
      out.push_back(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp);
    } else if (cp == 0x130) {  // İ lowercases to two characters: i and a combining dot above
      out.push_back('i');
      out.push_back(0x307);
    } else {
      const auto* it = std::upper_bound(std::begin(tables::kLowerRuns), std::end(tables::kLowerRuns), cp,
                                        [](std::uint32_t c, const tables::LowerRun& r) { return c < r.start; });
      std::uint32_t lower = cp;
      if (it != std::begin(tables::kLowerRuns)) {
        const tables::LowerRun& run = *(it - 1);
        const std::uint32_t step = cp - run.start;
        if (step % run.stride == 0 && step / run.stride < run.count) lower = static_cast<std::uint32_t>(static_cast<std::int32_t>(cp) + run.delta);
      }
      out.push_back(lower);
    }
  }
  return out;
}

}  // namespace attn
