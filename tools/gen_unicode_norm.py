#!/usr/bin/env python3
# Writes the Unicode data that NFC, NFKC, NFD and Lowercase need (decompositions, combining classes, simple
# lowercase), and the general categories BERT's normalizer and pre-tokenizer test (marks, punctuation,
# control / format / private use), as a compact C++ header, from this Python's unicodedata.
# Build-time only: never committed.
import sys
import unicodedata

# Hugging Face's tokenizers normalizes with tables of Unicode 11 (its unicode-normalization-alignments
# crate): the characters with a decomposition that were assigned later (Unicode 12.0 to 14.0) stay as
# they are there, in NFC, NFKC, NFD and NFKD alike, and so they do here. Checked against the library.
ASSIGNED_AFTER_11_0_DECOMPOSABLE = """
32FF A7F2-A7F4 AB69 10781-10785 10787-107B0 107B2-107BA 11938 1F16C 1FBF0-1FBF9
"""
not_decomposed = set()
for item in ASSIGNED_AFTER_11_0_DECOMPOSABLE.split():
    lo, _, hi = item.partition("-")
    not_decomposed.update(range(int(lo, 16), int(hi or lo, 16) + 1))

decomp = []      # (cp, compat, excluded, mapping as UTF-8 bytes)
for cp in range(0x110000):
    if 0xAC00 <= cp <= 0xD7A3 or cp in not_decomposed:
        continue  # Hangul syllables decompose by formula
    d = unicodedata.decomposition(chr(cp))
    if not d:
        continue
    parts = d.split()
    compat = parts[0].startswith("<")
    if compat:
        parts = parts[1:]
    mapping = "".join(chr(int(p, 16)) for p in parts)
    # A canonical pair composes back unless Unicode excludes it; NFC of the character itself says which.
    excluded = compat or len(mapping) != 2 or unicodedata.normalize("NFC", chr(cp)) != chr(cp)
    decomp.append((cp, compat, excluded, mapping.encode("utf-8")))

ccc = []  # runs (lo, hi, class)
for cp in range(0x110000):
    c = unicodedata.combining(chr(cp))
    if c:
        if ccc and ccc[-1][1] == cp - 1 and ccc[-1][2] == c:
            ccc[-1][1] = cp
        else:
            ccc.append([cp, cp, c])

lower = []  # (cp, lowercase) where it is one code point and differs; U+0130 is written by hand
for cp in range(0x110000):
    lo = chr(cp).lower()
    if lo != chr(cp) and len(lo) == 1:
        lower.append((cp, ord(lo)))

# General-category runs for BERT's pipeline: 1 = Mn (nonspacing mark, what strip_accents drops), 2 = Mc or
# Me (the other marks, which StripAccents drops too), 3 = P* (punctuation), 4 = Cc, Cf or Co (clean_text
# drops these), 5 = a mark only since Unicode 9.0 (below). Everything else is 0 and not listed.
#
# Hugging Face's tokenizers asks these of the unicode_categories crate, whose tables are Unicode 8.0's:
# a mark, punctuation or format character assigned since then is an ordinary character there (not
# split off, not dropped). So are they here. The code points below are those of Unicode's DerivedAge
# (9.0 to 15.0) that this Python's Unicode 14.0 puts in classes 1-4; with a newer Python, its newest
# characters are not listed and would count (rare scripts only). Checked against the library code
# point by code point (tests/cli/tokenizer_wordpiece.test.mjs, ATTN_FULL=1).
ASSIGNED_AFTER_8_0 = """
61D 7FD 890-891 898-89F 8CA-8E2 9FD-9FE A76 AFA-AFF B55 C04 C3C C77 C84 D00 D3B-D3C D81 EBA 1715
180F 1ABF-1ACE 1B7D-1B7E 1CF7 1DF6-1DFB 2E43-2E4F 2E52-2E5D A82C A8C5 A8FF 10D24-10D27 10EAB-10EAD
10F46-10F50 10F55-10F59 10F82-10F89 11070 11073-11074 110C2 110CD 11145-11146 111CE-111CF 1123E
1133B 11435-11446 1144B-1144F 1145A-1145B 1145D-1145E 11660-1166C 116B9 1182C-1183B 11930-11935
11937-11938 1193B-1193E 11940 11942-11946 119D1-119D7 119DA-119E0 119E2 119E4 11A01-11A0A
11A33-11A39 11A3B-11A47 11A51-11A5B 11A8A-11A9C 11A9E-11AA2 11C2F-11C36 11C38-11C3F 11C41-11C45
11C70-11C71 11C92-11CA7 11CA9-11CB6 11D31-11D36 11D3A 11D3C-11D3D 11D3F-11D45 11D47 11D8A-11D8E
11D90-11D91 11D93-11D97 11EF3-11EF8 11FFF 12FF1-12FF2 13430-13438 16E97-16E9A 16F4F 16F7F-16F87
16FE2 16FE4 16FF0-16FF1 1CF00-1CF2D 1CF30-1CF46 1E000-1E006 1E008-1E018 1E01B-1E021 1E023-1E024
1E026-1E02A 1E130-1E136 1E2AE 1E2EC-1E2EF 1E944-1E94A 1E95E-1E95F
"""
after_8_0 = set()
for item in ASSIGNED_AFTER_8_0.split():
    lo, _, hi = item.partition("-")
    after_8_0.update(range(int(lo, 16), int(hi or lo, 16) + 1))
# The StripAccents normalizer asks its normalization crate instead, whose marks are Unicode 9.0's: the
# marks assigned in 9.0 (and two Mongolian letters that became marks then) are class 5.
MARKS_OF_9_0 = """
8D4-8E1 1DFB A8C5 1123E 11435-11446 11C2F-11C36 11C38-11C3F 11C92-11CA7 11CA9-11CB6 1E000-1E006 1E008-1E018
1E01B-1E021 1E023-1E024 1E026-1E02A 1E944-1E94A
"""
marks_of_9_0 = set()
for item in MARKS_OF_9_0.split():
    lo, _, hi = item.partition("-")
    marks_of_9_0.update(range(int(lo, 16), int(hi or lo, 16) + 1))
# Characters whose category has changed since Unicode 8.0, with the class they had then: two Po (now Mn
# and So), a Mn (now Mc), three Mc (now Mn, Lo, Lo) and two Mongolian letters (Lo then, Mn since 9.0).
CLASS_IN_8_0 = {0x111C9: 3, 0x166D: 3, 0x1734: 1, 0xA9BD: 2, 0x1CF2: 2, 0x1CF3: 2, 0x1885: 5, 0x1886: 5}

def category_class(cp):
    if cp in CLASS_IN_8_0:
        return CLASS_IN_8_0[cp]
    if cp in marks_of_9_0:
        return 5
    if cp in after_8_0:
        return 0
    c = unicodedata.category(chr(cp))
    if c == "Mn":
        return 1
    if c in ("Mc", "Me"):
        return 2
    if c[0] == "P":
        return 3
    if c in ("Cc", "Cf", "Co"):
        return 4
    return 0

categories = []  # runs [lo, hi, class]
for cp in range(0x110000):
    k = category_class(cp)
    if not k:
        continue
    if categories and categories[-1][1] == cp - 1 and categories[-1][2] == k:
        categories[-1][1] = cp
    else:
        categories.append([cp, cp, k])

pool = bytearray()
out = [
    "// Generated by tools/gen_unicode_norm.py at build time: do not edit, do not commit.",
    "// Decompositions, combining classes and lowercase from Python's unicodedata " + unicodedata.unidata_version + ".",
    "#pragma once",
    "#include <cstdint>",
    "namespace attn::unicode_norm {",
    'constexpr const char* kUnicodeVersion = "' + unicodedata.unidata_version + '";',
    "// cp in bits 0-20; bit 21: a compatibility mapping; bit 22: excluded from composition.",
    "// The mappings are kDecompPool's UTF-8, one after another, kDecompLength[k] bytes each.",
    "constexpr std::uint32_t kDecompKey[] = {",
]
offsets = []
keys = []
for cp, compat, excluded, mapping in decomp:
    keys.append(cp | (compat << 21) | (excluded << 22))
    offsets.append(len(pool))
    pool += mapping
offsets.append(len(pool))
for i in range(0, len(keys), 10):
    out.append("  " + ",".join("0x%X" % k for k in keys[i:i + 10]) + ",")
out.append("};")
lengths = [offsets[k + 1] - offsets[k] for k in range(len(keys))]
assert max(lengths) < 256
out.append("constexpr std::uint8_t kDecompLength[] = {")
for i in range(0, len(lengths), 24):
    out.append("  " + ",".join(str(n) for n in lengths[i:i + 24]) + ",")
out.append("};")
out.append("constexpr unsigned char kDecompPool[] = {")
for i in range(0, len(pool), 24):
    out.append("  " + ",".join(str(b) for b in pool[i:i + 24]) + ",")
out.append("};")
out.append("// Combining class runs: lo in bits 0-20 and the class in bits 24-31; the run's length - 1 in kCccLen.")
out.append("constexpr std::uint32_t kCccStart[] = {")
for i in range(0, len(ccc), 10):
    out.append("  " + ",".join("0x%X" % (lo | (c << 24)) for lo, hi, c in ccc[i:i + 10]) + ",")
out.append("};")
out.append("constexpr std::uint8_t kCccLen[] = {")
for i in range(0, len(ccc), 24):
    out.append("  " + ",".join(str(hi - lo) for lo, hi, c in ccc[i:i + 24]) + ",")
out.append("};")
# Lowercase as runs: `count` code points from `start`, `stride` apart, each lowercased by adding `delta`
# (A-Z is one run of stride 1; Latin Extended's alternating upper/lower pairs are runs of stride 2).
runs = []
for a, b in lower:
    d = b - a
    if runs:
        start, count, delta, stride = runs[-1]
        last = start + (count - 1) * stride
        if delta == d and count == 1 and a - last in (1, 2):
            runs[-1] = [start, 2, delta, a - last]
            continue
        if delta == d and count > 1 and a - last == stride:
            runs[-1][1] += 1
            continue
    runs.append([a, 1, d, 1])
assert all(r[1] < 65536 for r in runs)
out.append("struct LowerRun { std::uint32_t start; std::int32_t delta; std::uint16_t count; std::uint8_t stride; };")
out.append("constexpr LowerRun kLowerRuns[] = {")
for i in range(0, len(runs), 6):
    out.append("  " + " ".join("{0x%X, %d, %d, %d}," % (r[0], r[2], r[1], r[3]) for r in runs[i:i + 6]))
out.append("};")
out.append("// General-category runs: lo in bits 0-20, the class in bits 21-23 (1 Mn, 2 Mc/Me, 3 P*, 4 Cc/Cf/Co,")
out.append("// 5 a mark of Unicode 9.0 that the category tables of 8.0 do not have);")
out.append("// the run's length - 1 in kCategoryLen.")
out.append("constexpr std::uint32_t kCategoryStart[] = {")
for i in range(0, len(categories), 10):
    out.append("  " + ",".join("0x%X" % (lo | (k << 21)) for lo, hi, k in categories[i:i + 10]) + ",")
out.append("};")
out.append("constexpr std::uint16_t kCategoryLen[] = {")
for i in range(0, len(categories), 16):
    out.append("  " + ",".join(str(hi - lo) for lo, hi, k in categories[i:i + 16]) + ",")
out.append("};")
out.append("}  // namespace attn::unicode_norm")
assert all(hi - lo < 65536 for lo, hi, k in categories)
assert len(pool) < 65536 and all(hi - lo < 256 for lo, hi, c in ccc)
with open(sys.argv[1], "w", encoding="ascii") as f:
    f.write("\n".join(out) + "\n")
