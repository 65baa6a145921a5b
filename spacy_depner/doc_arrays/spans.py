"""Spans of a batch of Docs in the two coordinates of the package: spaCy's
suggesters give ``[start, end)`` per Doc (a thinc ``Ragged``), the
structures take ``[first, last]`` (inclusive) in batch coordinates sorted by
(last, first); ``spans_to_ragged`` and ``suggested_spans`` convert between
them. One Python step per Doc; everything per token or per span is numpy."""

from typing import Callable, List, Optional

import numpy as np
from spacy.tokens import Doc
from thinc.api import NumpyOps, Ops, get_current_ops
from thinc.types import Ragged

from ..structures.trees.candidate_spans import merge_spans


def chain_offsets(spans: np.ndarray, doc_offsets: np.ndarray, sentence_offsets: np.ndarray) -> np.ndarray:
    """Offsets (C + 1,) of the independent chains of a batch: its Docs cut at
    every sentence start that no span crosses (a span [f, l] crosses b if
    f < b <= l). spans (S, 2) [first, last], doc_offsets (B + 1,),
    sentence_offsets (U + 1,), all in batch token coordinates."""
    n_tokens = int(doc_offsets[-1])
    spans = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    opened = np.bincount(spans[:, 0] + 1, minlength=n_tokens + 2) - np.bincount(spans[:, 1] + 1, minlength=n_tokens + 2)
    open_spans = np.cumsum(opened)[: n_tokens + 1]
    starts = sentence_offsets[(sentence_offsets > 0) & (sentence_offsets < n_tokens)]
    return np.unique(np.concatenate([doc_offsets, starts[open_spans[starts] == 0]])).astype(np.int64)


def spans_to_ragged(spans: np.ndarray, doc_offsets: np.ndarray, ops: Optional[Ops] = None) -> Ragged:
    """Spans (S, 2) [first, last] in batch coordinates, sorted by last token, as
    spaCy's suggesters return them: a Ragged of [start, end) Ints2d in Doc
    coordinates with one length per Doc."""
    ops = ops or get_current_ops()
    spans = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    bounds = spans_per_doc(spans, doc_offsets)
    doc_of = np.repeat(np.arange(doc_offsets.shape[0] - 1), np.diff(bounds))
    data = np.empty(spans.shape, dtype=np.int32)
    data[:, 0] = spans[:, 0] - doc_offsets[doc_of]
    data[:, 1] = spans[:, 1] + 1 - doc_offsets[doc_of]
    return Ragged(ops.asarray2i(data), ops.asarray1i(np.diff(bounds).astype(np.int32)))


def suggested_spans(
    docs: List[Doc], suggester: Callable, doc_offsets: np.ndarray, ops: Optional[Ops] = None
) -> np.ndarray:
    """The spans a spaCy suggester gives for ``docs``: (S, 2) [first, last] in
    batch coordinates, sorted by (last, first), without duplicates. Any
    suggester works (spaCy's ``spacy.ngram_suggester.v1`` too); a span
    outside its Doc is a ValueError."""
    ops = ops or NumpyOps()
    suggested = suggester(docs, ops=ops)
    data = np.asarray(ops.to_numpy(suggested.dataXd), dtype=np.int64).reshape(-1, 2)
    lengths = np.asarray(ops.to_numpy(suggested.lengths), dtype=np.int64)
    if lengths.shape[0] != len(docs) or lengths.sum() != data.shape[0]:
        raise ValueError(
            f"The suggester gave {lengths.shape[0]} span counts (total {int(lengths.sum())}) and "
            f"{data.shape[0]} spans for {len(docs)} Docs: it must give one length per Doc."
        )
    doc_of = np.repeat(np.arange(len(docs)), lengths)
    sizes = np.diff(doc_offsets)[doc_of]
    if np.any(data[:, 0] < 0) or np.any(data[:, 1] <= data[:, 0]) or np.any(data[:, 1] > sizes):
        raise ValueError(
            "The suggester gave a span that is empty or outside its Doc: "
            "each span must be [start, end) with 0 <= start < end <= len(doc)."
        )
    spans = data + doc_offsets[doc_of][:, None]
    spans[:, 1] -= 1
    keys = spans[:, 1] * (int(doc_offsets[-1]) + 1) + spans[:, 0]
    if keys.shape[0] > 1 and not np.all(keys[1:] > keys[:-1]):
        spans = merge_spans(spans, np.zeros((0, 2), np.int64), int(doc_offsets[-1]))
    return spans


def spans_per_doc(spans: np.ndarray, doc_offsets: np.ndarray) -> np.ndarray:
    """span_offsets (B + 1,) of spans sorted by last token."""
    return np.searchsorted(spans[:, 1], doc_offsets, side="left").astype(np.int64)


def covered_tokens(spans: np.ndarray, n_tokens: int) -> np.ndarray:
    """How many of ``spans`` (M, 2) cover each token: (n_tokens,) int64."""
    marks = np.zeros(n_tokens + 1, dtype=np.int64)
    np.add.at(marks, spans[:, 0], 1)
    np.add.at(marks, spans[:, 1] + 1, -1)
    return np.cumsum(marks[:-1])


def with_single_tokens(spans: np.ndarray, n_tokens: int) -> np.ndarray:
    """``spans`` (S, 2) sorted by (last, first) with every single token added
    (the lattice of ``dgm_ner``: an O segment is one token, so each token
    must be a span)."""
    if np.count_nonzero(spans[:, 0] == spans[:, 1]) == n_tokens:
        return spans
    tokens = np.arange(n_tokens, dtype=np.int64)
    return merge_spans(spans, np.stack([tokens, tokens], axis=1), n_tokens)


def heads_key(spans_key: str) -> str:
    """The span group that holds the heads of the mentions of ``spans_key``
    (one head span per mention, in the same order)."""
    return f"{spans_key}_heads"
