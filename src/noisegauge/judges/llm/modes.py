"""Output modes: how a request asks for JSON, and which way an endpoint supports, learnt
from its answers.

The ladder, best first (``MODES``):

1. ``json_schema``: ``response_format`` JSON Schema, strict (OpenAI, vLLM, Ollama >= 0.5,
   LM Studio, llama.cpp's own server);
2. ``json_object_schema``: ``{"type": "json_object", "schema": ...}``, which
   llama-cpp-python's server accepts and enforces while it answers ``json_schema`` with HTTP 500;
3. the server's own guided decoding, tried only where ``GET /models`` says whose server it
   is: vLLM's ``structured_outputs`` (newer) or ``guided_json`` (older), Ollama's ``format``;
4. ``json_object``: plain JSON mode;
5. ``text``: no constraint; the answer is read tolerantly (``output``).

A mode is *refused* when the server answers HTTP 400, 422, 500 or 501 with a body that
names what the mode sent (``response_format``, ``json_schema``, ``schema``...). Such an
answer is not retried: the next mode is tried at once. Every other error is what it
is (a 500 that names nothing is retried, a 400 that names nothing is an error).

``Negotiation`` holds one endpoint's state for the whole process. While no mode is known
to work, one request at a time tries the next candidate and the others wait for it, so a
refused mode costs one request per endpoint, not one per concurrent call. The outcome is
saved in the judge cache (``attach``), so a rerun starts with the mode that worked.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from typing import Any

from ...infra.store import JudgeCache

__all__ = ["FAMILY_MODES", "MODES", "Negotiation", "family_of", "negotiation", "refused",
           "request_fields"]

MODES = ("json_schema", "json_object_schema", "vllm_structured_outputs", "vllm_guided_json",
         "ollama_format", "json_object", "text")

#: Modes only tried on a server known to be of that family.
FAMILY_MODES = {"vllm": ("vllm_structured_outputs", "vllm_guided_json"),
                "ollama": ("ollama_format",)}

#: What a refusal of each mode names (lower case).
_NAMES: dict[str, tuple[str, ...]] = {
    "json_schema": ("response_format", "json_schema", "schema", "json_object"),
    "json_object_schema": ("response_format", "json_object", "schema"),
    "vllm_structured_outputs": ("structured_outputs", "guided"),
    "vllm_guided_json": ("guided_json", "guided"),
    "ollama_format": ("format",),
    "json_object": ("response_format", "json_object"),
    "text": (),
}
_REFUSAL_STATUS = (400, 422, 500, 501)
_CACHE_NS = "noisegauge.output-mode"
_CACHE_VERSION = 1


def request_fields(mode: str, name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The request-body fields that ask for ``mode`` (sent as ``extra_body``)."""
    if mode == "json_schema":
        return {"response_format": {"type": "json_schema", "json_schema": {
            "name": name, "schema": schema, "strict": True}}}
    if mode == "json_object_schema":
        return {"response_format": {"type": "json_object", "schema": schema}}
    if mode == "vllm_structured_outputs":
        return {"structured_outputs": {"json": schema}}
    if mode == "vllm_guided_json":
        return {"guided_json": schema}
    if mode == "ollama_format":
        return {"format": schema}
    if mode == "json_object":
        return {"response_format": {"type": "json_object"}}
    return {}


def refused(status: int, body: str, mode: str) -> bool:
    """Whether an error answer says the server does not support ``mode``."""
    text = body.lower()
    return status in _REFUSAL_STATUS and any(word in text for word in _NAMES.get(mode, ()))


def family_of(owned_by: str | None) -> str | None:
    """The server family from ``GET /models``' ``owned_by`` (vLLM says "vllm"; Ollama
    "library" or "ollama"); None when it does not tell."""
    owner = (owned_by or "").strip().lower()
    if owner == "vllm":
        return "vllm"
    if owner in ("ollama", "library"):
        return "ollama"
    return None


class Negotiation:
    """What one endpoint (base URL + model) supports, shared by every judge in the process."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.working: str | None = None
        self.refused: list[str] = []
        self.family: str | None = None
        self.from_cache = False
        self._store: JudgeCache | None = None
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary())

    def attach(self, store: JudgeCache) -> None:
        """Remember outcomes in ``store``; adopt what it learnt before, unless this process
        already knows better."""
        self._store = store
        if self.working is not None or self.refused:
            return
        saved = store.get(self._cache_key())
        if not isinstance(saved, dict) or saved.get("version") != _CACHE_VERSION:
            return
        mode, refused_modes = saved.get("mode"), saved.get("refused")
        if mode in MODES and isinstance(refused_modes, list):
            self.working = mode
            self.refused = [m for m in refused_modes if m in MODES and m != mode]
            family = saved.get("family")
            self.family = family if family in FAMILY_MODES else self.family
            self.from_cache = True

    def _cache_key(self) -> bytes:
        return JudgeCache.key(_CACHE_NS, "mode", self.key)

    def _save(self) -> None:
        if self._store is not None and self.working is not None:
            # Named as its producer (``cache info``): the endpoint's output-mode note.
            self._store.put(self._cache_key(), {"version": _CACHE_VERSION, "mode": self.working,
                                                "refused": self.refused, "family": self.family},
                            namespace=json.dumps({"judge": "output-mode note",
                                                  "model": self.key}), method="mode")

    def lock(self) -> asyncio.Lock:
        """The lock that lets one request at a time try an unproven mode (per event loop)."""
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            lock = self._locks[loop] = asyncio.Lock()
        return lock

    def candidate(self) -> str:
        """The best mode not refused yet (``text`` is never refused)."""
        skip = {m for fam, ms in FAMILY_MODES.items() if fam != self.family for m in ms}
        return next(m for m in MODES if m not in skip and m not in self.refused)

    def settle(self, mode: str) -> None:
        if self.working != mode:
            self.working = mode
            self._save()

    def refuse(self, mode: str) -> None:
        if mode != "text" and mode not in self.refused:
            self.refused.append(mode)
        if self.working == mode:
            self.working = None
            self.from_cache = False

    def report(self) -> dict[str, Any]:
        return {"mode": self.working, "refused": list(self.refused), "family": self.family,
                "from_cache": self.from_cache}


_NEGOTIATIONS: dict[str, Negotiation] = {}


def negotiation(key: str) -> Negotiation:
    """The process-wide negotiation state of endpoint ``key``."""
    if key not in _NEGOTIATIONS:
        _NEGOTIATIONS[key] = Negotiation(key)
    return _NEGOTIATIONS[key]
