"""What a simulated person reviews in the active-learning loop, beside whole
sentences: regions of uncertain tokens (``rank --unit region``) and
accept/reject decisions on proposed entities (``rank --unit span``).

The pool's gold entities play the person. A *region* task is answered by
annotating every gold entity in the region, the region first widened to the
whole of any gold entity it cuts (what a person marking it would do); the
reviewed tokens are the widened region. A *binary* task is answered accept
when its proposed entity (span and label) is gold, else reject.

A sentence's reviews accumulate over the rounds in a ``Review``: the
reviewed tokens, the accepted entities and the rejected ones. Its training
Doc has as entities the gold entities wholly on reviewed tokens and the
accepted ones, the other reviewed tokens O, every other token missing
(``ent_iob_ == ""``), and the rejected entities in ``doc.spans[REJECTED]``,
which ``chain_ner``'s ``incorrect_spans_key`` reads.
"""

from dataclasses import dataclass, field
from typing import Dict, List, Sequence, Tuple

import numpy as np
from spacy.tokens import Doc, Span

REJECTED = "incorrect_spans"
UNITS = {"region": "region", "binary": "span"}  # strategy -> rank --unit


@dataclass
class Review:
    """What is known of one pool sentence: reviewed tokens (as [start, end)
    ranges), accepted and rejected entities ([start, end, label])."""

    regions: List[List[int]] = field(default_factory=list)
    accepted: List[list] = field(default_factory=list)
    rejected: List[list] = field(default_factory=list)

    def as_dict(self) -> Dict:
        return {"regions": self.regions, "accepted": self.accepted, "rejected": self.rejected}


def widened(doc: Doc, start: int, end: int) -> Tuple[int, int]:
    """[start, end) widened to the whole of every gold entity of ``doc`` it cuts."""
    for ent in doc.ents:
        if ent.start < end and start < ent.end:
            start, end = min(start, ent.start), max(end, ent.end)
    return start, end


def answer_region(doc: Doc, task: Dict, review: Review) -> int:
    """Record the answer to a region task on the pool sentence ``doc``; the tokens reviewed."""
    start, end = widened(doc, *task["region"])
    review.regions.append([start, end])
    return end - start


def answer_binary(doc: Doc, task: Dict, review: Review) -> bool:
    """Record the answer to a binary task on ``doc``; whether it was accepted."""
    (span,) = task["spans"]
    proposed = [span["token_start"], span["token_end"] + 1, span["label"]]
    gold = {(ent.start, ent.end, ent.label_) for ent in doc.ents}
    accepted = tuple(proposed) in gold
    (review.accepted if accepted else review.rejected).append(proposed)
    return accepted


def training_doc(doc: Doc, review: Review) -> Doc:
    """The Doc the components train on for a reviewed pool sentence (module docstring)."""
    out = Doc(doc.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc])
    reviewed = np.zeros(len(doc), dtype=bool)
    for start, end in review.regions:
        reviewed[start:end] = True
    entities = {(e.start, e.end, e.label_) for e in doc.ents if reviewed[e.start : e.end].all()}
    entities |= {tuple(entity) for entity in review.accepted}
    for start, end, _ in entities:
        reviewed[start:end] = True
    missing = [out[s:e] for s, e in stretches(~reviewed)]
    out.set_ents([Span(out, s, e, label=label) for s, e, label in sorted(entities)], missing=missing, default="outside")
    out.spans[REJECTED] = [Span(out, s, e, label=label) for s, e, label in review.rejected]
    return out


def stretches(selected: np.ndarray) -> List[Tuple[int, int]]:
    """[start, end) of each maximal run of True in ``selected``."""
    edges = np.diff(np.concatenate([[0], selected.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist()))


def chosen_tasks(tasks: Sequence[Dict], strategy: str, budget: int) -> List[Dict]:
    """The first of the ranked ``tasks`` within the round's budget: ``budget``
    decisions (binary), or regions until ``budget`` tokens (region; the last
    one may pass it)."""
    if strategy == "binary":
        return list(tasks[:budget])
    kept, tokens = [], 0
    for task in tasks:
        if tokens >= budget:
            break
        kept.append(task)
        tokens += task["region"][1] - task["region"][0]
    return kept
