"""Helpers of the annotation-import tests: export files written, imported Docs read."""

import json
from pathlib import Path


def write_lines(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf8")
    return path


def iob(doc) -> str:
    """The entity IOB of each token, "-" where missing."""
    return " ".join(t.ent_iob_ or "-" for t in doc)


def ents(doc):
    return [(e.text, e.label_) for e in doc.ents]


def group(doc, key):
    return sorted((s.start, s.end, s.label_) for s in doc.spans[key])
