"""Which text encoding a file is in, and reading its lines whatever it is.

UTF-8 (with or without a BOM) is read as bytes, undecodable bytes kept as surrogate escapes
(so a bad row is one error row); UTF-16 and UTF-32 are read when a byte-order mark announces
them (PowerShell's ``>`` writes UTF-16 LE with one). Anything else is refused with the fix,
never read as one "invalid JSON" row per line.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import IO

from ..errors import InvalidInput

__all__ = ["byte_lines", "open_text", "sniff_encoding"]

#: Byte-order marks and the codec that reads (and drops) each; UTF-32 before UTF-16 (FF FE...).
_BOMS = ((b"\x00\x00\xfe\xff", "utf-32"), (b"\xff\xfe\x00\x00", "utf-32"),
         (b"\xef\xbb\xbf", "utf-8-sig"), (b"\xfe\xff", "utf-16"), (b"\xff\xfe", "utf-16"))
_SNIFF = 1 << 16


def sniff_encoding(path: Path) -> str:
    """``utf-8`` (with or without BOM), or UTF-16/32 announced by a byte-order mark.

    Anything else is refused with the fix: NUL bytes mean binary data or UTF-16 without a
    BOM; bytes that are not UTF-8 mean a legacy encoding (Latin-1, cp1252...).
    """
    with path.open("rb") as f:
        head = f.read(_SNIFF)
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            return encoding
    if b"\x00" in head:
        raise InvalidInput(
            f"{path}: not a text file (it contains NUL bytes): binary data, or UTF-16/UTF-32 "
            "text without a byte-order mark. Save it as UTF-8 (PowerShell: "
            "`... | Out-File -Encoding utf8 FILE`, or `Set-Content -Encoding utf8`)")
    # A few undecodable lines are a few bad rows (each an error row naming its field); a
    # head where most lines are undecodable is a file in another encoding, or not text.
    lines = [line for line in head.split(b"\n")[:-1 if len(head) == _SNIFF else None]
             if line.strip()]
    bad = []
    for n, line in enumerate(lines, start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as exc:
            bad.append((n, line[exc.start]))
    if bad and len(bad) * 2 > len(lines) and len(lines) > 1:
        n, byte = bad[0]
        raise InvalidInput(
            f"{path}: not UTF-8 text ({len(bad)} of the first {len(lines)} lines are not; byte "
            f"0x{byte:02x} on line {n}). Convert it to UTF-8, e.g. `iconv -f cp1252 -t utf-8 "
            "IN > OUT`")
    return "utf-8"


def byte_lines(path: Path, encoding: str) -> Iterator[bytes]:
    """The file's lines as UTF-8 bytes (undecodable UTF-8 kept as surrogate escapes)."""
    if encoding.startswith("utf-8"):
        with path.open("rb") as f:
            for n, line in enumerate(f):
                yield line[3:] if n == 0 and line.startswith(b"\xef\xbb\xbf") else line
        return
    try:
        with path.open("r", encoding=encoding, newline="") as t:
            for text in t:
                yield text.encode("utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path}: not valid {encoding.upper()} text ({exc.reason} at byte "
                           f"{exc.start}); save it as UTF-8") from None


def open_text(path: Path, encoding: str) -> IO[str]:
    if encoding.startswith("utf-8"):
        return path.open("r", encoding="utf-8-sig", errors="surrogateescape", newline="")
    return path.open("r", encoding=encoding, newline="")
