"""Where distractor chunks come from, and where they go in the context list.

Every source is seeded through the ``random.Random`` it is handed (never the global one), never
returns one of the item's relevant chunks, and says in each chunk's ``source``/``meta`` where the
chunk came from, so a leaked claim can be traced back to it. Strategies:

- ``pool``: random chunks from a user-given pool file;
- ``others``: random relevant chunks of *other* golden questions (no pool needed);
- ``hard``: the candidates (pool and other questions' chunks) most similar to the question,
  ranked by TF-IDF (scikit-learn, ``pip install '.[stress]'``) or a scorer you pass;
- ``counterfactual``: copies of a relevant chunk with one number, date, SKU or plan name swapped
  (see ``counterfactual.py``), the RGB-style "looks right, is wrong" distractor;
- ``siblings``: the golden row's own traps (``distractors``, as ``noisegauge testset`` writes
  them), look-alike first, then conflicting, then topical. A row without any has nothing to
  inject: its noisy levels are undefined (``no_siblings`` gives the reason), never level 0 again.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Literal, Protocol

from ..errors import InvalidInput, MissingDependency
from .chunks import Chunk, normalize, relevant_chunks, without_relevant
from .counterfactual import Counterfactuals
from .golden import TRAP_KINDS, GoldenItem, PoolChunk

__all__ = ["Chunk", "DistractorSource", "PoolDistractors", "OtherQuestions", "HardNegatives",
           "Siblings", "STRATEGIES", "POSITIONS", "Position", "build_sources", "draw_mixed",
           "place", "relevant_chunks", "normalize", "without_relevant", "no_siblings"]

Position = Literal["first", "last", "random", "interleaved"]
POSITIONS: tuple[str, ...] = ("first", "last", "random", "interleaved")
STRATEGIES: tuple[str, ...] = ("pool", "others", "hard", "counterfactual", "siblings")

#: ``scorer(question, candidate_texts) -> one similarity per candidate`` (e.g. embeddings).
Scorer = Callable[[str, Sequence[str]], Sequence[float]]


class DistractorSource(Protocol):
    """Draws up to ``k`` distinct distractors for one item; fewer when it runs out."""

    name: str

    def draw(self, item: GoldenItem, k: int, rng: random.Random) -> list[Chunk]: ...


class PoolDistractors:
    """Random chunks from a user-given pool."""

    name = "pool"

    def __init__(self, pool: Sequence[PoolChunk]) -> None:
        self._chunks = [Chunk(p.text, "distractor", "pool", p.id, dict(p.metadata)) for p in pool]

    def draw(self, item: GoldenItem, k: int, rng: random.Random) -> list[Chunk]:
        candidates = without_relevant(item, self._chunks)
        return rng.sample(candidates, min(k, len(candidates)))


def _other_chunks(items: Sequence[GoldenItem]) -> list[tuple[str, Chunk]]:
    """(owner item id, chunk) for every relevant chunk of the golden set."""
    return [(it.id, Chunk(c.text, "distractor", "others", c.id, {"from_item": it.id}))
            for it in items for c in relevant_chunks(it)]


class OtherQuestions:
    """Random relevant chunks of other golden questions."""

    name = "others"

    def __init__(self, items: Sequence[GoldenItem]) -> None:
        self._chunks = _other_chunks(items)

    def draw(self, item: GoldenItem, k: int, rng: random.Random) -> list[Chunk]:
        candidates = without_relevant(item, [c for owner, c in self._chunks if owner != item.id])
        return rng.sample(candidates, min(k, len(candidates)))


class HardNegatives:
    """The candidates most similar to the question, excluding the item's relevant chunks.

    Deterministic: the same item always gets the same ranked list, so repeats differ only in
    placement. Candidates are the pool (if any) plus other questions' relevant chunks.
    """

    name = "hard"

    def __init__(self, items: Sequence[GoldenItem], pool: Sequence[PoolChunk] = (),
                 scorer: Scorer | None = None) -> None:
        self._chunks = [Chunk(p.text, "distractor", "hard", p.id, {**p.metadata, "from": "pool"})
                        for p in pool]
        others = _other_chunks(items)
        self._chunks += [Chunk(c.text, "distractor", "hard", c.id, {**c.meta, "from": "others"})
                         for _, c in others]
        self._owner = [None] * len(pool) + [owner for owner, _ in others]
        self._scorer = scorer or _tfidf_scorer([c.text for c in self._chunks])

    def draw(self, item: GoldenItem, k: int, rng: random.Random) -> list[Chunk]:
        keep = [j for j, c in enumerate(self._chunks) if self._owner[j] != item.id]
        scores = list(self._scorer(item.question, [self._chunks[j].text for j in keep]))
        ranked = sorted(range(len(keep)), key=lambda r: (-scores[r], keep[r]))
        chosen = [Chunk(self._chunks[keep[r]].text, "distractor", "hard", self._chunks[keep[r]].id,
                        {**self._chunks[keep[r]].meta, "similarity": round(float(scores[r]), 4)})
                  for r in ranked]
        return without_relevant(item, chosen)[:k]


class Siblings:
    """The item's own traps, look-alike first, then conflicting, then topical (file order
    within a kind). Deterministic, like ``hard``: level k shows the k most telling traps."""

    name = "siblings"

    def draw(self, item: GoldenItem, k: int, rng: random.Random) -> list[Chunk]:
        order = sorted(range(len(item.distractors)),
                       key=lambda j: (TRAP_KINDS.index(item.distractors[j].kind), j))
        chunks = []
        for j in order:
            t = item.distractors[j]
            meta = {"trap": t.kind, **({"differs": t.differs} if t.differs else {})}
            chunks.append(Chunk(t.text, "distractor", "siblings",
                                t.id if t.id is not None else f"{item.id}~d{j}", meta))
        return without_relevant(item, chunks)[:k]


def no_siblings(item: GoldenItem) -> str | None:
    """Why ``siblings`` has nothing to inject for this item (None: it has traps)."""
    if without_relevant(item, [Chunk(t.text, "distractor", "siblings") for t in item.distractors]):
        return None
    return (f"golden row {item.id!r} has no distractors of its own to inject (--strategy "
            "siblings); add some (noisegauge testset, noisegauge review) or use another strategy")


def _tfidf_scorer(corpus: Sequence[str]) -> Scorer:
    """Cosine similarity over character 2-4-grams: language-neutral (Korean, SKUs) and cheap."""
    try:
        from sklearn.feature_extraction.text import TfidfVectorizer
    except ImportError as exc:
        raise MissingDependency("the 'hard' distractor strategy (TF-IDF ranking)", "stress",
                                "scikit-learn") from exc
    vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True)
    matrix = vectorizer.fit_transform(list(corpus))
    index = {text: j for j, text in enumerate(corpus)}

    def score(question: str, texts: Sequence[str]) -> Sequence[float]:
        q = vectorizer.transform([question])
        sims = (matrix @ q.T).toarray().ravel()  # rows are L2-normalised, so this is the cosine
        return [float(sims[index[t]]) for t in texts]

    return score


def build_sources(strategies: Sequence[str], items: Sequence[GoldenItem],
                  pool: Sequence[PoolChunk] | None = None,
                  scorer: Scorer | None = None) -> list[DistractorSource]:
    """Sources for strategy names, validated up front (a typo fails before any generation)."""
    if not strategies:
        raise InvalidInput(f"no distractor strategy given; choose from {', '.join(STRATEGIES)}")
    sources: list[DistractorSource] = []
    for name in strategies:
        if name == "pool":
            if not pool:
                raise InvalidInput("strategy 'pool' needs a distractor pool (--pool FILE)")
            sources.append(PoolDistractors(pool))
        elif name == "others":
            if len(items) < 2:
                raise InvalidInput("strategy 'others' needs at least two golden questions")
            sources.append(OtherQuestions(items))
        elif name == "hard":
            sources.append(HardNegatives(items, pool or (), scorer))
        elif name == "counterfactual":
            sources.append(Counterfactuals(items, pool or ()))
        elif name == "siblings":
            if not any(it.distractors for it in items):
                raise InvalidInput("strategy 'siblings' needs golden rows with their own "
                                   "'distractors' (as `noisegauge testset` writes them); "
                                   "none of the rows has any")
            sources.append(Siblings())
        else:
            raise InvalidInput(f"unknown distractor strategy {name!r}; "
                               f"choose from {', '.join(STRATEGIES)}")
    return sources


def draw_mixed(sources: Sequence[DistractorSource], item: GoldenItem, k: int,
               rng: random.Random) -> list[Chunk]:
    """``k`` distractors taken round-robin from the sources (one source: just its draw).

    The list is ordered so that its first ``j`` entries are the distractors of level ``j``:
    levels are nested, which makes the curve a within-item comparison.
    """
    n = len(sources)
    drawn = [s.draw(item, len(range(i, k, n)), rng) for i, s in enumerate(sources)]
    out: list[Chunk] = []
    seen: set[str] = set()
    for r in range(max((len(d) for d in drawn), default=0)):
        for d in drawn:
            if r < len(d) and normalize(d[r].text) not in seen:
                seen.add(normalize(d[r].text))
                out.append(d[r])
    return out[:k]


def place(relevant: Sequence[Chunk], distractors: Sequence[Chunk], position: str,
          rng: random.Random) -> list[Chunk]:
    """Order relevant and distractor chunks.

    ``first``/``last``: distractors before/after the relevant chunks; ``random``: shuffled
    together; ``interleaved``: relevant chunks spread evenly through the distractors (a single
    relevant chunk lands in the middle, the "lost in the middle" case).
    """
    if position == "first":
        return [*distractors, *relevant]
    if position == "last":
        return [*relevant, *distractors]
    if position == "random":
        out = [*relevant, *distractors]
        rng.shuffle(out)
        return out
    if position == "interleaved":
        n, r = len(relevant) + len(distractors), len(relevant)
        slots = {int((i + 0.5) * n / r): c for i, c in enumerate(relevant)} if r else {}
        rest = iter(distractors)
        return [slots[j] if j in slots else next(rest) for j in range(n)]
    raise InvalidInput(f"unknown position {position!r}; choose from {', '.join(POSITIONS)}")
