"""Helpers of the annotation-import tests: export files written, imported Docs read."""

import json
from pathlib import Path

import spacy

ADA = "Ada Lovelace met Charles Babbage in London."  # Ada0 Lovelace1 met2 Charles3 Babbage4 in5 London6 .7
GRACE = "Grace Hopper worked at Harvard University in Cambridge."  # ... Harvard4 University5 in6 Cambridge7 .8
NLP = spacy.blank("en")


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


def prodigy_task(text, spans, answer, view="ner_manual", **extra) -> dict:
    """A Prodigy task of ``text`` (blank English tokens) with ``spans``
    [(first token, end token, label)], as ``prodigy db-out`` writes it."""
    doc = NLP.make_doc(text)
    tokens = [
        {"text": t.text, "start": t.idx, "end": t.idx + len(t.text), "id": t.i, "ws": bool(t.whitespace_)} for t in doc
    ]
    return {
        "text": text,
        "tokens": tokens,
        "spans": [
            {
                "start": doc[s:e].start_char,
                "end": doc[s:e].end_char,
                "token_start": s,
                "token_end": e - 1,
                "label": label,
            }
            for s, e, label in spans
        ],
        "answer": answer,
        "_view_id": view,
        **extra,
    }
