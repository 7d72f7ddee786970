"""Write the word-frequency table the lexical judge weighs words by (``zipf.tsv``).

    python training/make_zipf.py     # needs wordfreq (pinned in the train extra)

One line per English stem: the stem and its Zipf frequency x10 (log10 of uses per billion
words, the most frequent spelling of the stem), for the 40,000 most frequent English words in
wordfreq 3.1.1 (rspeer/wordfreq; its data: CC BY-SA 4.0, from Wikipedia, subtitles, news,
books, web text, Twitter and Reddit). A missing word weighs what a rare word weighs: a
claim's rare words ("foam", "Mumbai") must be in the premise; its common ones ("love",
"really") say little. Deterministic: the same wordfreq version writes the same file.
"""

from __future__ import annotations

from pathlib import Path

from wordfreq import top_n_list, zipf_frequency

from noisegauge.judges.lexical.text import stem

OUT = Path(__file__).resolve().parents[1] / "src" / "noisegauge" / "judges" / "lexical" / "zipf.tsv"


def main() -> None:
    table: dict[str, int] = {}
    for word in top_n_list("en", 40_000):
        if not word.isalpha():
            continue
        s = stem(word)
        table[s] = max(table.get(s, 0), round(zipf_frequency(word, "en") * 10))
    lines = [f"{s}\t{z}" for s, z in sorted(table.items())]
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({len(lines)} stems)")


if __name__ == "__main__":
    main()
