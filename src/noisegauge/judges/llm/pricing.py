"""USD cost of a judge call from its token counts, with a small price table the user can override.

Prices are USD per 1M tokens ``(input, output)``. The built-in table covers a few common
OpenAI models at list price (standard tier, no cached-input discount); anything else,
including every local model, costs ``None`` (unknown) rather than a misleading 0 unless
the user supplies a price, e.g. ``prices={"llama3.1:8b": (0.0, 0.0)}``.

>>> cost_usd("gpt-4o-mini", 1_000_000, 0)
0.15
>>> cost_usd("my-local-model", 100, 10) is None
True
>>> cost_usd("my-local-model", 100, 10, prices={"my-local-model": (1.0, 2.0)})
0.00012
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["DEFAULT_PRICES", "Price", "cost_usd", "price_for"]

_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{4})$")

#: (USD per 1M input tokens, USD per 1M output tokens)
Price = tuple[float, float]

#: List prices of OpenAI models (standard tier), checked 2025. Override with ``prices=``.
DEFAULT_PRICES: dict[str, Price] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    "o4-mini": (1.10, 4.40),
    "o3-mini": (1.10, 4.40),
    "gpt-3.5-turbo": (0.50, 1.50),
}


def price_for(model: str, prices: Mapping[str, Price] | None = None) -> Price | None:
    """The price of ``model``: user table first, then the built-in one.

    An exact name wins; a dated snapshot (``gpt-4o-mini-2024-07-18``, ``gpt-3.5-turbo-0125``)
    then falls back to its base name. No other prefix matching: ``gpt-4o-audio-preview``
    is not priced as ``gpt-4o``.
    """
    for name in (model, _SNAPSHOT.sub("", model)):
        for table in (prices or {}, DEFAULT_PRICES):
            if name in table:
                return table[name]
    return None


def cost_usd(model: str, prompt_tokens: int, completion_tokens: int,
             prices: Mapping[str, Price] | None = None) -> float | None:
    """USD cost of one call, or None when the model's price is unknown."""
    price = price_for(model, prices)
    if price is None:
        return None
    return (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000
