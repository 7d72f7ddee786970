"""Where questions come from: a file (a line each, or JSONL with ``user_input``), a
production log, or the corpus itself (look-alike pairs, by a template or a generator).

The offline template (``template_questions``) is deterministic: for each look-alike pair it
takes the sentence of one chunk that holds a differing value, keeps the rest of the sentence
(so the question still names its own side: "Pro", "2024") and blanks the value:
``Fill in the blank: Pro plan customers can ask for a full refund within ___ of purchase.``
The other chunk of the pair, which fills the blank with another value, is the row's trap.
Rows so made are drafts a person must finish (``review``): the question reads as a cloze.
"""

from __future__ import annotations

import json
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, InvalidSample
from ..io.readers import open_source
from ..samples import HISTORY_FIELD, Turn, read_turns
from ..textkit.sentences import sentences
from ..textkit.spans import spanned
from .corpus import Chunk
from .lookalike import LookAlike, LookAlikes

__all__ = ["read_questions", "read_log", "template_questions", "written_questions",
           "TEMPLATE"]

#: The offline question template; ``{sentence}`` is the sentence with the value blanked.
TEMPLATE = "Fill in the blank: {sentence}"
BLANK = "___"

_QUESTION_FIELDS = ("user_input", "question", "query")


def _question_text(record: Mapping[str, Any], path: Path, n: int) -> str:
    for name in _QUESTION_FIELDS:
        value = record.get(name)
        if isinstance(value, list) and value and isinstance(value[-1], Mapping):
            value = value[-1].get("content")  # a conversation: the last message asks
        if isinstance(value, str) and value.strip():
            return value.strip()
    raise InvalidInput(f"{path}: row {n}: no question; give each row a non-empty "
                       "'user_input' string")


def _question_turns(record: Mapping[str, Any], path: Path, n: int
                    ) -> tuple[str, tuple[Turn, ...]]:
    """The question and the turns before it: a chat's row (``user_input`` a conversation,
    or ``history`` beside it) read as ``score`` reads it; else the question alone."""
    value = next((record[k] for k in _QUESTION_FIELDS if record.get(k) is not None), None)
    if isinstance(value, list) or record.get(HISTORY_FIELD) is not None:
        try:
            return read_turns(record, row=n)
        except InvalidSample as exc:
            raise InvalidInput(f"{path}: {exc}") from None
    return _question_text(record, path, n), ()


def read_questions(path: str | Path) -> list[tuple[str, str, dict[str, Any], tuple[Turn, ...]]]:
    """(id, question, metadata, turns before it) of a questions file: plain text, a
    question a line; or JSONL/JSON/CSV rows with ``user_input`` (or ``question``; a
    conversation, or ``history`` beside it) and optional ``id``."""
    p = Path(path)
    out: list[tuple[str, str, dict[str, Any], tuple[Turn, ...]]] = []
    if p.suffix.lower() in (".txt", ".md", ""):
        try:
            lines = p.read_text(encoding="utf-8-sig").splitlines()
        except UnicodeDecodeError:
            raise InvalidInput(f"{p}: not UTF-8 text; save the questions as UTF-8, one "
                               "a line") from None
        out = [(f"q{n:04d}", line.strip(), {}, ()) for n, line in
               enumerate((x for x in lines if x.strip()), start=1)]
    else:
        for raw in open_source(p):
            n = raw.index + 1
            if raw.record is None:
                if isinstance(raw.value, str) and raw.value.strip():
                    out.append((f"q{n:04d}", raw.value.strip(), {}, ()))
                    continue
                raise InvalidInput(f"{p}: row {n}: {raw.error or 'not an object'}; each row "
                                   "needs a user_input")
            rid = raw.record.get("id")
            meta = raw.record.get("metadata")
            question, history = _question_turns(raw.record, p, n)
            out.append((str(rid) if rid is not None else f"q{n:04d}", question,
                        dict(meta) if isinstance(meta, Mapping) else {}, history))
    if not out:
        raise InvalidInput(f"{p}: no questions; write one a line, or JSONL rows with user_input")
    _unique([i for i, _, _, _ in out], p)
    return out


def _unique(ids: Sequence[str], path: Path) -> None:
    seen: set[str] = set()
    for n, i in enumerate(ids, start=1):
        if i in seen:
            raise InvalidInput(f"{path}: row {n}: duplicate id {i!r}; give every row its own "
                               "id (or none, to number them)")
        seen.add(i)


def read_log(path: str | Path) -> list[dict[str, Any]]:
    """Rows of a production log: ``user_input`` (a chat's conversation, or a string with
    ``history`` beside it), ``response``, ``retrieved_contexts`` (strings, or objects with
    ``text``), optional ``retrieved_context_ids`` and ``id``. Each comes back as ``{"id",
    "user_input", "history": (Turn, ...), "response", "contexts": [(id|None, text)],
    "metadata"}``."""
    p = Path(path)
    out: list[dict[str, Any]] = []
    for raw in open_source(p):
        n = raw.index + 1
        if raw.record is None:
            raise InvalidInput(f"{p}: row {n}: {raw.error or 'not an object'}; a log row needs "
                               "user_input, response and retrieved_contexts")
        r = raw.record
        question, history = _question_turns(r, p, n)
        ctx = r.get("retrieved_contexts", r.get("contexts"))
        if not isinstance(ctx, list) or not ctx:
            raise InvalidInput(f"{p}: row {n}: retrieved_contexts must be a non-empty list of "
                               "the chunks the system retrieved")
        ids = r.get("retrieved_context_ids")
        if ids is not None and (not isinstance(ids, list) or len(ids) != len(ctx)):
            raise InvalidInput(f"{p}: row {n}: retrieved_context_ids must list one id per "
                               f"chunk ({len(ctx)})")
        contexts: list[tuple[str | None, str]] = []
        for k, c in enumerate(ctx):
            text = c.get("text", c.get("page_content")) if isinstance(c, Mapping) else c
            if not isinstance(text, str) or not text.strip():
                raise InvalidInput(f"{p}: row {n}: retrieved_contexts[{k}] has no text")
            cid = ids[k] if ids is not None else (c.get("id", c.get("doc_id"))
                                                   if isinstance(c, Mapping) else None)
            contexts.append((None if cid is None else str(cid), text.strip()))
        response = r.get("response", r.get("answer"))
        meta = r.get("metadata")
        out.append({"id": str(r["id"]) if r.get("id") is not None else f"log{n:04d}",
                    "user_input": question, "history": history,
                    "response": response if isinstance(response, str) else None,
                    "contexts": contexts,
                    "metadata": dict(meta) if isinstance(meta, Mapping) else {}})
    if not out:
        raise InvalidInput(f"{p}: the log is empty")
    _unique([r["id"] for r in out], p)
    return out


def _blanked(chunk: Chunk, la: LookAlike) -> str | None:
    """The chunk's sentence holding a differing value, the value blanked; None when no
    difference is a value or the question would name no side."""
    values = [d for d in la.differences if any(ch.isdigit() for ch in d.mine) and d.mine]
    if not values or len(la.differences) < 2:
        return None  # only the entity differs: blanking it would leave no side named
    d = values[-1]
    for s in sentences(chunk.text):
        if d.mine in s:
            return TEMPLATE.format(sentence=s.replace(d.mine, BLANK, 1))
    return None


def template_questions(chunks: Sequence[Chunk], lookalikes: LookAlikes, n: int,
                       seed: int) -> list[tuple[str, str]]:
    """Up to ``n`` (chunk id, question) pairs aimed at look-alike pairs, by ``TEMPLATE``;
    the pairs shuffled with ``seed``, each side of a pair asked once. With fewer pairs than
    ``n``, other chunks' values are blanked the same way (their traps are topical)."""
    found: list[tuple[str, str]] = []
    for i, la in lookalikes.all_pairs():
        for a, other in ((i, la), (la.other, _flip(la, i))):
            q = _blanked(chunks[a], other)
            if q is not None:
                found.append((chunks[a].id, q))
    rng = random.Random(seed)
    rng.shuffle(found)
    if len(found) < n:  # too few pairs: the values of other chunks, with topical traps
        used = {cid for cid, _ in found}
        more = [(c.id, q) for c in chunks if c.id not in used
                for q in [_blanked_value(c)] if q is not None]
        rng.shuffle(more)
        found += more[: n - len(found)]
    return found[:n]


def _blanked_value(chunk: Chunk) -> str | None:
    """The chunk's first sentence stating a number, the number (and a unit word after it,
    "30 days") blanked."""
    for sent in sentences(chunk.text):
        t = spanned(sent)
        for k, tok in enumerate(t.tokens):
            if tok.kind != "num" or len(sent.split()) < 5:
                continue
            a, b = t.spans[k]
            nxt = t.tokens[k + 1] if k + 1 < len(t.tokens) else None
            if nxt is not None and nxt.kind == "word" and not nxt.stop and nxt.text.islower():
                b = t.spans[k + 1][1]
            return TEMPLATE.format(sentence=sent[:a] + BLANK + sent[b:])
    return None


def _flip(la: LookAlike, i: int) -> LookAlike:
    from .lookalike import Difference
    return LookAlike(i, la.ratio, tuple(Difference(d.theirs, d.mine, d.theirs_terms,
                                                   d.mine_terms) for d in la.differences))


#: ``(chunk, look-alike chunk, detail that differs) -> question``: a generator's question.
QuestionWriter = Callable[[str, str, str], Awaitable[str]]


async def written_questions(chunks: Sequence[Chunk], lookalikes: LookAlikes, n: int, seed: int,
                            write: QuestionWriter) -> list[tuple[str, str]]:
    """Up to ``n`` (chunk id, question) pairs a generator wrote, one per look-alike side."""
    sides: list[tuple[int, LookAlike]] = []
    for i, la in lookalikes.all_pairs():
        sides += [(i, la), (la.other, _flip(la, i))]
    random.Random(seed).shuffle(sides)
    out: list[tuple[str, str]] = []
    for a, la in sides[:n]:
        q = (await write(chunks[a].text, chunks[la.other].text, la.differs)).strip()
        if q:
            out.append((chunks[a].id, q.splitlines()[0].strip()))
    return out


def dumps(row: Mapping[str, Any]) -> str:
    """One GOLDEN line (UTF-8 text kept readable)."""
    return json.dumps(row, ensure_ascii=False)
