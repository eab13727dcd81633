#!/usr/bin/env python3
# Cuts Debian's DejaVu and Noto fonts into the fallback font files the app fetches on demand (one
# per script group) and writes the C++ table of those groups. Build-time only (cmake/app.cmake runs
# it); its outputs go to the build folder, never to git.
#   subset_fallback_fonts.py OUT_DIR HEADER BASE_UNICODES
# BASE_UNICODES: what the UI font already has ("U+0020-017F,..."), left out of every group.
import gzip
import os
import subprocess
import sys

from fontTools.ttLib import TTFont

DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
NOTO = "/usr/share/fonts/truetype/noto/"
CJK = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"
CJK_SC, CJK_KR = 2, 1  # font numbers inside the collection (0 JP, 1 KR, 2 SC, 3 TC, 4 HK)


def span(lo, hi):
    return set(range(lo, hi + 1))


def han(cps):
    return {c for c in cps if 0x3400 <= c <= 0x4DBF or 0x4E00 <= c <= 0x9FFF or 0xF900 <= c <= 0xFAFF}


def from_codec(codec, lead, trail):
    """The characters a two-byte legacy encoding has for these lead and trail byte ranges."""
    out = set()
    for b1 in range(lead[0], lead[1] + 1):
        for b2 in range(trail[0], trail[1] + 1):
            try:
                s = bytes([b1, b2]).decode(codec)
            except UnicodeDecodeError:
                continue
            if len(s) == 1:
                out.add(ord(s))
    return out


# Which ideographs are "common": the first levels of the Chinese and Japanese national character
# sets (GB 2312 level 1: 3755 hanzi; JIS X 0208 level 1: 2965 kanji), the daily vocabulary of
# both. The rest of GB 2312, JIS X 0208, Big5 (traditional) and KS X 1001's hanja is a second file.
GB1 = han(from_codec("gb2312", (0xB0, 0xD7), (0xA1, 0xFE)))
JIS1 = han(from_codec("euc_jp", (0xB0, 0xCF), (0xA1, 0xFE)))
HAN_MORE = han(from_codec("gb2312", (0xB0, 0xF7), (0xA1, 0xFE)) | from_codec("euc_jp", (0xB0, 0xF4), (0xA1, 0xFE))
               | from_codec("big5", (0xA4, 0xF9), (0x40, 0xFE)) | from_codec("euc_kr", (0xCA, 0xFD), (0xA1, 0xFE)))
HAN_MORE -= GB1 | JIS1
# KS X 1001's 2350 hangul syllables cover everyday Korean (all 11172 would be ~5 times the size).
HANGUL = {c for c in from_codec("euc_kr", (0xB0, 0xC8), (0xA1, 0xFE)) if 0xAC00 <= c <= 0xD7A3}
CJK_MARKS = span(0x3000, 0x30FF) | span(0x3100, 0x312F) | span(0x31F0, 0x31FF) | span(0xFF00, 0xFFEF)

# name, source font, font number (collections) or None, the code points wanted from it. A code
# point several groups have goes to the first (the app asks for groups in this order too).
GROUPS = [
    ("latin-cyrillic-greek", DEJAVU, None, span(0x0180, 0x03FF) | span(0x0400, 0x052F) | span(0x1E00, 0x1FFF)
     | span(0x1C80, 0x1C8F) | span(0x2DE0, 0x2DFF) | span(0xA640, 0xA69F) | span(0xA720, 0xA7FF)),
    ("symbols", DEJAVU, None, span(0x0530, 0x058F) | span(0x0590, 0x05FF) | span(0x0600, 0x06FF) | span(0x10A0, 0x10FF)
     | span(0x2000, 0x2BFF) | span(0xFB00, 0xFEFF) | span(0xFFF0, 0xFFFF) | span(0x1D400, 0x1D7FF)),
    ("cjk", CJK, CJK_SC, GB1 | JIS1 | CJK_MARKS),
    ("hangul", CJK, CJK_KR, HANGUL | span(0x1100, 0x11FF) | span(0x3130, 0x318F)),
    ("cjk-more", CJK, CJK_SC, HAN_MORE),
    ("devanagari", NOTO + "NotoSansDevanagari-Regular.ttf", None, span(0x0900, 0x097F) | span(0xA8E0, 0xA8FF)),
    ("bengali", NOTO + "NotoSansBengali-Regular.ttf", None, span(0x0980, 0x09FF)),
    ("gurmukhi", NOTO + "NotoSansGurmukhi-Regular.ttf", None, span(0x0A00, 0x0A7F)),
    ("gujarati", NOTO + "NotoSansGujarati-Regular.ttf", None, span(0x0A80, 0x0AFF)),
    ("tamil", NOTO + "NotoSansTamil-Regular.ttf", None, span(0x0B80, 0x0BFF)),
    ("telugu", NOTO + "NotoSansTelugu-Regular.ttf", None, span(0x0C00, 0x0C7F)),
    ("kannada", NOTO + "NotoSansKannada-Regular.ttf", None, span(0x0C80, 0x0CFF)),
    ("malayalam", NOTO + "NotoSansMalayalam-Regular.ttf", None, span(0x0D00, 0x0D7F)),
    ("sinhala", NOTO + "NotoSansSinhala-Regular.ttf", None, span(0x0D80, 0x0DFF)),
    ("thai", NOTO + "NotoSansThai-Regular.ttf", None, span(0x0E00, 0x0E7F)),
    ("lao", NOTO + "NotoSansLao-Regular.ttf", None, span(0x0E80, 0x0EFF)),
    ("myanmar", NOTO + "NotoSansMyanmar-Regular.ttf", None, span(0x1000, 0x109F)),
    ("ethiopic", NOTO + "NotoSansEthiopic-Regular.ttf", None, span(0x1200, 0x139F)),
    ("khmer", NOTO + "NotoSansKhmer-Regular.ttf", None, span(0x1780, 0x17FF)),
]


def parse_unicodes(text):
    out = set()
    for part in text.split(","):
        lo, _, hi = part.strip().removeprefix("U+").partition("-")
        out |= span(int(lo, 16), int(hi or lo, 16))
    return out


def ranges(cps, gap=0):
    """Sorted inclusive ranges; runs closer than `gap` merge (routing needs blocks, not holes)."""
    out = []
    for c in sorted(cps):
        if out and c - out[-1][1] <= gap + 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return out


def main():
    out_dir, header, base_text = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(out_dir, exist_ok=True)
    taken = parse_unicodes(base_text)
    rows = []
    for name, source, number, wanted in GROUPS:
        font = TTFont(source, fontNumber=number if number is not None else -1, lazy=True)
        have = set(font.getBestCmap()) & (wanted - taken)
        font.close()
        taken |= have
        ext = ".otf" if source.endswith((".otf", ".ttc")) else ".ttf"
        path = os.path.join(out_dir, name + ext)
        unicodes_file = path + ".unicodes"
        with open(unicodes_file, "w", encoding="ascii") as f:
            f.write("\n".join("%04X" % c for c in sorted(have)))
        cmd = [sys.executable, "-m", "fontTools.subset", source, "--unicodes-file=" + unicodes_file, "--no-hinting",
               "--layout-features=", "--notdef-outline", "--output-file=" + path]
        if number is not None:
            cmd.append("--font-number=%d" % number)
        subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
        os.remove(unicodes_file)
        data = open(path, "rb").read()
        gz = len(gzip.compress(data, 9))
        print("fallback font %-22s %6d code points %8d bytes (%d gzip)" % (os.path.basename(path), len(have), len(data), gz))
        rows.append((name, os.path.basename(path), len(have), len(data), gz, ranges(have, gap=32)))

    lines = [
        "// Generated by tools/subset_fallback_fonts.py at build time: do not edit, do not commit.",
        "// The fallback font files (dist/fonts/ on the web, the build's assets/fonts/ natively), in the",
        "// order the app asks for them, and the code point ranges each may cover (for choosing which to",
        "// fetch; the file's own cmap says what it really has).",
        "#pragma once",
        "#include <cstdint>",
        "namespace attn::fallback_fonts {",
        "struct Group { const char* name; const char* file; std::uint32_t code_points, bytes, gzip_bytes; };",
        "struct Route { std::uint32_t lo, hi; int group; };",
        "constexpr Group kGroups[] = {",
    ]
    for name, file, count, size, gz, _ in rows:
        lines.append('  {"%s", "%s", %d, %d, %d},' % (name, file, count, size, gz))
    lines.append("};")
    lines.append("constexpr Route kRoutes[] = {")
    for g, row in enumerate(rows):
        for lo, hi in row[5]:
            lines.append("  {0x%X, 0x%X, %d}," % (lo, hi, g))
    lines += ["};", "}  // namespace attn::fallback_fonts"]
    with open(header, "w", encoding="ascii") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
