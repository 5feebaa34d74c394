#!/usr/bin/env python3
"""Seeds and dictionaries for the libFuzzer targets, extracted from the sources so they never go stale.

    make_seeds.py OUT_DIR

writes OUT_DIR/layout_fuzzer/ (every layout attribute and laid-out tile type in the lit tests, one per file),
OUT_DIR/ir_pipeline_fuzzer.dict (op names from ir/Ops.def, types, keywords, attribute names) and
OUT_DIR/layout_fuzzer.dict. The IR fuzzer's seeds are the lit tests themselves (scripts/run_fuzzers.sh).
"""
import hashlib
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCALARS = ["i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64", "f8e4m3",
           "f8e5m2"]
LAYOUT_WORDS = ["#blocked", "#slice", "#shared", "order", "spt", "tpw", "wpc", "dim", "parent", "vec", "per_phase",
                "max_phase", "tile<", "ptr<", " = ", ", ", "{", "}", "[", "]", "<", ">", "x"]


def balanced(text, start, open_char, close_char):
    """The text from `start` through the bracket that closes the first `open_char` after it, or None."""
    depth = 0
    for i in range(text.index(open_char, start), len(text)):
        depth += {open_char: 1, close_char: -1}.get(text[i], 0)
        if depth == 0:
            return text[start:i + 1]
    return None


def layout_seeds(lit_texts):
    seeds = set()
    for text in lit_texts:
        for m in re.finditer(r"#(blocked|slice|shared)\{", text):
            seeds.add(balanced(text, m.start(), "{", "}"))
        for m in re.finditer(r"tile<", text):
            tile = balanced(text, m.start(), "<", ">")
            if tile and "#" in tile:
                seeds.add(tile)
    return sorted(s for s in seeds if s)


def dictionary(words):
    """libFuzzer's dictionary format: one quoted entry per line; quotes, backslashes and control bytes as \\xNN."""
    def quoted(word):
        return "".join(c if 32 <= ord(c) < 127 and c not in '\\"' else "\\x%02X" % ord(c) for c in word)
    return "".join('"%s"\n' % quoted(w) for w in sorted(set(words)))


def main():
    out = pathlib.Path(sys.argv[1])
    lit_texts = [p.read_text() for p in sorted((ROOT / "tests" / "lit").rglob("*")) if p.suffix in (".tir", ".test")]
    layouts = out / "layout_fuzzer"
    layouts.mkdir(parents=True, exist_ok=True)
    for seed in layout_seeds(lit_texts):
        (layouts / hashlib.sha1(seed.encode()).hexdigest()).write_text(seed)

    ops = re.findall(r'^OP\(\w+,\s*"([a-z_0-9.]+)"', (ROOT / "ir" / "Ops.def").read_text(), re.M)
    attributes = set(re.findall(r"\{(\w+) = ", "\n".join(lit_texts))) | set(re.findall(r", (\w+) = ", "\n".join(lit_texts)))
    ir_words = ops + SCALARS + LAYOUT_WORDS + sorted(attributes) + [
        "func @", "%", "^(", "return", "yield", ": ", " -> ", "(", ")", "loc(", "true", "false", "inf", "nan", "\n"]
    (out / "ir_pipeline_fuzzer.dict").write_text(dictionary(ir_words))
    (out / "layout_fuzzer.dict").write_text(dictionary(LAYOUT_WORDS + SCALARS))
    print("make_seeds: %d layout seeds, %d IR dictionary words in %s" % (len(list(layouts.iterdir())), len(set(ir_words)), out))


if __name__ == "__main__":
    main()
