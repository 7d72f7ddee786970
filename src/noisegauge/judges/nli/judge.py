"""A local NLI judge: any Hugging Face sequence-classification model that reads
(premise, hypothesis) pairs, such as DeBERTa/RoBERTa MNLI cross-encoders or FEVER checkers.

    judge = get_judge("nli:cross-encoder/nli-deberta-v3-base", device="cuda", batch_size=32)
    judge = get_judge("nli:/models/my-nli", label_map={"yes": "ENTAILED", "no": "NEUTRAL"})

How a verdict is made:

1. Each premise is cut into windows of ``window_tokens`` tokens overlapping by
   ``window_overlap`` (``support.split_windows``); a short premise is one window.
   The window size is fixed per judge, not per call, so a (premise, claim) verdict never
   depends on which other claims share the call.
2. Every (window, claim) pair of a ``check_many`` call is tokenized at once, sorted by
   length and run in padded batches of ``batch_size``. Class probabilities are summed
   per verdict (several classes may mean the same thing) and the most probable verdict
   is the window's verdict.
3. Windows are merged per claim: entailed if any window entails, else contradicted if
   any contradicts, else neutral (reasons in ``merge_windows``).

Claims are extracted by another judge (``extractor``, "lexical" by default). Inference
runs in one worker thread, so the event loop stays free and the model is never used by
two threads at once. Each forward batch is recorded as one call (no tokens, no cost).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import InvalidInput, JudgeUnavailable, MissingDependency
from ...verdicts import Verdict
from ..base import ConversationalExtractor, Judge, Usage, judge_identity, record_usage

if TYPE_CHECKING:
    from ...samples import Turn
from .support import NLIScore, fingerprint, merge_windows, resolve_labels, split_windows

__all__ = ["NLIJudge", "NLIScore", "make_judge"]

_ORDER = (Verdict.ENTAILED, Verdict.NEUTRAL, Verdict.CONTRADICTED)


def make_judge(arg: str | None, **kwargs: Any) -> NLIJudge:
    """Registry factory for ``get_judge("nli:PATH_OR_NAME", **kwargs)``."""
    if not arg or not arg.strip():
        raise InvalidInput("the nli judge needs a model: nli:PATH_OR_NAME, e.g. "
                           "nli:cross-encoder/nli-deberta-v3-base or nli:/path/to/model")
    return NLIJudge(arg.strip(), **kwargs)


def _import_backend() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError:
        raise MissingDependency("the NLI judge", "nli", "torch and transformers") from None
    return torch, transformers


class NLIJudge:
    """Judges claims with a local NLI cross-encoder. See the module docstring."""

    #: Windowing, merging and label reading decide verdicts too (the weights are in the
    #: fingerprint): their content is part of the identity.
    identity_sources = ("noisegauge.judges.nli",)

    def __init__(self, model: str, *, device: str | None = None, batch_size: int = 16,
                 max_length: int | None = None, window_tokens: int | None = None,
                 window_overlap: int | None = None,
                 label_map: Mapping[Any, Any] | None = None,
                 extractor: Judge | str = "lexical", revision: str | None = None,
                 local_files_only: bool | None = None) -> None:
        torch, transformers = _import_backend()
        self._torch = torch
        self.model_name = model
        self.revision = revision
        self._tokenizer, self._model = _load(transformers, model, revision, local_files_only)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        try:
            self._model.to(self.device).eval()
            if self._model.device.type == "cpu":  # half-precision weights are slow on CPUs
                self._model.float()
        except (RuntimeError, AssertionError, ValueError) as exc:  # e.g. cuda without a GPU
            raise InvalidInput(f"nli judge cannot use device {self.device!r}: {exc}") from None
        config = self._model.config
        self.labels: tuple[Verdict, ...] = resolve_labels(config.id2label, label_map)
        self._label_names = [str(config.id2label[i]) for i in range(len(self.labels))]

        limit = getattr(self._tokenizer, "model_max_length", None)
        if not isinstance(limit, int) or limit > 100_000:  # 1e30 means "not set"
            limit = min(512, getattr(config, "max_position_embeddings", 512))
        self.max_length = min(512, limit) if max_length is None else max_length
        specials = self._tokenizer.num_special_tokens_to_add(pair=True)
        # A quarter of the input is kept for the claim; a longer claim trims the window's
        # tail, which the next window's overlap covers.
        self.window_tokens = (self.max_length - specials - self.max_length // 4
                              if window_tokens is None else window_tokens)
        self.window_overlap = (self.window_tokens // 4 if window_overlap is None
                               else window_overlap)
        self.batch_size = batch_size
        self._check_settings(limit, specials)

        self._fingerprint = fingerprint(model, config.to_json_string(),
                                        getattr(config, "_commit_hash", None) or revision)
        self._extractor_spec = extractor
        self._extractor: Judge | None = None if isinstance(extractor, str) else extractor
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None

    def _check_settings(self, limit: int, specials: int) -> None:
        problems = []
        if self.max_length > limit:
            problems.append(f"max_length={self.max_length} exceeds the model's {limit} tokens")
        if not 0 < self.window_tokens <= self.max_length - specials - 1:
            problems.append(f"window_tokens={self.window_tokens} must be in 1.."
                            f"{self.max_length - specials - 1} (max_length minus special "
                            "tokens minus room for the claim)")
        if not 0 <= self.window_overlap < self.window_tokens:
            problems.append(f"window_overlap={self.window_overlap} must be in 0.."
                            f"{self.window_tokens - 1}")
        if self.batch_size < 1:
            problems.append(f"batch_size={self.batch_size} must be >= 1")
        if problems:
            raise InvalidInput("nli judge: " + "; ".join(problems))

    @property
    def extractor(self) -> Judge:
        """The judge that extracts claims, built on first use."""
        if self._extractor is None:
            from ..registry import get_judge
            self._extractor = get_judge(self._extractor_spec)
        return self._extractor

    def identity(self) -> dict[str, Any]:
        """Everything that changes this judge's answers (device and batch size do not)."""
        return {"judge": "nli", "model": self.model_name, "revision": self.revision,
                "fingerprint": self._fingerprint, "dtype": str(self._model.dtype),
                "max_length": self.max_length,
                "window_tokens": self.window_tokens, "window_overlap": self.window_overlap,
                "labels": {n: v.value for n, v in zip(self._label_names, self.labels, strict=True)},
                "merge": "entailed>contradicted>neutral",
                "extractor": judge_identity(self.extractor)}

    async def extract(self, text: str, question: str | None = None) -> list[str]:
        return await self.extractor.extract(text, question)

    @property
    def conversation_version(self) -> str:
        """The extractor's (the cache key of a conversational extraction)."""
        return str(getattr(self.extractor, "conversation_version", ""))

    async def extract_in_conversation(self, text: str, question: str | None,
                                      history: Sequence[Turn]) -> list[str]:
        """The extractor's standalone claims when it reads histories, else its plain ones."""
        extractor = self.extractor
        if isinstance(extractor, ConversationalExtractor):
            return await extractor.extract_in_conversation(text, question, history)
        return await extractor.extract(text, question)

    async def check(self, premise: str, claims: Sequence[str]) -> list[Verdict]:
        return (await self.check_many([premise], claims))[0]

    async def check_many(self, premises: Sequence[str],
                         claims: Sequence[str]) -> list[list[Verdict]]:
        """``result[p][c]``; all windows x claims of the call share the same batches."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="noisegauge-nli")
        loop = asyncio.get_running_loop()
        scores, batches = await loop.run_in_executor(self._executor, self._score,
                                                     list(premises), list(claims))
        record_usage(Usage(calls=batches))  # here, in the caller's context, not the worker's
        return [[s.verdict for s in row] for row in scores]

    def predict(self, premises: Sequence[str], claims: Sequence[str]) -> list[list[NLIScore]]:
        """Synchronous scores with the deciding window, ``result[p][c]``."""
        scores, batches = self._score(list(premises), list(claims))
        record_usage(Usage(calls=batches))
        return scores

    def _score(self, premises: list[str], claims: list[str]) -> tuple[list[list[NLIScore]], int]:
        # The lock also covers tokenizing: a fast tokenizer changes its truncation state
        # on each call and fails ("Already borrowed") when two threads share it.
        with self._lock:
            windows = [split_windows(self._tokenizer, p, self.window_tokens,
                                     self.window_overlap) for p in premises]
            probs, batches = self._infer([(w, c) for ws in windows for w in ws for c in claims])
        result, k = [], 0
        for ws in windows:
            per_claim: list[list[tuple[Verdict, float]]] = [[] for _ in claims]
            for _ in ws:
                for c in range(len(claims)):
                    per_claim[c].append(probs[k])
                    k += 1
            result.append([merge_windows(s) for s in per_claim])
        return result, batches

    def _infer(self, pairs: list[tuple[str, str]]) -> tuple[list[tuple[Verdict, float]], int]:
        """(verdict, probability) per pair, in input order, and the number of batches."""
        if not pairs:
            return [], 0
        torch, tok = self._torch, self._tokenizer
        enc = tok([p for p, _ in pairs], [c for _, c in pairs], truncation="longest_first",
                  max_length=self.max_length)
        keys = [k for k in tok.model_input_names if k in enc]
        order = sorted(range(len(pairs)), key=lambda i: -len(enc["input_ids"][i]))
        out: list[tuple[Verdict, float]] = [(Verdict.NEUTRAL, 0.0)] * len(pairs)
        # Column j of this matrix adds up the classes that mean verdict _ORDER[j].
        to_verdict = torch.zeros(len(self.labels), len(_ORDER))
        for i, v in enumerate(self.labels):
            to_verdict[i, _ORDER.index(v)] = 1.0
        batches = 0
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                idx = order[start:start + self.batch_size]
                batch = tok.pad({k: [enc[k][i] for i in idx] for k in keys}, return_tensors="pt")
                logits = self._model(**{k: t.to(self.device) for k, t in batch.items()}).logits
                vp = logits.float().softmax(-1).cpu() @ to_verdict
                best_p, best = vp.max(-1)
                for i, j, p in zip(idx, best.tolist(), best_p.tolist(), strict=True):
                    out[i] = (_ORDER[j], p)
                batches += 1
        return out, batches


def _load(transformers: Any, model: str, revision: str | None,
          local_files_only: bool | None) -> tuple[Any, Any]:
    """Tokenizer and model; a local directory never touches the network."""
    path = Path(model).expanduser()
    local = path.exists()
    if not local and (model.startswith((".", "/", "~")) or model.count("/") > 1):
        raise InvalidInput(f"nli model directory {model!r} does not exist")
    kwargs: dict[str, Any] = {"local_files_only": local if local_files_only is None
                              else local_files_only}
    if revision is not None:
        kwargs["revision"] = revision
    source = str(path) if local else model
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(source, **kwargs)
        clf = transformers.AutoModelForSequenceClassification.from_pretrained(source, **kwargs)
    except (OSError, ValueError) as exc:
        if local:
            raise InvalidInput(f"cannot load an NLI model from directory {model!r}: {exc} "
                               "(expected a model saved with save_pretrained: config.json, "
                               "weights and tokenizer files)") from exc
        raise JudgeUnavailable(
            f"cannot load NLI model {model!r}: {exc}. A hub name is resolved by transformers; "
            "offline (no network, HF_HUB_OFFLINE=1 or local_files_only=True) it must already "
            f"be in the Hugging Face cache: run `hf download {model}` once where there is "
            "network, or pass the path of a local copy.") from exc
    return tokenizer, clf
