"""EXPERIMENT, not shipped: a paraphrase signal for the lexical judge from WordLlama's static
word embeddings. ``train_lexical.py --embed`` adds these features and reports accuracy; on
held-out sources they did not help (numbers in the git log), so no judge uses them.
Needs ``pip install wordllama==0.4.0.post1`` (not a noisegauge extra).

The model (LLaMA-2 token embeddings distilled to 256 dimensions, ~16 MB) ships inside the
``wordllama`` wheel (extra ``embed``). It is loaded from the installed files only: WordLlama's
own ``load()`` looks for the tokenizer in a folder the wheel does not have and then downloads
it, so this module builds the inference object from the packaged files itself and never
touches the network.

Three features, all "more is more entailed" (monotone up):
``emb_win``  cosine of the claim with its most similar window of 1-3 premise sentences;
``emb_doc``  cosine of the claim with the whole premise;
``soft_cov`` weighted share of the claim's content words missing from the aligned window
             that a window word stands in for (word cosine >= ``SOFT_TAU``), e.g.
             "cancelled" / "terminated".
"""

from __future__ import annotations

import logging
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from noisegauge.judges.lexical.features import Analysis
from noisegauge.judges.lexical.split import sentence_spans

if TYPE_CHECKING:
    import numpy as np

__all__ = ["EMBED_FEATURES", "EMBED_MONOTONE", "MODEL_NAME", "SOFT_TAU", "Embedder", "load_embedder"]

EMBED_FEATURES = ("emb_win", "emb_doc", "soft_cov")
EMBED_MONOTONE = (1, 1, 1)
MODEL_NAME = "wordllama-l2_supercat_256"
#: Word cosine at which a premise word stands in for a missing claim word. Near-synonyms and
#: spelling variants score 0.45-0.7 in this space; unrelated words stay under 0.2.
SOFT_TAU = 0.45
_WEIGHTS = ("weights", "l2_supercat_256.safetensors")
_TOKENIZER = ("tokenizers", "l2_supercat_tokenizer_config.json")
_MAX_WINDOW = 3


class Embedder:
    """Unit-norm embeddings of texts and words (mean of token vectors), cached."""

    def __init__(self, inference: Any) -> None:
        self._wl = inference
        self._sentences = lru_cache(maxsize=4096)(self._sentence_sums)
        self._words: dict[str, np.ndarray] = {}

    def _sentence_sums(self, text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per sentence of ``text`` (split as ``analyse`` splits): token-vector sums and
        token counts; and the whole text's unit vector."""
        import numpy as np

        spans = sentence_spans(text) or [(0, len(text))]
        sums, counts = [], []
        emb = self._wl.embedding
        for enc in self._wl.tokenize([text[a:b] for a, b in spans]):
            ids = [i for i, m in zip(enc.ids, enc.attention_mask, strict=True) if m]
            sums.append(emb[ids].sum(axis=0) if ids else np.zeros(emb.shape[1], np.float32))
            counts.append(len(ids))
        s, c = np.array(sums), np.array(counts, float)
        return s, c, _unit(s.sum(axis=0) / max(1.0, c.sum()))

    def text(self, text: str) -> np.ndarray:
        return self._sentences(text)[2]

    def word_matrix(self, words: list[str]) -> np.ndarray:
        """Unit vectors of ``words`` (rows), cached per word."""
        import numpy as np

        new = [w for w in dict.fromkeys(words) if w not in self._words]
        if new:
            for w, v in zip(new, self._wl.embed(new, norm=True), strict=True):
                self._words[w] = v
        return np.array([self._words[w] for w in words]).reshape(len(words), -1)

    def features(self, premise: str, claim: str, prem: Analysis, win: range,
                 missing: list[tuple[str, float]]) -> list[float]:
        """``EMBED_FEATURES`` of a pair; ``missing`` holds (word text, weight) of the claim
        content words the lexical features found absent from window ``win``."""

        sums, counts, whole = self._sentences(premise)
        c = self.text(claim)
        emb_win = -1.0
        for i in range(len(counts)):
            for j in range(i, min(i + _MAX_WINDOW, len(counts))):
                v = sums[i:j + 1].sum(axis=0) / max(1.0, counts[i:j + 1].sum())
                emb_win = max(emb_win, float(_unit(v) @ c))
        soft = 1.0
        if missing:
            window_words = sorted({t.text.lower() for t, s in zip(prem.tokens, prem.sent_of, strict=True)
                                   if s in win and not t.stop})
            total = sum(w for _, w in missing)
            if window_words and total:
                sims = self.word_matrix([m for m, _ in missing]) @ self.word_matrix(window_words).T
                best = sims.max(axis=1)
                soft = float(sum(w for (_, w), b in zip(missing, best, strict=True) if b >= SOFT_TAU) / total)
            else:
                soft = 0.0
        return [emb_win, float(whole @ c), soft]


def _unit(v: np.ndarray) -> np.ndarray:
    import numpy as np

    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


@lru_cache(maxsize=1)
def load_embedder() -> Embedder:
    """The packaged WordLlama model, read from the installed wheel (no download)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        from safetensors import safe_open
        from tokenizers import Tokenizer
        from wordllama.inference import WordLlamaInference  # type: ignore[import-untyped]
    except ImportError as exc:
        raise SystemExit("--embed needs: pip install wordllama==0.4.0.post1") from exc
    finally:
        # wordllama's import calls logging.basicConfig(INFO): undo it, logging is the app's.
        for h in root.handlers[:]:
            if h not in handlers:
                root.removeHandler(h)
        root.setLevel(level)
    pkg = resources.files("wordllama")
    with resources.as_file(pkg / _WEIGHTS[0] / _WEIGHTS[1]) as path, \
            safe_open(str(path), framework="np", device="cpu") as f:
        matrix = f.get_tensor("embedding.weight")
    with resources.as_file(pkg / _TOKENIZER[0] / _TOKENIZER[1]) as path:
        tokenizer = Tokenizer.from_file(str(path))
    return Embedder(WordLlamaInference(matrix, tokenizer))
