"""Candidate spans as spaCy suggesters (the ``misc`` registry).

Each lattice of Jie, Muis & Lu (2017) is a function with spaCy's suggester
signature ``(docs, *, ops=None) -> Ragged``: for each Doc, the ``[start,
end)`` token offsets of its candidate spans (Ints2d, Doc coordinates), one
length per Doc. So a config chooses the lattice of ``dgm_ner``, the mask of
``nested_ner`` and the candidates of spaCy's own ``spancat``:

* ``spacy_depner.dgm_suggester.v1`` (``max_length``: null or an int): the DGM
  valid spans of each sentence's dependency tree (every single token, and
  u..v whose tree path increases strictly); needs a parse.
* ``spacy_depner.dgm_s_suggester.v1`` (``max_length``): DGM-S, every single
  token and the two ends of each arc; needs a parse.
* ``spacy_depner.all_spans_suggester.v1`` (``max_length``, null: unbounded):
  every span of each sentence (the semi-Markov space); needs no parse.

No span crosses a sentence end (sentences from the parse, a sentencizer, or
the whole Doc if none is set); arcs to the root are ignored. The spans of a
Doc come sorted by (end, start). This is the spaCy 3.8 counterpart of
spacy-experimental's ``subtree_suggester``; the functions resolve through the
``spacy_misc`` entry point without importing this package.
"""
from functools import partial
from typing import Callable, Iterable, Optional

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Ops
from thinc.types import Ragged

from ..structures.candidate_spans import all_spans, single_arc_spans, valid_spans
from ..ml.dependency_features import require_parse
from .doc_arrays import batch_offsets, spans_to_ragged, tree_arrays

Suggester = Callable[..., Ragged]

DGM = "spacy_depner.dgm_suggester.v1"
DGM_S = "spacy_depner.dgm_s_suggester.v1"
ALL_SPANS = "spacy_depner.all_spans_suggester.v1"


def _check_max_length(max_length: Optional[int], name: str) -> Optional[int]:
    if max_length is None:
        return None
    if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1:
        raise ValueError(f"max_length of {name} must be a positive integer or null, not {max_length!r}")
    return max_length


def tree_spans(docs: Iterable[Doc], *, ops: Optional[Ops] = None, single_arc: bool = False,
               max_length: Optional[int] = None, name: str = DGM) -> Ragged:
    """DGM valid spans (``single_arc``: DGM-S spans) of each sentence, as a
    suggester's Ragged; a non-empty Doc without a parse is a ValueError."""
    docs = list(docs)
    require_parse(docs, name)
    heads, sentence_offsets, doc_offsets = tree_arrays(docs)
    spans = (single_arc_spans if single_arc else valid_spans)(heads, sentence_offsets, max_length)
    return spans_to_ragged(spans, doc_offsets, ops)


def sentence_spans(docs: Iterable[Doc], *, ops: Optional[Ops] = None, max_length: Optional[int] = None) -> Ragged:
    """Every span of each sentence up to ``max_length`` tokens (None: unbounded)."""
    docs = list(docs)
    doc_offsets, sentence_offsets = batch_offsets(docs)
    return spans_to_ragged(all_spans(sentence_offsets, max_length), doc_offsets, ops)


@registry.misc(DGM)
def build_dgm_suggester(max_length: Optional[int] = None) -> Suggester:
    """DGM valid spans of each sentence, at most ``max_length`` tokens (null: any)."""
    return partial(tree_spans, single_arc=False, max_length=_check_max_length(max_length, DGM), name=DGM)


@registry.misc(DGM_S)
def build_dgm_s_suggester(max_length: Optional[int] = None) -> Suggester:
    """DGM-S spans of each sentence (single tokens and arcs), at most ``max_length`` tokens."""
    return partial(tree_spans, single_arc=True, max_length=_check_max_length(max_length, DGM_S), name=DGM_S)


@registry.misc(ALL_SPANS)
def build_all_spans_suggester(max_length: Optional[int] = None) -> Suggester:
    """Every span of each sentence, at most ``max_length`` tokens (null: any)."""
    return partial(sentence_spans, max_length=_check_max_length(max_length, ALL_SPANS))
