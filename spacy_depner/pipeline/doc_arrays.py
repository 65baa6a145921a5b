"""Flat batch arrays (heads, sentences, documents, spans) read off spaCy Docs.

The glue between spaCy Docs and the structures, which take flat arrays. One
Python step per Doc; everything per token or per span is numpy. Spans are in
two coordinates: spaCy's suggesters give ``[start, end)`` per Doc (a thinc
``Ragged``), the structures take ``[first, last]`` (inclusive) in batch
coordinates sorted by (last, first); ``spans_to_ragged`` and
``suggested_spans`` convert between them.

Trees enter here: ``tree_arrays`` (from ``spacy_depner.ml.dependency_features``,
which reads the heads of the dependency features the same way, below the
pipeline) checks once per batch that each Doc's heads form a forest within
its sentences (``spacy_depner.structures.forest``), so the structures never
see a cycle or a head outside its sentence.
"""
from typing import Callable, List, NamedTuple, Optional, Tuple

import numpy as np
from spacy.attrs import SENT_START
from spacy.tokens import Doc
from thinc.api import NumpyOps, Ops, get_current_ops
from thinc.types import Ragged

from ..ml.dependency_features import doc_offsets_of, sentence_offsets_of, token_table, tree_arrays
from ..structures.candidate_spans import merge_spans

__all__ = [
    "Batch", "doc_offsets_of", "batch_offsets", "tree_arrays",
    "spans_to_ragged", "suggested_spans", "lattice", "spans_per_doc", "covered_tokens",
]


class Batch(NamedTuple):
    """A lattice of a batch of Docs: doc_offsets (B + 1,); spans (S, 2) first
    and last token in batch coordinates sorted by (last, first); span_offsets
    (B + 1,) the spans of Doc b are rows span_offsets[b]:span_offsets[b+1]."""

    doc_offsets: np.ndarray
    spans: np.ndarray
    span_offsets: np.ndarray

    @property
    def n_tokens(self) -> int:
        return int(self.doc_offsets[-1])


def batch_offsets(docs: List[Doc]) -> Tuple[np.ndarray, np.ndarray]:
    """doc_offsets (B + 1,) and sentence_offsets (U + 1,) of a batch of Docs,
    in batch token coordinates (int64)."""
    doc_offsets = doc_offsets_of(docs)
    return doc_offsets, sentence_offsets_of(token_table(docs, [SENT_START])[:, 0], doc_offsets)


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


def suggested_spans(docs: List[Doc], suggester: Callable, doc_offsets: np.ndarray, ops: Optional[Ops] = None) -> np.ndarray:
    """The spans a spaCy suggester gives for ``docs``: (S, 2) [first, last] in
    batch coordinates, sorted by (last, first), without duplicates. Any
    suggester works (spaCy's ``spacy.ngram_suggester.v1`` too); a span
    outside its Doc is a ValueError."""
    ops = ops or NumpyOps()
    suggested = suggester(docs, ops=ops)
    data = np.asarray(ops.to_numpy(suggested.dataXd), dtype=np.int64).reshape(-1, 2)
    lengths = np.asarray(ops.to_numpy(suggested.lengths), dtype=np.int64)
    if lengths.shape[0] != len(docs) or lengths.sum() != data.shape[0]:
        raise ValueError(f"The suggester gave {lengths.shape[0]} span counts (total {int(lengths.sum())}) and "
                         f"{data.shape[0]} spans for {len(docs)} Docs: it must give one length per Doc.")
    doc_of = np.repeat(np.arange(len(docs)), lengths)
    sizes = np.diff(doc_offsets)[doc_of]
    if np.any(data[:, 0] < 0) or np.any(data[:, 1] <= data[:, 0]) or np.any(data[:, 1] > sizes):
        raise ValueError("The suggester gave a span that is empty or outside its Doc: "
                         "each span must be [start, end) with 0 <= start < end <= len(doc).")
    spans = data + doc_offsets[doc_of][:, None]
    spans[:, 1] -= 1
    keys = spans[:, 1] * (int(doc_offsets[-1]) + 1) + spans[:, 0]
    if keys.shape[0] > 1 and not np.all(keys[1:] > keys[:-1]):
        spans = merge_spans(spans, np.zeros((0, 2), np.int64), int(doc_offsets[-1]))
    return spans


def lattice(docs: List[Doc], suggester: Callable, ops: Optional[Ops] = None) -> Batch:
    """The segment lattice of ``dgm_ner``: the suggester's spans and every
    single token (O segments are single tokens, so each token must be a span)."""
    doc_offsets = doc_offsets_of(docs)
    n_tokens = int(doc_offsets[-1])
    spans = suggested_spans(docs, suggester, doc_offsets, ops)
    singles = spans[:, 0] == spans[:, 1]
    if np.count_nonzero(singles) < n_tokens:
        tokens = np.arange(n_tokens, dtype=np.int64)
        spans = merge_spans(spans, np.stack([tokens, tokens], axis=1), n_tokens)
    return Batch(doc_offsets, spans, spans_per_doc(spans, doc_offsets))


def spans_per_doc(spans: np.ndarray, doc_offsets: np.ndarray) -> np.ndarray:
    """span_offsets (B + 1,) of spans sorted by last token."""
    return np.searchsorted(spans[:, 1], doc_offsets, side="left").astype(np.int64)


def covered_tokens(spans: np.ndarray, n_tokens: int) -> np.ndarray:
    """How many of ``spans`` (M, 2) cover each token: (n_tokens,) int64."""
    marks = np.zeros(n_tokens + 1, dtype=np.int64)
    np.add.at(marks, spans[:, 0], 1)
    np.add.at(marks, spans[:, 1] + 1, -1)
    return np.cumsum(marks[:-1])
