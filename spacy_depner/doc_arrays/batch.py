"""``DocBatch``: what a component reads off a batch of Docs, once per batch."""

from contextlib import contextmanager
from typing import Callable, Iterator, List, NamedTuple, Optional

import numpy as np
from spacy.tokens import Doc
from thinc.api import Ops

from .spans import suggested_spans
from .tokens import batch_offsets
from .trees import Trees, read_trees, trees_in_scope


class DocBatch(NamedTuple):
    """A batch of Docs as arrays: docs; doc_offsets (B + 1,) and
    sentence_offsets (U + 1,) in batch token coordinates; spans (S, 2)
    [first, last] sorted by (last, first), the suggester's (None without);
    trees, the checked ``Trees`` (None in a batch read without them)."""

    docs: List[Doc]
    doc_offsets: np.ndarray
    sentence_offsets: np.ndarray
    spans: Optional[np.ndarray] = None
    trees: Optional[Trees] = None

    @property
    def n_tokens(self) -> int:
        return int(self.doc_offsets[-1])

    @contextmanager
    def in_scope(self) -> Iterator["DocBatch"]:
        """While the block runs (a suggester, a model on these Docs), the
        batch's trees are what ``doc_arrays.trees.batch_trees`` gives for its
        Docs: they are not read or checked again."""
        with trees_in_scope(self.docs, self.trees):
            yield self

    def of_doc(self, d: int) -> "DocBatch":
        """The batch of Doc ``d`` alone, in its own token coordinates: what
        ``read_batch([docs[d]], ...)`` gives, without reading it again."""
        lo, hi = int(self.doc_offsets[d]), int(self.doc_offsets[d + 1])
        starts = self.sentence_offsets[:-1]
        sentences = np.concatenate([starts[(starts >= lo) & (starts < hi)] - lo, [hi - lo]]).astype(np.int64)
        doc_offsets = np.array([0, hi - lo], dtype=np.int64)
        spans = trees = None
        if self.spans is not None:
            rows = np.searchsorted(self.spans[:, 1], [lo, hi], side="left")
            spans = self.spans[rows[0] : rows[1]] - lo
        if self.trees is not None:
            heads = self.trees.heads[lo:hi]
            trees = Trees(np.where(heads == -1, -1, heads - lo), self.trees.labels[lo:hi], sentences, doc_offsets)
        return DocBatch([self.docs[d]], doc_offsets, sentences, spans, trees)


def read_batch(
    docs: List[Doc],
    suggester: Optional[Callable] = None,
    ops: Optional[Ops] = None,
    *,
    trees: bool = False,
    component: Optional[str] = None,
    reader: Optional[str] = None,
) -> DocBatch:
    """The Docs' offsets; with ``trees``, their checked ``Trees`` (one parse
    check and one forest check for the batch, naming ``component`` and
    ``reader``, its part that reads them); with a suggester (any spaCy
    suggester), its spans, suggested with the trees in scope."""
    docs = list(docs)
    checked = read_trees(docs, component, reader) if trees else None
    if checked is None:
        doc_offsets, sentence_offsets = batch_offsets(docs)
    else:
        doc_offsets, sentence_offsets = checked.doc_offsets, checked.sentence_offsets
    batch = DocBatch(docs, doc_offsets, sentence_offsets, None, checked)
    if suggester is None:
        return batch
    with batch.in_scope():
        return batch._replace(spans=suggested_spans(docs, suggester, doc_offsets, ops))
