"""Which documents leak: wrong claims traced back to their sources across a whole run.

``identity`` names a chunk's source; ``aggregate`` streams a results file into per-source
counts; ``topk`` asks what another top-k would have kept; ``render`` prints both.
"""

from .identity import chunk_sources, text_digest

__all__ = ["chunk_sources", "text_digest"]
