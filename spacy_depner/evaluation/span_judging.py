"""Predicted spans judged against gold spans: each span with its
probability, correct when its boundaries and label match a gold span
exactly; P/R/F are fractions (``metrics.prf``)."""

from typing import Dict, Sequence, Tuple

import numpy as np

from .data_files import GoldSpans
from .metrics import prf


def judge(docs: Sequence, gold: Sequence[GoldSpans], key: str, name: str) -> Tuple[np.ndarray, np.ndarray, int]:
    """Each span of ``doc.spans[key]`` of the Docs with its probability
    (``attrs["scores"]``): probabilities (M,) float64, correct (M,) bool
    (its start, end and label are those of a gold span of its Doc), and the
    number of gold spans. A ValueError when a Doc lacks the group or a
    non-empty group has no probabilities."""
    probabilities, correct = [], []
    for d, (doc, doc_gold) in enumerate(zip(docs, gold)):
        if key not in doc.spans:
            raise ValueError(f"'{name}' wrote no span group {key!r} on Doc {d}: it writes no span probabilities there")
        group = doc.spans[key]
        if not len(group):
            continue
        if "scores" not in group.attrs:
            raise ValueError(
                f"'{name}' writes doc.spans[{key!r}] without probabilities (attrs[\"scores\"]): "
                "give a pipeline whose component writes them (probabilities = true)"
            )
        probabilities.append(np.asarray(group.attrs["scores"], dtype=np.float64).reshape(-1))
        correct.append(
            np.fromiter(((s.start, s.end, s.label_) in doc_gold for s in group), dtype=bool, count=len(group))
        )
    n_gold = sum(len(g) for g in gold)
    if not probabilities:
        return np.zeros(0), np.zeros(0, dtype=bool), n_gold
    return np.concatenate(probabilities), np.concatenate(correct), n_gold


def judged_prf(correct: np.ndarray, n_gold: int) -> Dict[str, float]:
    """P/R/F of judged spans (every predicted span, ``n_gold`` gold spans)."""
    tp = int(np.count_nonzero(correct))
    return prf(tp, correct.shape[0] - tp, n_gold - tp)
