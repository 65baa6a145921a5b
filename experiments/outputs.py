"""Writing the experiments' output files: their folder made, UTF-8."""
import json
from pathlib import Path
from typing import Optional


def write_file(path: Path, text: str) -> str:
    """Write ``text`` to ``path``, making its folder; returns the text."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf8")
    return text


def write_json(path: Path, value, indent: Optional[int] = 2) -> str:
    """Write ``value`` as JSON to ``path``, making its folder; returns the JSON text."""
    return write_file(path, json.dumps(value, indent=indent))
