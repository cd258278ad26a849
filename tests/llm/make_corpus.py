#!/usr/bin/env python3
"""Builds the text corpus of the tokenizer tests and benchmark.

  make_corpus.py OUT_DIR

Writes, in OUT_DIR:
  real.docs       real text from Debian packages (fetched with scripts/fetch-deb-file, cached
                  in OUT_DIR/debian): program messages translated into ~60 languages and many
                  scripts (gettext catalogs of coreutils, apt and iso-codes), C and Python
                  source code, English prose (the GPL) and a manual page;
  synthetic.docs  generated hard cases: whitespace runs, digits, contractions in every case,
                  emoji sequences, combining marks in every order, controls, noncharacters,
                  unassigned and newest code points, invalid UTF-8, random code points of every
                  category, long runs;
  mixed.txt       a few MB of mixed text for bench/tokenizer_bench (real text of every
                  source, interleaved).
Documents are stored as (uint32 little-endian length, bytes). Everything is deterministic
for a given set of Debian package versions. A package that cannot be fetched is skipped
(its documents are missing; the summary line on stdout says how many bytes were found).
"""

import os
import random
import struct
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FETCH = os.path.join(ROOT, "scripts", "fetch-deb-file")

COREUTILS_LANGS = ("af be bg ca cs da de el eo es et eu fi fr ga gl hr hu ia id it ja kk ko "
                   "lg lt ms nb nl pl pt pt_BR ro ru sk sl sr sv tr uk vi zh_CN zh_TW").split()
APT_LANGS = "ar dz km mr ne th ku ja zh_TW vi eu".split()
ISO_LANGS = ("am ar as be bn bo cy dv el fa gu he hi hy ja ka kk km kn ko ky lo ml mn mr my "
             "ne or pa ps ru si ta te th ti tt ug uk ur uz vi yi zh_CN").split()
CODE_FILES = [
    ("libc6-dev", "usr/include/stdio.h", "stdio.h"),
    ("libc6-dev", "usr/include/stdlib.h", "stdlib.h"),
    ("libc6-dev", "usr/include/string.h", "string.h"),
    ("libc6-dev", "usr/include/pthread.h", "pthread.h"),
    ("libpython3.11-stdlib", "usr/lib/python3.11/argparse.py", "argparse.py"),
    ("libpython3.11-stdlib", "usr/lib/python3.11/textwrap.py", "textwrap.py"),
    ("libpython3.11-stdlib", "usr/lib/python3.11/json/decoder.py", "json_decoder.py"),
    ("libpython3.11-stdlib", "usr/lib/python3.11/csv.py", "csv.py"),
    ("base-files", "usr/share/common-licenses/GPL-3", "GPL-3"),
    ("bash", "usr/share/man/man1/bash.1.gz", "bash.1"),
]


def fetch_all(out_dir, files):
    """Takes the files (package, path, name) out of their packages, each package read once, and
    returns their contents by name (None for a file that cannot be had)."""
    by_package = {}
    for package, path, name in files:
        dest = os.path.join(out_dir, "debian", name)
        if not os.path.exists(dest):
            by_package.setdefault(package, []).extend([path, dest])
    os.makedirs(os.path.join(out_dir, "debian"), exist_ok=True)
    for package, pairs in by_package.items():
        subprocess.run(["bash", FETCH, package] + pairs, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    contents = {}
    for _, _, name in files:
        dest = os.path.join(out_dir, "debian", name)
        contents[name] = None
        if os.path.exists(dest):
            with open(dest, "rb") as f:
                contents[name] = f.read()
    return contents


def locale_file(package, lang, domain):
    """(package, path, name) of a gettext catalog."""
    return (package, f"usr/share/locale/{lang}/LC_MESSAGES/{domain}.mo", f"{domain}-{lang}.mo")


def mo_strings(data):
    """(msgid, msgstr) pairs of a GNU .mo catalog, as bytes."""
    if len(data) < 28:
        return []
    magic = struct.unpack_from("<I", data, 0)[0]
    order = "<" if magic == 0x950412DE else ">"
    _, n, orig, trans = struct.unpack_from(order + "4I", data, 4)
    pairs = []
    for k in range(n):
        ol, oo = struct.unpack_from(order + "2I", data, orig + 8 * k)
        tl, to = struct.unpack_from(order + "2I", data, trans + 8 * k)
        pairs.append((data[oo:oo + ol], data[to:to + tl]))
    return pairs


def chunk(texts, size=6000):
    """Joins texts with newlines into documents of about `size` bytes."""
    docs, cur = [], []
    n = 0
    for t in texts:
        cur.append(t)
        n += len(t) + 1
        if n >= size:
            docs.append(b"\n".join(cur))
            cur, n = [], 0
    if cur:
        docs.append(b"\n".join(cur))
    return docs


def split_lines(data, size=6000):
    return chunk(data.split(b"\n"), size)


def real_docs(out_dir):
    coreutils = [locale_file("coreutils", lang, "coreutils") for lang in COREUTILS_LANGS]
    apt = [locale_file("apt", lang, "apt") for lang in APT_LANGS]
    iso = [locale_file("iso-codes", lang, domain) for lang in ISO_LANGS
           for domain in ("iso_3166-1", "iso_639-2")]
    data_of = fetch_all(out_dir, coreutils + apt + iso + CODE_FILES)
    docs = []
    english = None
    for _, _, name in coreutils:
        data = data_of[name]
        if not data:
            continue
        pairs = [p for p in mo_strings(data) if p[0]]
        if english is None:
            english = [p[0] for p in pairs]
        docs += chunk([p[1] for p in pairs])
    if english:
        docs += chunk(english)
    for _, _, name in apt + iso:
        data = data_of[name]
        if data:
            docs += chunk([p[1] for p in mo_strings(data) if p[0]])
    for _, _, name in CODE_FILES:
        data = data_of[name]
        if data:
            docs += split_lines(data)
    return docs


def u(*cps):
    return "".join(chr(c) for c in cps)


def synthetic_docs():
    rnd = random.Random(20260522)
    docs = []

    spaces = [" ", "  ", "\t", "\n", "\r\n", "\r", "\n\n", " \n", "\n ", "\u00a0", "\u3000",
              "\u2028", "\u2029", "\u0085", "\u200b", "\u2003", "\u180e", "\u000b", "\u000c",
              "\ufeff", "   \t  ", " \r\n \n"]
    words = ["hello", "World", "NASA", "iPhone", "CamelCase", "snake_case", "x", "a1b2", "über",
             "Ñandú", "日本語", "中文", "한국어", "Ελληνικά", "Русский", "עברית", "العربية",
             "हिन्दी", "ไทย", "ქართული", "Հայերեն", "አማርኛ", "தமிழ்", "ಕನ್ನಡ", "ᏣᎳᎩ", "ǅemal",
             "ʻokina", "ǲ", "ᾈ", "Ⅻ", "½", "x²", "١٢٣", "１２３", "ｈｅｌｌｏ", "Ａ"]
    # Whitespace runs between words, at the ends, alone.
    for _ in range(300):
        parts = []
        for _ in range(rnd.randint(1, 12)):
            parts.append(rnd.choice(words) if rnd.random() < 0.6 else "")
            parts.append("".join(rnd.choice(spaces) for _ in range(rnd.randint(1, 6))))
        docs.append("".join(parts))
    # Digits.
    digit_sets = ["0123456789", "٠١٢٣٤٥٦٧٨٩", "०१२३४५६७८९", "０１２３４５６７８９", "²³¹¼½¾",
                  "ⅠⅡⅢⅣⅤⅥⅦⅧⅨⅩⅪⅫ", "𝟎𝟏𝟐𝟑", "①②③"]
    for _ in range(300):
        parts = []
        for _ in range(rnd.randint(1, 10)):
            ds = rnd.choice(digit_sets)
            parts.append("".join(rnd.choice(ds) for _ in range(rnd.randint(1, 14))))
            parts.append(rnd.choice(["", " ", ".", ",", "-", "abc", "x", "\n", "$", "%", "/", "e"]))
        docs.append("".join(parts))
    # Contractions, apostrophes of every kind, all cases.
    stems = ["I", "you", "we", "they", "it", "he", "don", "can", "O", "rock", "'", "''", " ", ""]
    tails = ["s", "t", "re", "ve", "m", "ll", "d", "S", "T", "RE", "Re", "rE", "VE", "M", "LL",
             "Ll", "D", "\u017f", "K", "\u212a", "x", "", "ss", "st", "\u00df", "\ufb06"]
    for _ in range(300):
        parts = []
        for _ in range(rnd.randint(1, 10)):
            ap = rnd.choice(["'", "'", "'", "\u2019", "`", "''"])
            parts.append(rnd.choice(stems) + ap + rnd.choice(tails) + rnd.choice(
                ["", " ", "s", ".", "\n", "'", "abc", "日本"]))
        docs.append("".join(parts))
    # Emoji.
    emoji = ["😀", "👍🏽", "👨‍👩‍👧‍👦", "🇯🇵", "🇺🇸", "#️⃣", "❤️", "☺︎", "🏳️‍🌈", "🧑🏿‍🚀", "🫠",
             "🫨", "👁‍🗨", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "©", "™", "↔", "⚡"]
    for _ in range(200):
        docs.append("".join(rnd.choice(emoji + words + spaces[:3]) for _ in range(rnd.randint(1, 30))))
    # Combining marks in every order, Hangul jamo, precomposed and decomposed.
    bases = ["a", "e", "o", "u", "A", "O", "n", "c", "s", "ı", "α", "ω", "и", "ᄀ", "ᄂ", "가", "각",
             "क", "ก", "ب", "א", " ", "1", "", "\u0301"]
    marks = [0x0300, 0x0301, 0x0302, 0x0303, 0x0308, 0x030A, 0x0323, 0x0327, 0x0328, 0x031B,
             0x0345, 0x0342, 0x05B4, 0x064B, 0x0651, 0x093C, 0x094D, 0x0E31, 0x0E48, 0x1161,
             0x1175, 0x11A8, 0x11C2, 0x302A, 0x1DF6, 0x1AB0, 0x20D7, 0x3099, 0x309A, 0xFE20,
             0x1E000, 0x16FF0]
    for _ in range(400):
        parts = []
        for _ in range(rnd.randint(1, 20)):
            parts.append(rnd.choice(bases) + u(*[rnd.choice(marks) for _ in range(rnd.randint(0, 4))]))
        docs.append("".join(parts))
    precomposed = "ÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖÙÚÛÜÝàáâãäåçèéêëìíîïñòóôõöùúûüýÿĀāĂăǍǎǺǻȦȧḀḁẠạẤấỳỹ" \
                  "ΆΈΉΊΌΎΏΐάέήίΰϊϋόύώ가각갂힣Å℃ﬁﬃ㎏㍿ｶﾞ"
    for _ in range(100):
        docs.append("".join(rnd.choice(precomposed) for _ in range(rnd.randint(1, 40))))
    # Odd code points: controls, noncharacters, private use, unassigned, the newest, extremes.
    odd = [0x00, 0x01, 0x07, 0x08, 0x1B, 0x1F, 0x7F, 0x80, 0x85, 0x9F, 0xAD, 0xFEFF, 0xFFFE, 0xFFFF,
           0xFFFD, 0x1FFFE, 0x10FFFF, 0xE000, 0xF8FF, 0xF0000, 0x0378, 0x0EFF, 0x1C89, 0x1C8A,
           0x2EBF0, 0x323B0, 0x31350, 0x10D40, 0x11B60, 0x16EA0, 0x1E030, 0x200C, 0x200D, 0x2060,
           0x061C, 0x202E, 0xE0001, 0xE007F, 0x1D173, 0x0600, 0x110BD, 0x13430, 0x1F3FB]
    for _ in range(200):
        docs.append("".join(chr(rnd.choice(odd)) if rnd.random() < 0.5 else rnd.choice(words)
                            for _ in range(rnd.randint(1, 20))))
    # Random code points of every kind (surrogates excluded: not valid in UTF-8).
    def random_cp():
        r = rnd.random()
        if r < 0.3:
            c = rnd.randint(0, 0x7F)
        elif r < 0.6:
            c = rnd.randint(0x80, 0x2FFF)
        elif r < 0.8:
            c = rnd.randint(0x3000, 0xFFFF)
        elif r < 0.95:
            c = rnd.randint(0x10000, 0x3FFFF)
        else:
            c = rnd.randint(0x40000, 0x10FFFF)
        if 0xD800 <= c <= 0xDFFF:
            c = 0xFFFD
        return chr(c)
    for _ in range(600):
        docs.append("".join(random_cp() for _ in range(rnd.randint(1, 200))))
    # Word salad: scripts, case patterns, punctuation, paths, markup, code.
    punct = list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") + ["«", "»", "“", "”", "—", "…", "、", "。",
                                                          "！", "？", "¿", "¡", "§", "¶", "•", "→"]
    for _ in range(500):
        parts = []
        for _ in range(rnd.randint(1, 40)):
            w = rnd.choice(words)
            style = rnd.random()
            if style < 0.2:
                w = w.upper()
            elif style < 0.3:
                w = "".join(c.upper() if rnd.random() < 0.5 else c for c in w)
            parts.append(w)
            parts.append(rnd.choice([" ", " ", "", "\n"] + punct + [rnd.choice(punct) * 3, "/", "//",
                                     "/*", "\r\n", " /", "/\n", "\\n", "\t"]))
        docs.append("".join(parts))
    code = [
        "int main(int argc, char** argv) {\n  for (int i = 0; i < 10; ++i) {\n\tprintf(\"%d\\n\", i);\n  }\n  return 0;\n}\n",
        "def f(x):\r\n    return [y**2 for y in range(x) if y % 2 == 0]  # squares\r\n",
        "const re = /^(?:[a-z0-9!#$%&'*+/=?^_`{|}~-]+)$/i;\nconsole.log(`${a}/${b}`);\n",
        "<html><body><p class=\"x\">Hello&nbsp;world</p></body></html>\n",
        "{\"key\": [1, 2.5, -3e10, true, null], \"nested\": {\"a\": \"b\\u00e9\"}}\n",
        "SELECT id, name FROM users WHERE created_at >= '2024-01-01' ORDER BY id DESC;\n",
        "https://example.com/path/to/file.html?query=1&x=%20y#frag /usr/local/bin C:\\Windows\\System32\n",
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n# Title\n\n* item\n  - sub-item\n> quote\n```cpp\nx\n```\n",
    ]
    for _ in range(200):
        docs.append("".join(rnd.choice(code) for _ in range(rnd.randint(1, 6))))
    # Long runs: the long-piece paths of the model.
    docs.append("".join(rnd.choice("日本語中文漢字かなカナ") for _ in range(30000)))
    docs.append("a" * 20000)
    docs.append("ab" * 10000)
    docs.append(" " * 5000 + "x" + "\n" * 3000 + "y" + "\t " * 2000)
    docs.append("1234567890" * 2000)
    docs.append("!?" * 5000)
    docs.append("e\u0301" * 5000)
    docs.append("".join(rnd.choice(["\u1100", "\u1161", "\u11a8", "\uac00"]) for _ in range(8000)))
    out = [d.encode("utf-8") for d in docs]
    # Invalid UTF-8 (the tokenizer repairs it as a decoder does, U+FFFD per bad sequence).
    bad = [b"\xff", b"\xfe", b"\x80", b"\xbf", b"\xc0\xaf", b"\xe0\x80\xaf", b"\xed\xa0\x80",
           b"\xf4\x90\x80\x80", b"\xf8\x88\x80\x80\x80", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98",
           b"\xc3\x28", b"\xe2\x28\xa1", b"\xf0\x28\x8c\xbc", b"a\xcc"]
    for _ in range(150):
        parts = []
        for _ in range(rnd.randint(1, 20)):
            parts.append(rnd.choice(bad) if rnd.random() < 0.4 else rnd.choice(words).encode())
        out.append(b"".join(parts))
    return out


def write_docs(path, docs):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        for d in docs:
            f.write(struct.pack("<I", len(d)))
            f.write(d)
    os.replace(tmp, path)


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    real = real_docs(out_dir)
    synthetic = synthetic_docs()
    write_docs(os.path.join(out_dir, "real.docs"), real)
    write_docs(os.path.join(out_dir, "synthetic.docs"), synthetic)
    # Mixed text for the benchmark: real documents interleaved by source, about 4 MB.
    rnd = random.Random(7)
    picked = list(real)
    rnd.shuffle(picked)
    mixed = []
    n = 0
    for d in picked:
        mixed.append(d)
        n += len(d)
        if n > 4_000_000:
            break
    with open(os.path.join(out_dir, "mixed.txt.tmp"), "wb") as f:
        f.write(b"\n".join(mixed))
    os.replace(os.path.join(out_dir, "mixed.txt.tmp"), os.path.join(out_dir, "mixed.txt"))
    print(f"real {sum(len(d) for d in real)} bytes in {len(real)} documents; "
          f"synthetic {sum(len(d) for d in synthetic)} bytes in {len(synthetic)} documents")


if __name__ == "__main__":
    main()
