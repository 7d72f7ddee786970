"""Golden sets from a team's own documents and logs, aimed at look-alike noise.

``build_testset(docs, questions=..., log=...)`` returns GOLDEN rows (``rows.GoldenRow``; the
JSON shape is in ``rows`` and ``docs/reference/golden.md``). Modules: ``corpus`` (reading and
chunking), ``retrieve`` (BM25), ``lookalike`` (chunks that share a template), ``draft``
(relevant chunks and extractive references), ``questions`` (given, logged, or written from
look-alike pairs), ``generate`` (a chat model that writes), ``build`` (the rows).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .._async import run_sync
from ..judges.base import Judge
from ..judges.registry import get_judge
from .build import Builder, Question
from .corpus import Chunk, load_corpus
from .questions import read_log, read_questions, template_questions, written_questions
from .rows import DISTRACTOR_KINDS, STATUSES, Distractor, Draft, GoldenRow

__all__ = ["build_testset", "abuild_testset", "load_corpus", "Chunk", "GoldenRow",
           "Distractor", "Draft", "DISTRACTOR_KINDS", "STATUSES"]


def build_testset(docs: Iterable[str | Path] | Sequence[Chunk], *, questions: str | Path | None = None,
                  log: str | Path | None = None, judge: str | Judge = "lexical",
                  generator: Any = None, generator_spec: str | None = None, n: int = 30,
                  seed: int = 0, judge_name: str | None = None) -> list[GoldenRow]:
    """GOLDEN rows for ``docs`` (paths, or chunks already read); see ``abuild_testset``.

    >>> rows = build_testset([Chunk("a#1", "The Pro plan refunds within 30 days of purchase."),
    ...                       Chunk("b#1", "The Team plan refunds within 60 days of purchase.")],
    ...                      n=1)
    >>> rows[0].distractors[0].kind, rows[0].distractors[0].differs
    ('look-alike', 'Pro vs Team; 30 days vs 60 days')
    """
    return run_sync(abuild_testset(docs, questions=questions, log=log, judge=judge,
                                   generator=generator, generator_spec=generator_spec, n=n,
                                   seed=seed, judge_name=judge_name), hint="await abuild_testset(...)")


async def abuild_testset(docs: Iterable[str | Path] | Sequence[Chunk], *,
                         questions: str | Path | None = None, log: str | Path | None = None,
                         judge: str | Judge = "lexical", generator: Any = None,
                         generator_spec: str | None = None, n: int = 30,
                         seed: int = 0, judge_name: str | None = None) -> list[GoldenRow]:
    """GOLDEN rows: a row per question of ``questions``, per row of ``log``, or (neither)
    up to ``n`` questions aimed at the corpus's look-alike pairs, written by ``generator``
    (a ``generate.ChatWriter``) or by the offline template."""
    given = list(docs)
    chunks: list[Chunk] = [c for c in given if isinstance(c, Chunk)]
    paths = [p for p in given if not isinstance(p, Chunk)]
    if paths:
        chunks += load_corpus(paths)
    spec = judge_name or (judge if isinstance(judge, str) else type(judge).__name__)
    the_judge = get_judge(judge)
    qs: list[Question] = []
    if log is not None:
        chunks, qs = _log_questions(chunks, read_log(log))
    elif questions is not None:
        qs = [Question(i, text, "given", {"source": "questions", **meta}, history=history)
              for i, text, meta, history in read_questions(questions)]
    if not chunks:
        from ..errors import InvalidInput
        raise InvalidInput("the corpus is empty: give DOCS with text")
    writer_ref = generator.reference if generator is not None else None
    builder = Builder(chunks, the_judge, spec, writer=writer_ref, writer_spec=generator_spec)
    if log is None and questions is None:
        if generator is not None:
            made = await written_questions(builder.chunks, builder.lookalikes, n, seed,
                                           generator.question)
            origin = generator_spec or "generator"
        else:
            made = template_questions(builder.chunks, builder.lookalikes, n, seed)
            origin = "template"
        qs = [Question(f"q{k:04d}", text, origin, {"source": "generated", "from_chunk": cid})
              for k, (cid, text) in enumerate(made, start=1)]
        if not qs:
            from ..errors import InvalidInput
            raise InvalidInput("no question could be written from DOCS (no look-alike pair, no "
                               "sentence stating a value); give --questions FILE, --from-log "
                               "LOG, or --generator SPEC")
    return await builder.rows(qs)


def _log_questions(chunks: list[Chunk], log: list[dict[str, Any]]
                   ) -> tuple[list[Chunk], list[Question]]:
    """The corpus with the log's chunks it lacks, and a question per log row pointing at
    its own chunks (a logged chunk is the corpus chunk of the same id, or of the same text)."""
    by_id = {c.id: k for k, c in enumerate(chunks)}
    by_text = {c.text: k for k, c in enumerate(chunks)}
    out = list(chunks)
    qs: list[Question] = []
    for r in log:
        idx: list[int] = []
        for k, (cid, text) in enumerate(r["contexts"], start=1):
            found = by_id.get(cid) if cid is not None else None
            if found is None or out[found].text != text:
                found = by_text.get(text)
            if found is None:
                new_id = cid if cid is not None and cid not in by_id else f"{r['id']}#{k}"
                out.append(Chunk(new_id, text, source="log"))
                found = by_id[new_id] = by_text[text] = len(out) - 1
            idx.append(found)
        qs.append(Question(r["id"], r["user_input"], "log", {"source": "log", **r["metadata"]},
                           tuple(dict.fromkeys(idx)), r["response"], r["history"]))
    return out, qs
