"""Pure helpers of the NLI judge: label mapping, premise windows, window merging, fingerprints.

Kept apart from ``nli.py`` so they can be read (and tested) without torch.
"""

from __future__ import annotations

import hashlib
import re
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ..._identity import content_digest
from ...errors import InvalidInput
from ...verdicts import Verdict, parse_verdict

__all__ = ["NLIScore", "fingerprint", "merge_windows", "resolve_labels", "split_windows"]

E, N, C = Verdict.ENTAILED, Verdict.NEUTRAL, Verdict.CONTRADICTED

#: Label names used by public NLI and fact-checking models, after ``_norm``.
KNOWN_LABELS: dict[str, Verdict] = {
    **dict.fromkeys(["entailment", "entailed", "entails", "entail", "supports", "supported",
                     "support"], E),
    # Two-class models merge neutral and contradiction into "not entailed": all we may
    # conclude is that the claim is not supported, never that it is contradicted.
    **dict.fromkeys(["neutral", "not_enough_info", "not_enough_information", "nei",
                     "not_entailment", "not_entailed", "non_entailment", "no_entailment",
                     "not_supported", "unsupported"], N),
    **dict.fromkeys(["contradiction", "contradicted", "contradicts", "contradict", "refutes",
                     "refuted", "refute"], C),
}

#: Order of unnamed classes (``LABEL_0``...): the SNLI / MNLI / ANLI / RTE order of the
#: Hugging Face datasets, which is also what ynie/*-snli_mnli_fever_anli_R1_R2_R3-nli use.
GENERIC_ORDER: dict[int, tuple[Verdict, ...]] = {3: (E, N, C), 2: (E, N)}

_GENERIC = re.compile(r"label_(\d+)")


class NLIScore(NamedTuple):
    """The verdict of one claim against one premise, and the window that decided it."""

    verdict: Verdict
    probability: float  # of ``verdict`` in the deciding window
    window: int  # index of that window in the premise (-1: empty premise, no model call)


def _norm(label: str) -> str:
    return re.sub(r"[\s\-]+", "_", label.strip().lower())


def _as_verdict(value: object) -> Verdict:
    if isinstance(value, str) and value.strip().upper() in Verdict.__members__:
        return Verdict[value.strip().upper()]
    return parse_verdict(value)


def _hint(labels: Sequence[str]) -> str:
    example = ", ".join(f'"{lab}": "ENTAILED|NEUTRAL|CONTRADICTED"' for lab in labels)
    return (f"pass an explicit mapping, e.g. get_judge('nli:MODEL', label_map={{{example}}}) "
            "(keys: the model's labels or class ids; at least one class must be ENTAILED)")


def resolve_labels(id2label: Mapping[int, str],
                   label_map: Mapping[Any, Any] | None = None) -> tuple[Verdict, ...]:
    """The verdict of each output class of a model, from its ``config.id2label``.

    ``label_map`` overrides the automatic reading; it must cover every class.
    """
    ids = sorted(int(i) for i in id2label)
    labels = [str(id2label[i]) for i in ids]
    if ids != list(range(len(ids))) or len(ids) < 2:
        raise InvalidInput(f"the model's id2label {dict(id2label)} is not a classifier over "
                           "classes 0..n-1 with n >= 2; is this an NLI model?")
    if label_map is not None:
        by_name = {_norm(str(k)): v for k, v in label_map.items()}
        found: list[Verdict] = []
        for i, lab in zip(ids, labels, strict=True):
            value = label_map.get(i, by_name.get(_norm(lab), by_name.get(str(i))))
            if value is None:
                raise InvalidInput(f"label_map does not say what class {i} ({lab!r}) means; "
                                   f"the model's labels are {labels}. " + _hint(labels))
            try:
                found.append(_as_verdict(value))
            except ValueError as exc:
                raise InvalidInput(f"label_map[{lab!r}]: {exc}") from None
        verdicts = tuple(found)
    elif all(_norm(lab) in KNOWN_LABELS for lab in labels):
        verdicts = tuple(KNOWN_LABELS[_norm(lab)] for lab in labels)
    elif (all(_GENERIC.fullmatch(_norm(lab)) for lab in labels)
          and len(labels) in GENERIC_ORDER):
        verdicts = GENERIC_ORDER[len(labels)]
        # A guess, however common: say so once, at load time, and how to override it.
        warnings.warn(
            f"the NLI model has unnamed labels {labels}; assuming the SNLI/MNLI dataset order "
            f"{[v.value for v in verdicts]}. If that is wrong, " + _hint(labels),
            UserWarning, stacklevel=3)
    else:
        unknown = [lab for lab in labels if _norm(lab) not in KNOWN_LABELS]
        raise InvalidInput(f"cannot tell what the NLI model's labels {labels} mean "
                           f"(unrecognised: {unknown}); " + _hint(labels))
    if E not in verdicts:
        raise InvalidInput(f"no class of the NLI model means entailment (labels {labels} -> "
                           f"{[v.value for v in verdicts]}); " + _hint(labels))
    return verdicts


def split_windows(tokenizer: Any, text: str, size: int, overlap: int) -> list[str]:
    """Cut ``text`` into pieces of at most ``size`` tokens, consecutive pieces sharing
    ``overlap`` tokens, so a fact cut by one boundary is whole in the next window.

    Pieces are slices of the original text (via offsets) so nothing is re-spelled.
    """
    if not text.strip():
        return []
    try:
        enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True,
                        truncation=False, verbose=False)
        spans: list[tuple[int, int]] | None = [tuple(o) for o in enc["offset_mapping"]]
        ids = enc["input_ids"]
    except NotImplementedError:  # a slow (pure Python) tokenizer has no offsets
        ids = tokenizer(text, add_special_tokens=False, truncation=False,
                        verbose=False)["input_ids"]
        spans = None
    if len(ids) <= size:
        return [text]
    windows, start, step = [], 0, size - overlap
    while True:
        end = min(start + size, len(ids))
        if spans is not None:
            windows.append(text[spans[start][0]:spans[end - 1][1]])
        else:
            windows.append(tokenizer.decode(ids[start:end], skip_special_tokens=True))
        if end == len(ids):
            return windows
        start += step


def merge_windows(scores: Sequence[tuple[Verdict, float]]) -> NLIScore:
    """One verdict for a claim from the verdicts of all windows of a premise.

    Entailed if any window entails; else contradicted if any contradicts; else neutral.
    Among the windows agreeing with that verdict, the most probable one is reported.
    Entailment wins because it is monotone in the premise: text that holds a supporting
    passage supports the claim, whatever the other windows say; a window that merely
    misses the passage often looks like a mismatch to an NLI model, so letting it
    veto would punish a chunk for its length. A contradiction found in one window is
    likewise a contradiction of the whole text, so it beats "not mentioned". This is
    RAGChecker's rule for merging passages (Entailment > Contradiction > Neutral).
    """
    for verdict in (E, C, N):
        agreeing = [(p, i) for i, (v, p) in enumerate(scores) if v is verdict]
        if agreeing:
            p, i = max(agreeing)
            return NLIScore(verdict, p, i)
    return NLIScore(N, 1.0, -1)  # no window: an empty premise states nothing


def fingerprint(source: str, config_json: str, commit: str | None) -> str:
    """A short hash of what was loaded: the config, and the *content* of every file of a
    local model folder (weights, tokenizer, config: new weights of the same size are new
    weights) or, for a hub model, its commit (a hash of its files' content)."""
    h = hashlib.sha256(config_json.encode())
    path = Path(source).expanduser()
    if path.is_dir():
        h.update(content_digest(path).encode())  # read once, then remembered by size+mtime
    h.update((commit or "").encode())
    return h.hexdigest()[:16]
