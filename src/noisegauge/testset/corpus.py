"""The corpus: documents read from files and folders, cut into chunks with stable ids.

* ``.txt``, ``.md``, ``.html``/``.htm``: one document a file, cut at headings and blank lines
  (a paragraph is a chunk; its heading is the chunk's ``title``); ids ``PATH#N``, N from 1,
  PATH relative to the folder given (the file's own path when a file is given);
* ``.jsonl``, ``.json``, ``.csv``, ``.parquet``: a row is a chunk: ``text`` and optional ``id``,
  ``title``, ``source``, ``metadata`` (ids default to ``PATH#N``, N the row from 1).

Bad input stops the load with one line naming the file and the fix (``InvalidInput``).
"""

from __future__ import annotations

import html.parser
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ..errors import InvalidInput
from ..io.readers import open_source

__all__ = ["Chunk", "DOCUMENT_SUFFIXES", "TABLE_SUFFIXES", "load_corpus", "chunk_document"]

DOCUMENT_SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm")
TABLE_SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv", ".parquet")
#: A paragraph of fewer words than this joins the next one under the same heading (a one-line
#: "Note:" is not a passage anyone retrieves alone).
MIN_CHUNK_WORDS = 5


@dataclass(frozen=True)
class Chunk:
    """One retrievable passage of the corpus."""

    id: str
    text: str
    title: str = ""
    source: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def searchable(self) -> str:
        """What retrieval and look-alike discovery read: the heading and the source name
        carry the tier, version or year a paragraph itself may leave out."""
        return " ".join(p for p in (self.title, _source_words(self.source), self.text) if p)


def _source_words(source: str) -> str:
    stem = Path(source).stem if source else ""
    return re.sub(r"[-_./]+", " ", stem)


_MD_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")


def chunk_document(text: str) -> list[tuple[str, str]]:
    """(heading, paragraph) pairs of a plain-text or Markdown document, in order.

    >>> chunk_document("# Pro\\n\\nRefunds within 30 days of purchase, no questions asked.\\n")
    [('Pro', 'Refunds within 30 days of purchase, no questions asked.')]
    """
    out: list[tuple[str, str]] = []
    heading = ""
    para: list[str] = []
    pending = ""  # a short paragraph waiting to join the next one

    def flush() -> None:
        nonlocal pending
        body = " ".join(s.strip() for s in para if s.strip())
        para.clear()
        if not body:
            return
        body = f"{pending} {body}".strip() if pending else body
        pending = ""
        if len(body.split()) < MIN_CHUNK_WORDS:
            pending = body
            return
        out.append((heading, body))

    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _MD_HEADING.match(line)
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if m:
            flush()
            if pending:
                out.append((heading, pending))
                pending = ""
            heading = m.group(2).strip()
        elif line.strip() and _SETEXT.match(nxt) and not para:
            flush()
            heading = line.strip()
        elif _SETEXT.match(line) and i > 0 and lines[i - 1].strip() == heading:
            continue
        elif not line.strip():
            flush()
        else:
            para.append(re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", line))
    flush()
    if pending:
        out.append((heading, pending))
    return out


class _HTMLText(html.parser.HTMLParser):
    """HTML as Markdown-like text: headings become ``#`` lines, blocks blank-line separated;
    scripts and styles dropped."""

    _BLOCKS: ClassVar[frozenset[str]] = frozenset({"p", "div", "li", "ul", "ol", "table", "tr", "section", "article", "br",
               "blockquote", "pre", "dd", "dt"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in ("script", "style", "head"):
            self._skip += 1
        elif re.fullmatch(r"h[1-6]", tag):
            self.parts.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag in self._BLOCKS:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "head"):
            self._skip = max(0, self._skip - 1)
        elif re.fullmatch(r"h[1-6]", tag) or tag in self._BLOCKS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(re.sub(r"\s+", " ", data))


def _html_text(raw: str) -> str:
    parser = _HTMLText()
    parser.feed(raw)
    parser.close()
    return "".join(parser.parts)


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        raise InvalidInput(f"{path}: a binary file, not text; convert it to .txt, .md or .html "
                           "(or leave it out of DOCS)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8, or "
                           "leave it out of DOCS if it is not a document") from None


def _document_chunks(path: Path, name: str) -> list[Chunk]:
    text = _read_text(path)
    if path.suffix.lower() in (".html", ".htm"):
        text = _html_text(text)
    return [Chunk(f"{name}#{n}", body, title, name)
            for n, (title, body) in enumerate(chunk_document(text), start=1)]


def _table_chunks(path: Path, name: str) -> list[Chunk]:
    out: list[Chunk] = []
    for raw in open_source(path):
        n = raw.index + 1
        if raw.error is not None or raw.record is None:
            value = raw.value if isinstance(getattr(raw, "value", None), str) else None
            if value is None:
                raise InvalidInput(f"{path}: row {n}: "
                                   f"{raw.error or 'not an object'}; each row needs a text field")
            record: Mapping[str, Any] = {"text": value}
        else:
            record = raw.record
        text = record.get("text")
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput(f"{path}: row {n}: no text; each row needs a non-empty 'text' "
                               "string (a row is a chunk)")
        raw_id = record.get("id")
        if raw_id is not None and not isinstance(raw_id, (str, int)):
            raise InvalidInput(f"{path}: row {n}: id must be a string or an integer")
        meta = record.get("metadata")
        if meta is not None and not isinstance(meta, Mapping):
            raise InvalidInput(f"{path}: row {n}: metadata must be an object")
        extra = {k: v for k, v in record.items()
                 if k not in ("text", "id", "title", "source", "metadata")}
        out.append(Chunk(str(raw_id) if raw_id is not None else f"{name}#{n}", text.strip(),
                         str(record.get("title") or ""), str(record.get("source") or name),
                         {**extra, **(dict(meta) if meta else {})}))
    return out


def _files(paths: Sequence[str | Path]) -> Iterator[tuple[Path, str, bool]]:
    """(file, its id name, named directly) for every path; folders walked in name order."""
    for given in paths:
        p = Path(given)
        if not p.exists():
            raise InvalidInput(f"{p}: no such file or folder; give documents (.txt, .md, .html) "
                               "or tables of chunks (.jsonl, .json, .csv, .parquet)")
        if p.is_dir():
            for f in sorted(x for x in p.rglob("*") if x.is_file()):
                rel = f.relative_to(p)
                if any(part.startswith(".") for part in rel.parts):
                    continue  # .git, editor files
                yield f, rel.as_posix(), False
        else:
            yield p, p.as_posix(), True


def load_corpus(paths: Iterable[str | Path]) -> list[Chunk]:
    """Every chunk of the documents and tables in ``paths`` (files or folders).

    Folders are walked; files of other kinds in them (images, PDFs, README of another
    format) are skipped; a file named directly must be of a known kind. Raises
    ``InvalidInput`` for an empty corpus, a binary or non-UTF-8 document, a table row
    without text, and two chunks with one id.
    """
    chunks: list[Chunk] = []
    given = list(paths)
    if not given:
        raise InvalidInput("no DOCS given; name files or folders of documents")
    for path, name, direct in _files(given):
        suffix = path.suffix.lower()
        if suffix in DOCUMENT_SUFFIXES:
            chunks += _document_chunks(path, name)
        elif suffix in TABLE_SUFFIXES:
            chunks += _table_chunks(path, name)
        elif direct:
            raise InvalidInput(f"{path}: unsupported kind of file ({suffix or 'no suffix'}); "
                               "give .txt, .md, .html documents or .jsonl, .json, .csv, "
                               ".parquet tables with a text column")
    if not chunks:
        raise InvalidInput(f"the corpus is empty: no text in {', '.join(map(str, given))}; "
                           "DOCS must hold .txt, .md or .html documents, or tables of chunks "
                           "with a text column")
    seen: dict[str, str] = {}
    for c in chunks:
        if c.id in seen:
            raise InvalidInput(f"duplicate chunk id {c.id!r} (in {seen[c.id]} and {c.source}); "
                               "give every row a unique id, or drop the id column to number "
                               "rows as PATH#N")
        seen[c.id] = c.source
    return chunks
