"""Writes split.json: texts and the chunks nanochat's split pattern cuts them into.

tests/test_text.cpp checks plugins/data/text/pretokenize.cpp against it. The pattern is
nanochat's SPLIT_PATTERN (nanochat/tokenizer.py: GPT-4's with numbers of 1 or 2 digits), run by
the `regex` module as nanochat's Python tokenizer runs it. The alphabet mixes ASCII with
characters whose Unicode class the scanner's table-free rules get right (letters of several
scripts, non-ASCII spaces, dashes and quotes, an emoji, superscript and Arabic-Indic digits).

    python3 -m pip install regex && python3 make_split_fixture.py
"""
import json
import random

import regex

SPLIT_PATTERN = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,2}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+"""

PIECES = (list("aAzZ019 ' \t\r\n.,;:!?()-\"/") +
          ["'s", "'T", "'ll", "'Ve", "'re", "'d", "'m", "  ", "\n\n", " \n ", "123", "é", "ß", "α", "Ж", "中", "ª",
           "\u00a0", "\u3000", "\u2014", "\u201c", "\u2026", "😀", "²", "½", "\u0663", "×", "hello", " world", "\r\n"])

CASES = ["Hello world", "Hello, world!  How's it going?\n\n  1 In the beginning",
         "don't I'LL you've we're", "1234567 12 1", "  leading and trailing  ", "tabs\tand\ttabs\t\t",
         "a\n\n\nb", "!!!\n\n", " ?? x", "naïve café 中文 текст", "x  \n  y", "'''", "...'s"]


def main():
    rng = random.Random(29)
    pattern = regex.compile(SPLIT_PATTERN)
    texts = list(CASES)
    for _ in range(400):
        texts.append("".join(rng.choice(PIECES) for _ in range(rng.randint(1, 24))))
    cases = [{"text": t, "chunks": pattern.findall(t)} for t in texts]
    for c in cases:
        assert "".join(c["chunks"]) == c["text"]
    with open("split.json", "w", encoding="utf-8") as f:
        f.write('{"pattern": %s,\n "regex": "%s",\n "cases": [\n' % (json.dumps(SPLIT_PATTERN), regex.__version__))
        f.write(",\n".join(json.dumps(c, ensure_ascii=False) for c in cases))
        f.write("\n]}\n")


if __name__ == "__main__":
    main()
