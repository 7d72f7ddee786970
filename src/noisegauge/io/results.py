"""Reading the results JSONL that ``noisegauge score --out`` writes, for every command that
reads one back (``report``, ``leaks``, ``review``, ``estimate``, ``calibrate``).

One reader, so every command refuses the same bad file with the same line: the file and
line, the field, and what was expected. A row is checked for the shapes the commands rely
on (``metrics`` an object of numbers, claims a list of objects, ...), never for values.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import InvalidInput

__all__ = ["RESULTS_HINT", "check_result", "history_turns", "iter_objects", "iter_results", "read_results"]

RESULTS_HINT = "expected the JSONL that `noisegauge score --out results.jsonl` writes"

#: Fields that hold an object when present (``metrics`` must be present).
_OBJECTS = ("metrics", "diagnostics", "undefined", "usage", "input", "uncertain")
#: Fields that hold a list of objects when present.
_LISTS = ("response_claims", "reference_claims", "chunks", "judges")
#: Claim fields that hold chunk positions.
_POSITIONS = ("entailed_by", "contradicted_by", "leaked_from", "misattributed_from")


def iter_objects(path: str | Path, expected: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of a JSONL file of objects.

    A line that is not UTF-8, not JSON or not an object is an :class:`InvalidInput` naming
    the file and line; ``expected`` says what the file should hold.
    """
    p = Path(path)
    with p.open(encoding="utf-8", errors="surrogateescape") as fh:
        for n, line in enumerate(fh, 1):
            # Garbage bytes decode to surrogates here so the line number can be named.
            if any("\udc80" <= ch <= "\udcff" for ch in line):
                raise InvalidInput(f"{p}, line {n}: not UTF-8 text; {expected}")
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"{p}, line {n}: not JSON ({exc.msg}); {expected}") from None
            if not isinstance(row, dict):
                raise InvalidInput(f"{p}, line {n}: not a JSON object; {expected}")
            yield n, row


def _number(value: Any) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)
                             and math.isfinite(value))


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(value), "a number")


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _position(value: Any) -> bool:
    return _int(value) and value >= 0


def _claims_problem(field: str, claims: list[Any]) -> str | None:
    for k, claim in enumerate(claims):
        for key in _POSITIONS:
            pos = claim.get(key)
            if pos is not None and not (isinstance(pos, list) and all(map(_position, pos))):
                return f"'{field}[{k}].{key}' is {_kind(pos)}, not a list of chunk positions"
        text = claim.get("text")
        if text is not None and not isinstance(text, str):
            return f"'{field}[{k}].text' is {_kind(text)}, not a string"
        closest = claim.get("closest_chunk")
        if closest is not None and not _position(closest):
            return f"'{field}[{k}].closest_chunk' is {_kind(closest)}, not a chunk position"
        spans = claim.get("misattributed_spans")
        if spans is not None and not (isinstance(spans, list) and all(
                isinstance(s, dict) and all(_position(s.get(e)) for e in ("chunk", "start", "end"))
                for s in spans)):
            return (f"'{field}[{k}].misattributed_spans' is {_kind(spans)}, not a list of "
                    "{chunk, start, end} spans")
    return None


def _input_problem(inp: Mapping[str, Any]) -> str | None:
    for key in ("user_input", "response", "reference"):
        if inp.get(key) is not None and not isinstance(inp[key], str):
            return f"'input.{key}' is {_kind(inp[key])}, not a string"
    for key in ("retrieved_contexts", "chunk_ids"):
        if inp.get(key) is not None and not isinstance(inp[key], list):
            return f"'input.{key}' is {_kind(inp[key])}, not a list"
    return _history_problem(inp.get("history"))


#: The roles a result row's ``input.history`` may name (what ``Sample.to_record`` writes).
_ROLES = ("user", "assistant", "system")


def history_turns(inp: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The turns before the question of a result row's ``input`` (``history``, as
    ``Sample.to_record`` writes it), as ``(role, text)``; empty for a single turn."""
    turns = inp.get("history")
    if not isinstance(turns, list):
        return []
    return [(str(t.get("role", "")), str(t.get("content", ""))) for t in turns
            if isinstance(t, Mapping)]


def _history_problem(history: Any) -> str | None:
    """``input.history``: absent for a single turn, else ``[{"role", "content"}]``."""
    if history is None:
        return None
    if not isinstance(history, list):
        return f"'input.history' is {_kind(history)}, not a list of turns"
    for k, turn in enumerate(history):
        if not isinstance(turn, dict):
            return f"'input.history[{k}]' is {_kind(turn)}, not a {{role, content}} object"
        if turn.get("role") not in _ROLES:
            return f"'input.history[{k}].role' is {turn.get('role')!r}, not one of {', '.join(_ROLES)}"
        if not isinstance(turn.get("content"), str):
            return f"'input.history[{k}].content' is {_kind(turn.get('content'))}, not a string"
    return None


def _problem(row: Mapping[str, Any]) -> str | None:
    """What makes ``row`` unusable as a result row, or None."""
    if row.get("status") not in ("ok", "undefined", "error"):
        return "not a result row (no status ok/undefined/error)"
    if "metrics" not in row:
        return "field 'metrics' is missing"
    for key in _OBJECTS:
        if key in row and not isinstance(row[key], dict) and not (key != "metrics"
                                                                  and row[key] is None):
            return f"field '{key}' is {_kind(row[key])}, not an object"
    for key in ("metrics", "diagnostics"):
        for name, value in (row.get(key) or {}).items():
            if not _number(value):
                return f"field '{key}.{name}' is {_kind(value)}, not a number or null"
    for name, value in (row.get("usage") or {}).items():
        if not _number(value) or (value is None and name != "cost_usd"):
            return f"field 'usage.{name}' is {_kind(value)}, not a number"
    found = _input_problem(row.get("input") or {})
    if found:
        return f"field {found}"
    for key in _LISTS:
        value = row.get(key)
        if value is None:
            continue
        if not isinstance(value, list):
            return f"field '{key}' is {_kind(value)}, not a list"
        bad = next((k for k, item in enumerate(value) if not isinstance(item, dict)), None)
        if bad is not None:
            return f"field '{key}[{bad}]' is {_kind(value[bad])}, not an object"
        if key.endswith("_claims"):
            found = _claims_problem(key, value)
            if found:
                return f"field {found}"
    if "index" in row and not _int(row["index"]):
        return f"field 'index' is {_kind(row['index'])}, not a row number"
    return None


def check_result(row: Mapping[str, Any], path: str | Path, line: int) -> None:
    """Raise :class:`InvalidInput` naming ``path``, ``line`` and the field when ``row`` is
    not a result row the commands can read."""
    problem = _problem(row)
    if problem is not None:
        raise InvalidInput(f"{path}, line {line}: {problem}; {RESULTS_HINT}")


def iter_results(path: str | Path) -> Iterator[dict[str, Any]]:
    """The rows of a results JSONL file, one at a time (a 100,000-row file never sits in
    memory), each checked by :func:`check_result`."""
    p = Path(path)
    if not p.is_file():
        raise InvalidInput(f"{p}: no such results file")
    seen = False
    for n, row in iter_objects(p, RESULTS_HINT):
        check_result(row, p, n)
        seen = True
        yield row
    if not seen:
        raise InvalidInput(f"{p}: no result rows")


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """Rows of a results JSONL file (``noisegauge score --out x.jsonl``), validated."""
    return list(iter_results(path))
