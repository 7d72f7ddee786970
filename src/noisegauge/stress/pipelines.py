"""The RAG pipeline under test: anything that answers a question from given contexts.

``get_pipeline(spec)`` accepts:

- ``"extractive"`` / ``"extractive:strict"``: the bundled *naive baseline* (offline demo only);
- ``"openai:MODEL"``: an OpenAI-compatible chat endpoint with an editable prompt template;
- ``"http://..."`` / ``"https://..."``: an existing RAG service taking JSON (its request body
  and the JSON path of the answer are configurable);
- ``"package.module:function"``: a Python callable ``(question, contexts) -> answer``, sync or async;
- a callable or a ``Pipeline`` object, passed through.

A golden row of a conversation carries the turns before its question: a callable (or a
``Pipeline``'s ``generate``) with a ``history`` parameter gets them as
``[{"role", "content"}]``, oldest first; the ``openai:`` pipeline sends them as chat
messages before the prompt. Other pipelines answer the last question alone (a warning says so).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from .._async import in_daemon_thread
from .._identity import identity_of
from ..errors import InvalidInput

__all__ = ["Pipeline", "CallablePipeline", "PipelineExit", "PipelineInterrupted", "get_pipeline",
           "pipeline_identity", "takes_history", "takes_option"]


class PipelineExit(Exception):
    """The pipeline called ``sys.exit()`` (raised ``SystemExit``): that sample's error."""


class PipelineInterrupted(Exception):
    """The pipeline raised ``KeyboardInterrupt``: that sample's error, and the run stops."""


@runtime_checkable
class Pipeline(Protocol):
    """Answers ``question`` from ``contexts``. Optional extras a runner looks for:
    ``identity() -> dict`` (cache key), ``cacheable: bool``, ``should_retry(exc) -> bool``,
    ``async aclose()``."""

    async def generate(self, question: str, contexts: Sequence[str]) -> str: ...


def takes_history(fn: object) -> bool:
    """Whether ``fn`` (a pipeline callable or a ``generate`` method) has a ``history``
    parameter that can be passed by keyword."""
    if not callable(fn):
        return False
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin or a C callable: no signature to read
        return False
    param = params.get("history")
    return param is not None and param.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                inspect.Parameter.KEYWORD_ONLY)


def pipeline_identity(pipeline: object) -> dict[str, Any]:
    """What identifies a pipeline's answers; its class path when it does not say."""
    return identity_of(pipeline, "pipeline")


class CallablePipeline:
    """Wraps ``fn(question, contexts) -> answer``. Sync functions run in a daemon thread each,
    so several generations overlap and a call abandoned by its timeout never holds up the
    run or the process exit; async functions (or ones returning an awaitable) are awaited and
    cancelled by the timeout. ``sys.exit()`` in the function becomes that sample's error
    (``PipelineExit``); ``KeyboardInterrupt`` too (``PipelineInterrupted``), and stops the run."""

    def __init__(self, fn: Callable[..., Any], name: str | None = None) -> None:
        if not callable(fn):
            raise InvalidInput(f"pipeline {fn!r} is not callable")
        self._fn = fn
        self._name = name or f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"
        # Objects with an async __call__ are caught by the awaitable check in generate().
        self._async = inspect.iscoroutinefunction(fn)
        self._history = takes_history(fn)

    @property
    def takes_history(self) -> bool:
        """Whether the function takes the conversation (a ``history`` parameter)."""
        return self._history

    def identity(self) -> dict[str, Any]:
        # The source hash makes an edited function miss the generation cache instead of
        # silently replaying answers of the old code.
        try:
            code = hashlib.sha256(inspect.getsource(self._fn).encode()).hexdigest()[:16]
        except (OSError, TypeError):
            code = None
        return {"pipeline": "callable", "target": self._name, "source_sha256": code}

    def should_retry(self, exc: BaseException) -> bool:
        return isinstance(exc, (TimeoutError, ConnectionError))

    async def generate(self, question: str, contexts: Sequence[str],
                       history: Sequence[Mapping[str, str]] | None = None) -> str:
        """``history``: the turns before ``question``; passed on (``[]`` for a single turn)
        when the function takes a ``history`` parameter, else left out."""
        fn: Callable[..., Any] = self._fn
        if self._history:
            fn = functools.partial(self._fn, history=[dict(t) for t in history or ()])
        try:
            if self._async:
                result = await fn(question, list(contexts))
            else:
                result = await in_daemon_thread(fn, question, list(contexts))
                if inspect.isawaitable(result):
                    result = await result
        except SystemExit as exc:
            raise PipelineExit(f"pipeline {self._name} called sys.exit({exc.code!r})") from None
        except KeyboardInterrupt:
            raise PipelineInterrupted(f"pipeline {self._name} raised KeyboardInterrupt") from None
        if not isinstance(result, str):
            raise TypeError(f"pipeline {self._name} returned {type(result).__name__}, "
                            "expected the answer as a str")
        return result


def _import_target(spec: str) -> Callable[..., Any]:
    module, _, attr = spec.partition(":")
    try:
        obj: Any = importlib.import_module(module)
    except ImportError as exc:
        raise InvalidInput(f"pipeline {spec!r}: cannot import module {module!r} ({exc}); "
                           "is it on PYTHONPATH?") from exc
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise InvalidInput(f"pipeline {spec!r}: module {module!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise InvalidInput(f"pipeline {spec!r} is not callable")
    return obj  # type: ignore[no-any-return]


_OPTIONS_FOR = {
    "openai": {"base_url", "api_key", "prompt", "temperature", "max_tokens", "timeout"},
    "http": {"request_template", "answer_path", "headers", "timeout"},
}


def get_pipeline(spec: str | Pipeline | Callable[..., Any], **options: Any) -> Pipeline:
    """Build a pipeline from a spec (see the module docstring).

    Options that do not apply to the pipeline kind are an error, so a misplaced flag such as
    ``--answer-path`` with an ``openai:`` pipeline is caught instead of being ignored.

    >>> get_pipeline("extractive:strict").identity()["variant"]
    'strict'
    """
    given = {k: v for k, v in options.items() if v is not None}
    if not isinstance(spec, str):
        _check_options("a Python object", given, set())
        if isinstance(spec, Pipeline):
            return spec
        return CallablePipeline(spec)
    spec = spec.strip()
    if spec.startswith(("http://", "https://")):
        _check_options(spec, given, _OPTIONS_FOR["http"])
        from .remote import HttpJsonPipeline
        return HttpJsonPipeline(spec, **given)
    kind, sep, arg = spec.partition(":")
    if kind == "extractive":
        _check_options(spec, given, set())
        from .extractive import ExtractivePipeline
        if arg not in ("", "strict"):
            raise InvalidInput(f"unknown extractive variant {arg!r}; use 'extractive' or "
                               "'extractive:strict'")
        return ExtractivePipeline(strict=arg == "strict")
    if kind == "openai":
        if not arg:
            raise InvalidInput("openai pipeline needs a model: openai:MODEL")
        _check_options(spec, given, _OPTIONS_FOR["openai"])
        from .remote import OpenAIChatPipeline
        return OpenAIChatPipeline(arg, **given)
    if sep and arg:
        _check_options(spec, given, set())
        return CallablePipeline(_import_target(spec), name=spec)
    raise InvalidInput(f"unknown pipeline {spec!r}: expected extractive, extractive:strict, "
                       "openai:MODEL, an http(s):// URL, or module:function")


def takes_option(spec: object, option: str) -> bool:
    """Whether the pipeline kind of ``spec`` accepts ``option`` (e.g. ``timeout``)."""
    if not isinstance(spec, str):
        return False
    spec = spec.strip()
    kind = "http" if spec.startswith(("http://", "https://")) else spec.partition(":")[0]
    return option in _OPTIONS_FOR.get(kind, set())


def _check_options(spec: str, given: Mapping[str, Any], allowed: set[str]) -> None:
    extra = sorted(set(given) - allowed)
    if extra:
        raise InvalidInput(f"option(s) {', '.join(extra)} do not apply to pipeline {spec!r}")
