"""The toolkit's hand-written text tasks beside the libraries that do them
(``python bench/ablation.py --libraries``): on the bench's own texts, how often the library
agrees with the toolkit, how it does on the cases the toolkit was written for, and its speed.

Libraries: pysbd (sentences), kiwipiepy (Korean morphology), quantulum3 and pint (quantities),
dateparser (dates), rapidfuzz (locating a claim in a text). Each is optional: a missing one
is reported with its ``pip install`` line.
"""

from __future__ import annotations

import importlib.util
import json
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

#: Sentence cases the toolkit's splitter was written for (``textkit/sentences.py``).
SENTENCE_CASES = [
    ("Dr. Smith joined in 2019. He leads the team.", 2),
    ("Version v2.3 fixed it. Uptime is 99.9% now.", 2),
    ("The Kings of Leon played in Vancouver.Kings of Leon is a band.", 2),
    ("Contact J. Doe at the U.S. office. Call before 5 p.m. today.", 2),
    ("The SKU is NG-TM-M. It ships in red.", 2),
    ("Prices rose, e.g. for the Pro plan. Basic stayed the same.", 2),
    ("연간 요금제는 환불할 수 없습니다 월간 요금제는 환불할 수 있습니다", 2),
    ("Pro 플랜은 월 49달러입니다. Basic 플랜은 무료입니다.", 2),
    ("It costs $49.99 per month. Annual plans cost less.", 2),
    ("Acme Inc. was founded in 1999. It is based in Ohio.", 2),
]


def _texts(limit: int = 400) -> tuple[list[str], list[str]]:
    """English and Korean texts: misattribution chunks and claims (tests/data)."""
    en: list[str] = []
    ko: list[str] = []
    for path in sorted((ROOT / "tests" / "data").glob("misattribution*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            case = json.loads(line)
            texts = [*case["retrieved_contexts"], case["claim"]]
            (ko if case.get("lang") == "ko" else en).extend(texts)
    return en[:limit], ko[:limit]


def _timed(fn: Callable[[str], Any], texts: Iterable[str]) -> tuple[list[Any], float]:
    texts = list(texts)
    t0 = time.process_time()
    out = [fn(t) for t in texts]
    return out, time.process_time() - t0


def _missing(module: str, package: str) -> bool:
    if importlib.util.find_spec(module) is None:
        print(f"  {package}: not installed (pip install {package})")
        return True
    return False


def sentences(en: list[str]) -> None:
    from noisegauge.textkit.sentences import sentences as ours

    print("sentence boundaries (textkit.sentences vs pysbd):")
    right = sum(len(ours(t)) == n for t, n in SENTENCE_CASES)
    mine, t_mine = _timed(ours, en)
    print(f"  textkit: {right}/{len(SENTENCE_CASES)} written-for cases, "
          f"{sum(map(len, en)) / t_mine / 1e3:.0f}k chars/s")
    if _missing("pysbd", "pysbd"):
        return
    import pysbd

    seg = pysbd.Segmenter(language="en", clean=False)

    def theirs(t: str) -> list[str]:
        return [s.strip() for s in seg.segment(t) if s.strip(" \t.!?")]

    right = sum(len(theirs(t)) == n for t, n in SENTENCE_CASES)
    out, t_lib = _timed(theirs, en)
    agree = sum(a == b for a, b in zip(mine, out, strict=True))
    print(f"  pysbd:   {right}/{len(SENTENCE_CASES)} written-for cases, "
          f"{sum(map(len, en)) / t_lib / 1e3:.0f}k chars/s; same sentences as textkit on "
          f"{agree}/{len(en)} English texts; no Korean model")


def korean(ko: list[str]) -> None:
    from noisegauge.textkit.tokens import tokenize

    print("Korean particles and endings (textkit stems vs kiwipiepy morphemes):")
    words = sorted({t.text for text in ko for t in tokenize(text) if t.hangul})
    mine, t_mine = _timed(lambda w: tokenize(w)[0].norm, words)
    print(f"  textkit: {len(words)} distinct eojeol, {len(words) / t_mine:.0f}/s")
    if _missing("kiwipiepy", "kiwipiepy"):
        return
    from kiwipiepy import Kiwi

    t0 = time.process_time()
    kiwi = Kiwi()
    load = time.process_time() - t0
    content = ("NNG", "NNP", "NNB", "SL", "SN", "XR", "XSN")

    def stem(w: str) -> str:
        toks = kiwi.tokenize(w)
        lead = []
        for t in toks:
            if not t.tag.startswith(content):
                break
            lead.append(t.form)
        return "".join(lead) or (toks[0].form if toks else w)

    out, t_lib = _timed(stem, words)
    agree = sum(a == b for a, b in zip(mine, out, strict=True))
    print(f"  kiwipiepy: {len(words) / t_lib:.0f}/s (+{load:.1f}s to load its model); its "
          f"leading noun morphemes equal the textkit stem for {agree}/{len(words)} eojeol")
    diffs = [(w, a, b) for w, a, b in zip(words, mine, out, strict=True) if a != b][:6]
    print("  e.g. " + "; ".join(f"{w}: {a} / {b}" for w, a, b in diffs))


def quantities(en: list[str]) -> None:
    from noisegauge.textkit.quantity import quantities as ours
    from noisegauge.textkit.tokens import tokenize

    print("quantities (textkit.quantities vs quantulum3; pint):")
    mine, t_mine = _timed(lambda t: ours(tokenize(t)), en)
    with_unit = sum(1 for qs in mine for q in qs if q.unit)
    print(f"  textkit: {sum(map(len, mine))} numbers, {with_unit} with a unit, "
          f"{sum(map(len, en)) / t_mine / 1e3:.0f}k chars/s (English and Korean)")
    if _missing("quantulum3", "quantulum3"):
        return
    from quantulum3 import classifier, parser

    # Its shipped unit classifier is a pickle of an older scikit-learn that the pinned one
    # cannot load; its rule-based disambiguation is used instead.
    classifier.USE_CLF = False
    out, t_lib = _timed(parser.parse, en)
    found = 0
    for qs, theirs in zip(mine, out, strict=True):
        values = {round(float(x.value), 6) for x in theirs}
        found += sum(1 for q in qs if q.unit and round(q.value, 6) in values)
    print(f"  quantulum3: {sum(map(len, out))} quantities, {sum(map(len, en)) / t_lib / 1e3:.1f}k "
          f"chars/s; finds the value of {found}/{with_unit} of textkit's numbers with a unit "
          "(no Korean, no '1만 8천 원', no times of day)")
    if not _missing("pint", "pint"):
        print("  pint: converts units it is given ('48 hours' to days); it does not find "
              "quantities in text, and textkit's conversions are three (year, week, hour)")


def dates(en: list[str]) -> None:
    from noisegauge.textkit.quantity import quantities as ours
    from noisegauge.textkit.tokens import tokenize

    print("dates (textkit months and days vs dateparser):")
    dated = [t for t in en if any(q.unit.startswith("date-") for q in ours(tokenize(t)))][:60]
    _, t_mine = _timed(lambda t: ours(tokenize(t)), dated)
    print(f"  textkit: {len(dated)} texts with a day of a month, {len(dated) / t_mine:.0f} texts/s")
    if _missing("dateparser", "dateparser"):
        return
    from dateparser.search import search_dates

    out, t_lib = _timed(lambda t: search_dates(t, languages=["en"]) or [], dated)
    print(f"  dateparser: finds a date in {sum(1 for x in out if x)}/{len(dated)}, "
          f"{len(dated) / t_lib:.0f} texts/s")


def fuzzy() -> None:
    from noisegauge.judges.lexical import extract_spans
    from noisegauge.report.align import locate

    print("locating a claim in its text (report.align.locate vs rapidfuzz):")
    pairs = []
    for path in sorted((ROOT / "tests" / "data").glob("misattribution_test1*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines()[:40]:
            case = json.loads(line)
            pairs += [(c.text, case["response"]) for c in extract_spans(case["response"])]
    mine, t_mine = _timed(lambda p: locate(*p), pairs)
    print(f"  textkit: {sum(x is not None for x in mine)}/{len(pairs)} located, "
          f"{len(pairs) / t_mine:.0f}/s")
    if _missing("rapidfuzz", "rapidfuzz"):
        return
    from rapidfuzz import fuzz

    out, t_lib = _timed(lambda p: fuzz.partial_ratio_alignment(p[0], p[1]), pairs)
    same = sum(1 for a, b in zip(mine, out, strict=True)
               if a is not None and b is not None and min(a[1], b.dest_end) - max(a[0], b.dest_start)
               >= 0.8 * (a[1] - a[0]))
    print(f"  rapidfuzz partial_ratio_alignment: {len(pairs) / t_lib:.0f}/s; its span covers 80% "
          f"of textkit's for {same}/{len(pairs)}")


def main(data: Path | None = None) -> None:
    en, ko = _texts()
    for task in (lambda: sentences(en), lambda: korean(ko), lambda: quantities(en),
                 lambda: dates(en), fuzzy):
        task()
