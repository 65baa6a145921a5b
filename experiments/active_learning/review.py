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
which ``chain_ner``'s ``incorrect_spans_key`` reads. With nested mentions
(GENIA: ``spans_key`` names the span group of the gold mentions) a region is
widened until it cuts no gold mention, and the training Doc has in that
group the gold mentions wholly on reviewed tokens and the reviewed tokens as
the regions of ``doc.spans[ANNOTATED]``, which ``nested_ner``'s
``annotated_key`` reads (every other token missing); spaCy's ``spancat``,
which has no notion of missing, reads the same group as complete.
"""

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Set, Tuple

import numpy as np
from spacy.tokens import Doc, Span

REJECTED = "incorrect_spans"
ANNOTATED = "annotated"
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


def gold_mentions(doc: Doc, spans_key: Optional[str] = None) -> Set[Tuple[int, int, str]]:
    """(start, end, label) of the gold entities (``doc.ents``) or, given
    ``spans_key``, of the gold mentions ``doc.spans[spans_key]``."""
    spans = doc.ents if spans_key is None else doc.spans[spans_key]
    return {(span.start, span.end, span.label_) for span in spans}


def widened(doc: Doc, start: int, end: int, spans_key: Optional[str] = None) -> Tuple[int, int]:
    """[start, end) widened until it cuts no gold mention of ``doc`` (``gold_mentions``)."""
    mentions = gold_mentions(doc, spans_key)
    while True:
        cut = [(s, e) for s, e, _ in mentions if s < end and start < e and (s < start or e > end)]
        if not cut:
            return start, end
        start, end = min([start] + [s for s, _ in cut]), max([end] + [e for _, e in cut])


def answer_region(doc: Doc, task: Dict, review: Review, spans_key: Optional[str] = None) -> int:
    """Record the answer to a region task on the pool sentence ``doc``; the tokens reviewed."""
    start, end = widened(doc, *task["region"], spans_key=spans_key)
    review.regions.append([start, end])
    return end - start


def answer_binary(doc: Doc, task: Dict, review: Review, spans_key: Optional[str] = None) -> bool:
    """Record the answer to a binary task on ``doc``; whether it was accepted."""
    (span,) = task["spans"]
    proposed = [span["token_start"], span["token_end"] + 1, span["label"]]
    accepted = tuple(proposed) in gold_mentions(doc, spans_key)
    (review.accepted if accepted else review.rejected).append(proposed)
    return accepted


def training_doc(doc: Doc, review: Review, spans_key: Optional[str] = None) -> Doc:
    """The Doc the components train on for a reviewed pool sentence (module
    docstring); nested mentions in ``doc.spans[spans_key]`` given ``spans_key``."""
    out = Doc(doc.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc])
    reviewed = np.zeros(len(doc), dtype=bool)
    for start, end in review.regions:
        reviewed[start:end] = True
    entities = {(s, e, label) for s, e, label in gold_mentions(doc, spans_key) if reviewed[s:e].all()}
    entities |= {tuple(entity) for entity in review.accepted}
    for start, end, _ in entities:
        reviewed[start:end] = True
    spans = [Span(out, s, e, label=label) for s, e, label in sorted(entities)]
    if spans_key is None:
        out.set_ents(spans, missing=[out[s:e] for s, e in stretches(~reviewed)], default="outside")
    else:
        out.spans[spans_key] = spans
        out.spans[ANNOTATED] = [out[s:e] for s, e in stretches(reviewed)]
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
