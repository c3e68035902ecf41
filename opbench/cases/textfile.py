"""Reading a case source as text: a file that is not UTF-8 text is one clear ConfigError, not a traceback."""

from __future__ import annotations

from pathlib import Path

from opbench.cases.model import ConfigError


def read_text(path: Path) -> str:
    """The file's text (UTF-8, a leading BOM dropped); ConfigError 'not a UTF-8 text file' naming where it fails."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        lineno, col = _position(data, e.start)
        raise ConfigError(f"not a UTF-8 text file (byte 0x{data[e.start]:02x} at offset {e.start})",
                          lineno=lineno, col=col, source=str(path)) from None
    if "\0" in text:
        lineno, col = _position(data, data.index(b"\0"))
        raise ConfigError("not a UTF-8 text file (NUL byte)", lineno=lineno, col=col, source=str(path))
    return text


def _position(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column (in bytes) of a byte offset."""
    start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, offset - start + 1
