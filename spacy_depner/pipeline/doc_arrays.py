"""Flat batch arrays (heads, sentences, documents) read off spaCy Docs.

The glue between spaCy Docs and the structures, which take flat arrays. One
Python step per Doc; everything per token is numpy.
"""
from typing import Iterable, List, NamedTuple, Tuple

import numpy as np
from spacy.attrs import HEAD, SENT_START
from spacy.tokens import Doc

from ..structures.candidate_spans import candidate_spans

NEEDS_TREES = ("dgm", "dgm_s")


class Batch(NamedTuple):
    """heads (N,) absolute, -1 for a root; sentence_offsets (n_sents + 1,);
    doc_offsets (B + 1,); spans (S, 2); span_offsets (B + 1,)."""

    heads: np.ndarray
    sentence_offsets: np.ndarray
    doc_offsets: np.ndarray
    spans: np.ndarray
    span_offsets: np.ndarray

    @property
    def n_tokens(self) -> int:
        return int(self.doc_offsets[-1])


def require_parse(docs: Iterable[Doc], component: str) -> None:
    """Raise a clear error for a non-empty Doc without a dependency parse."""
    for doc in docs:
        if len(doc) and not doc.has_annotation("DEP"):
            raise ValueError(
                f"'{component}' needs dependency trees, but a Doc has no dependency parse "
                f"(text: {doc.text[:60]!r}). Put a parser before '{component}' in the pipeline, "
                "or pass Docs whose heads and deps are set (for example with the "
                "spacy_depner.UNERCorpus.v1 reader and dependencies = \"given\"); "
                "structure = \"semi_markov\" needs no parse."
            )


def doc_heads(doc: Doc, offset: int) -> np.ndarray:
    """Absolute heads in the batch, -1 for roots (and for every token without a parse)."""
    if not doc.has_annotation("DEP"):
        return np.full(len(doc), -1, dtype=np.int64)
    relative = doc.to_array(HEAD).astype(np.int64)
    heads = relative + np.arange(len(doc), dtype=np.int64) + offset
    heads[relative == 0] = -1
    return heads


def sentence_starts(doc: Doc) -> np.ndarray:
    """Token indices at which sentences start; the whole Doc is one sentence if
    no boundaries are set."""
    if not len(doc):
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(doc.to_array(SENT_START).astype(np.int64) == 1)
    if starts.size == 0 or starts[0] != 0:
        starts = np.concatenate([[0], starts])
    return starts


def doc_offsets_of(docs: List[Doc]) -> np.ndarray:
    """(B + 1,) int64: the tokens of Doc b are doc_offsets[b]:doc_offsets[b+1] of the batch."""
    return np.concatenate([[0], np.cumsum([len(doc) for doc in docs])]).astype(np.int64)


def batch_offsets(docs: List[Doc]) -> Tuple[np.ndarray, np.ndarray]:
    """doc_offsets (B + 1,) and sentence_offsets (U + 1,) of a batch of Docs,
    in batch token coordinates (int64)."""
    doc_offsets = doc_offsets_of(docs)
    starts = [sentence_starts(doc) + offset for doc, offset in zip(docs, doc_offsets)]
    return doc_offsets, np.concatenate(starts + [doc_offsets[-1:]]).astype(np.int64)


def make_batch(docs: List[Doc], structure: str, max_length, component: str = "dgm_ner") -> Batch:
    """The flat arrays of a batch of Docs and its candidate spans."""
    if structure in NEEDS_TREES:
        require_parse(docs, component)
    doc_offsets, sentence_offsets = batch_offsets(docs)
    heads = [doc_heads(doc, offset) for doc, offset in zip(docs, doc_offsets)]
    heads = np.concatenate(heads) if heads else np.zeros(0, dtype=np.int64)
    spans = candidate_spans(structure, heads, sentence_offsets, max_length)
    return Batch(heads, sentence_offsets, doc_offsets, spans, spans_per_doc(spans, doc_offsets))


def spans_per_doc(spans: np.ndarray, doc_offsets: np.ndarray) -> np.ndarray:
    """span_offsets (B + 1,) of spans sorted by last token."""
    return np.searchsorted(spans[:, 1], doc_offsets, side="left").astype(np.int64)


def covered_tokens(spans: np.ndarray, n_tokens: int) -> np.ndarray:
    """How many of ``spans`` (M, 2) cover each token: (n_tokens,) int64."""
    marks = np.zeros(n_tokens + 1, dtype=np.int64)
    np.add.at(marks, spans[:, 0], 1)
    np.add.at(marks, spans[:, 1] + 1, -1)
    return np.cumsum(marks[:-1])
