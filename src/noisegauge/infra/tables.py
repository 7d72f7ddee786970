"""Terminal tables that fit the width they are printed at: nothing dropped, no figure cut.

Left to itself, rich squeezes a table that is too wide by cutting ``no_wrap`` cells to "…"
and by shrinking other columns to nothing, so at 80 columns a summary loses its figures.
``Fitted`` tries, in order, at the width it is given when printed:

1. the table as it is (full headers, nothing folded);
2. the same columns, tighter: short headers, less padding, text columns folded;
3. the columns spread over several such tables one under the other, each repeating the
   key columns (the metric, the rank) so every row can still be read across.

Figures and key cells are never wrapped: a table only ever breaks between columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table

__all__ = ["Col", "Fitted"]

#: The narrowest a folded text column is allowed to get (narrower, a label takes more
#: lines than it is worth: the table is split instead).
TEXT_MIN = 30


@dataclass(frozen=True)
class Col:
    """One column. ``key``: repeated in every part of a split table, never wrapped;
    ``num``: a figure, never wrapped; ``text``: may be folded onto several lines."""

    head: str
    kind: Literal["key", "num", "text"] = "num"
    short: str | None = None  # the header used once the table has to be tight
    justify: Literal["left", "right"] | None = None


class Fitted:
    """A table (columns and rows of plain strings) that rearranges itself to fit."""

    def __init__(self, columns: Sequence[Col], rows: Sequence[Sequence[str]], *,
                 title: str | None = None, caption: str | None = None) -> None:
        if any(len(r) != len(columns) for r in rows):
            raise ValueError("every row needs one cell per column")
        self.columns = tuple(columns)
        self.rows = [tuple(r) for r in rows]
        self.title = title
        self.caption = caption

    def _table(self, picked: Sequence[int], *, tight: bool, title: str | None,
               floor: bool = False, fold_keys: bool = False, caption: str | None = None,
               ) -> Table:
        """``floor``: text columns held to their narrowest, so the table's maximum width
        is the least it needs without cutting a figure (rich's own minimum would cut).
        ``fold_keys``: the last resort, key cells folded so the figures stay whole."""
        table = (Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, caption=caption,
                       caption_justify="left", collapse_padding=True, pad_edge=False,
                       show_edge=False) if tight else
                 Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, caption=caption,
                       caption_justify="left"))
        for i in picked:
            c = self.columns[i]
            justify = c.justify or ("right" if c.kind == "num" else "left")
            head = (c.short or c.head) if tight else c.head
            if c.kind == "text":
                longest = max((cell_len(r[i]) for r in self.rows), default=0)
                least = min(TEXT_MIN, max(longest, cell_len(head)))
                table.add_column(head, justify=justify, overflow="fold", min_width=least,
                                 max_width=least if floor else None)
            elif fold_keys and c.kind == "key":
                table.add_column(head, justify=justify, overflow="fold")
            else:
                table.add_column(head, justify=justify, no_wrap=True)
        for r in self.rows:
            table.add_row(*(r[i] for i in picked))
        return table

    def tables(self, console: Console, width: int) -> list[Table]:
        """The table or tables this one is printed as at ``width`` columns."""
        every = range(len(self.columns))
        whole = self._table(every, tight=False, title=self.title, caption=self.caption)
        if _measure(console, whole).maximum <= width:
            return [whole]
        if self._least(console, every) <= width:
            return [self._table(every, tight=True, title=self.title, caption=self.caption)]
        keys = [i for i, c in enumerate(self.columns) if c.kind == "key"]
        parts: list[list[int]] = []
        for i in (i for i in every if i not in keys):
            if parts and self._least(console, [*keys, *parts[-1], i]) <= width:
                parts[-1].append(i)
            else:
                parts.append([i])
        return [self._table(keys + part, tight=True, title=self.title if n == 0 else None,
                            caption=self.caption if n == len(parts) - 1 else None,
                            fold_keys=self._least(console, keys + part) > width)
                for n, part in enumerate(parts)]

    def _least(self, console: Console, picked: Sequence[int]) -> int:
        """The fewest columns these columns, tight, take with no figure cut."""
        table = self._table(picked, tight=True, title=None, floor=True)
        return _measure(console, table).maximum

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self.tables(console, options.max_width)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return _measure(console, self._table(range(len(self.columns)), tight=False,
                                             title=self.title))


def _measure(console: Console, table: Table) -> Measurement:
    return Measurement.get(console, console.options.update(width=10_000), table)
