"""The lines of a UTF-8 text file, numbered, for readers whose every error
names the file and the line ("FILE:LINE: what is wrong; how to fix").

A file that is missing, a folder or unreadable, and a line that is not UTF-8,
are ValueErrors; line ends (``\\n``, ``\\r\\n``) and a leading byte-order mark
are removed. JSON lines are read one object per line, blank lines skipped.
"""

import json
import re
from pathlib import Path
from typing import Iterator, Tuple

_LONE_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]", re.ASCII)


def readable_file(path, kind: str) -> Path:
    """``path`` as a Path, or a ValueError if it is not a file that can be read;
    ``kind`` names the format in the message (e.g. "CoNLL-U")."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"{kind} file not found: {path}")
    if path.is_dir():
        raise ValueError(f"{path} is a folder: give the {kind} file itself")
    return path


def numbered_lines(path, kind: str) -> Iterator[Tuple[int, str]]:
    """(line number from 1, line without its line end) of a UTF-8 text file."""
    path = readable_file(path, kind)
    number = 0
    try:
        with path.open(encoding="utf8", newline="\n") as lines:
            for number, line in enumerate(lines, start=1):
                if number == 1 and line.startswith("\ufeff"):
                    line = line[1:]
                yield number, line.rstrip("\r\n")
    except UnicodeDecodeError:
        _raise_not_utf8(path, kind, number + 1)
    except OSError as error:
        raise ValueError(f"{path}: cannot read the {kind} file ({error.strerror})") from None


def _raise_not_utf8(path: Path, kind: str, from_line: int) -> None:
    """The error for the first line from ``from_line`` on that is not UTF-8
    (text is decoded by the block: the line is found again in bytes)."""
    with path.open("rb") as lines:
        for number, raw in enumerate(lines, start=1):
            try:
                raw.decode("utf8")
            except UnicodeDecodeError as error:
                if number >= from_line:
                    raise ValueError(
                        f"{path}:{number}: not UTF-8 text (byte {raw[error.start]:#04x} at column {error.start + 1}); "
                        f"a {kind} file must be UTF-8: convert it (e.g. iconv -t UTF-8) or check it is the right file"
                    ) from None
    raise ValueError(f"{path}: not UTF-8 text; a {kind} file must be UTF-8")


def json_lines(path, kind: str) -> Iterator[Tuple[int, str, object]]:
    """(line number, "FILE:LINE", the parsed value) of each non-blank line of a JSON-lines file."""
    for number, line in numbered_lines(path, kind):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(
                f"{where}: not valid JSON ({error.msg} at column {error.colno}); "
                f"a {kind} file has one JSON object per line"
            ) from None
        except RecursionError:
            raise ValueError(
                f"{where}: JSON nested too deeply; a {kind} file has one flat JSON object per line"
            ) from None
        if _LONE_SURROGATE_ESCAPE.search(line):
            try:
                json.dumps(value, ensure_ascii=False).encode("utf8")
            except UnicodeEncodeError:
                raise ValueError(
                    f"{where}: a \\ud800-\\udfff escape without its pair is not text; "
                    "write the character itself or its full surrogate pair"
                ) from None
        yield number, where, value
