"""The files annotation tools export, told apart before they are read: a JSON
document (Label Studio's JSON and JSON-MIN exports: one list), JSON lines
(Prodigy, doccano: one object per line) or CSV (Label Studio's CSV export),
so that a file given as the wrong format is refused naming the format it
looks like. Every reader takes records (a list of the objects a file holds,
e.g. the annotations a backend keeps) as well as a file, each record then
named "record N" (JSON lines) or "task N" (Label Studio) in errors."""

import csv
import json
from pathlib import Path
from typing import Iterator, List, Tuple

from ..util.text_lines import json_lines, readable_file
from .annotation_tasks import FORMAT_ARGUMENTS, looks_like


def first_character(path: Path) -> str:
    """The first character of the file that is not whitespace or a byte-order mark ("" for none)."""
    with path.open(encoding="utf-8-sig", errors="replace") as text:
        while True:
            block = text.read(4096)
            if not block:
                return ""
            stripped = block.lstrip()
            if stripped:
                return stripped[0]


def refuse_json_document(path, kind: str) -> None:
    """A ValueError when the JSON-lines file ``path`` is one JSON list (a Label Studio JSON or JSON-MIN export)."""
    path = readable_file(path, kind)
    if first_character(path) == "[":
        raise ValueError(
            f"{path}: the file is one JSON list (it starts with '['), as Label Studio's JSON and JSON-MIN exports "
            f"are, not {kind} JSON lines (one object per line): import it as label-studio"
        )


def is_records(source) -> bool:
    """Whether an export ``source`` is records in memory (a list or tuple of objects) rather than a file's path."""
    return isinstance(source, (list, tuple))


def json_line_records(source, kind: str) -> Iterator[Tuple[str, object]]:
    """("FILE:LINE", value) of each line of the JSON-lines file ``source`` of
    the tool ``kind`` (one JSON list refused: ``refuse_json_document``), or
    ("record N", value) of each of the records ``source``."""
    if is_records(source):
        for number, value in enumerate(source, start=1):
            yield f"record {number}", value
        return
    refuse_json_document(source, kind)
    for _, where, value in json_lines(source, kind):
        yield where, value


def json_lines_format(path: Path) -> str:
    """What the first line of a JSON-lines file looks like, in words."""
    with path.open(encoding="utf-8-sig", errors="replace") as lines:
        for line in lines:
            if line.strip():
                try:
                    found = looks_like(json.loads(line))
                except json.JSONDecodeError:
                    return "JSON lines"
                return f"{found} JSON lines (import it as {FORMAT_ARGUMENTS[found]})" if found else "JSON lines"
    return "JSON lines"


def csv_records(path: Path) -> List[Tuple[int, dict]]:
    """(line number, row as a dict of the header's columns) of a CSV file;
    cells holding a JSON list or object (Label Studio writes label lists
    so) are decoded."""
    try:
        with path.open(encoding="utf-8-sig", newline="") as rows:
            reader = csv.DictReader(rows)
            records = []
            for row in reader:
                record = {}
                for key, cell in row.items():
                    if isinstance(cell, str) and cell[:1] in "[{":
                        try:
                            cell = json.loads(cell)
                        except json.JSONDecodeError:
                            pass
                    record[key] = cell
                records.append((reader.line_num, record))
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text; export the project again as CSV") from None
    except csv.Error as error:
        raise ValueError(f"{path}: not a CSV file ({error}); export the project again as CSV") from None
    return records
