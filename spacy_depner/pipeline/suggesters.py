"""Candidate spans as spaCy suggesters (the ``misc`` registry).

Each lattice of Jie, Muis & Lu (2017) is a function with spaCy's suggester
signature ``(docs, *, ops=None) -> Ragged``: for each Doc, the ``[start,
end)`` token offsets of its candidate spans (Ints2d, Doc coordinates), one
length per Doc. So a config chooses the lattice of ``dgm_ner``, the mask of
``nested_ner`` and the candidates of spaCy's own ``spancat``:

* ``spacy_depner.dgm_suggester.v1`` (``max_length``: null or an int;
  ``max_sentence_length``): the DGM valid spans of each sentence's
  dependency tree (every single token, and u..v whose tree path increases
  strictly); needs a parse.
* ``spacy_depner.dgm_s_suggester.v1`` (``max_length``): DGM-S, every single
  token and the two ends of each arc (at most 2 n spans in n tokens); needs a parse.
* ``spacy_depner.all_spans_suggester.v1`` (``max_length``, null: unbounded;
  ``max_sentence_length``): every span of each sentence (the semi-Markov
  space); needs no parse.

No span crosses a sentence end (sentences from the parse, a sentencizer, or
the whole Doc if none is set); arcs to the root are ignored. The spans of a
Doc come sorted by (end, start). This is the spaCy 3.8 counterpart of
spacy-experimental's ``subtree_suggester``; the functions resolve through the
``spacy_misc`` entry point without importing this package.

Cost: with ``max_length = null`` a sentence of n tokens may have n (n + 1) / 2
DGM or semi-Markov spans (all of them under a right-branching tree); with a
``max_length`` L, at most L n. Each suggester states its bound in its
attribute ``spans_per_token`` (L, 2 for DGM-S, None: quadratic) and refuses,
before making any span, a sentence longer than its ``max_sentence_length``
(default null: no limit) when its lattice is quadratic (or L is larger), and
a Doc whose spans could outgrow a Ragged (``RAGGED_SPANS``). ``dgm_ner``
checks its own ``max_sentence_length`` the same way (``check_sentence_lengths``).

The DGM suggesters state their name in ``tree_reader``: a component with one
reads and checks the trees once with its batch, and the suggester, called
with that batch's trees in scope, takes them (``doc_arrays.trees.batch_trees``);
called alone (spaCy's ``spancat``) it reads and checks them itself.
"""

from functools import partial
from typing import Callable, Iterable, Optional

import numpy as np
from spacy.pipeline.spancat import ngram_suggester
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Ops
from thinc.types import Ragged

from ..doc_arrays.spans import spans_to_ragged
from ..doc_arrays.tokens import batch_offsets
from ..doc_arrays.trees import batch_trees
from ..structures.trees.candidate_spans import all_spans, single_arc_spans, valid_spans
from ..util.numbers import is_positive_int

Suggester = Callable[..., Ragged]

DGM = "spacy_depner.dgm_suggester.v1"
DGM_S = "spacy_depner.dgm_s_suggester.v1"
ALL_SPANS = "spacy_depner.all_spans_suggester.v1"

# The most spans of one Doc: a suggester's Ragged has int32 lengths.
RAGGED_SPANS = 2**31 - 1


def positive_or_null(value, setting: str, owner: str) -> Optional[int]:
    """``value`` if it is a positive integer or None (no limit), else a
    ValueError naming ``setting`` of ``owner``."""
    if value is None:
        return None
    if not is_positive_int(value):
        raise ValueError(f"{setting} of {owner} must be a positive integer or null (no limit), not {value!r}")
    return int(value)


def spans_per_token(suggester: Callable) -> Optional[int]:
    """The bound c of a suggester's lattice, at most c n spans in a sentence of
    n tokens: the ``spans_per_token`` attribute of this module's suggesters,
    the number of ``sizes`` of spaCy's n-gram suggesters; None (quadratic)
    for one without a bound or that does not say."""
    if hasattr(suggester, "spans_per_token"):
        return suggester.spans_per_token
    if isinstance(suggester, partial) and suggester.func is ngram_suggester:
        return max(1, len(suggester.keywords.get("sizes", ())))
    return None


def check_sentence_lengths(
    doc_offsets: np.ndarray,
    sentence_offsets: np.ndarray,
    per_token: Optional[int],
    max_sentence_length: Optional[int],
    owner: str,
    raise_limit: Callable[[int], str],
    dense: bool = False,
) -> None:
    """A ValueError naming ``max_sentence_length`` if a sentence is longer than
    it while the lattice is quadratic: ``per_token`` (``spans_per_token``)
    None or above ``max_sentence_length``; no error when it is None (no limit).
    doc_offsets (B + 1,), sentence_offsets (U + 1,) in batch coordinates;
    ``owner`` starts the message, ``raise_limit(n)`` says how to raise the
    limit to n tokens; ``dense``: the owner's charts hold every span of a
    sentence whatever the suggester (nested_ner), so bounding the
    suggester's spans is no remedy."""
    if max_sentence_length is None or (per_token is not None and per_token <= max_sentence_length):
        return
    lengths = np.diff(sentence_offsets)
    if not lengths.size or lengths.max() <= max_sentence_length:
        return
    longest = int(np.argmax(lengths))
    n, first = int(lengths[longest]), int(sentence_offsets[longest])
    doc = int(np.searchsorted(doc_offsets, first, side="right")) - 1
    start = first - int(doc_offsets[doc])
    if dense:
        lattice, bound = "every span of it in its charts", ""
    else:
        lattice = (
            "candidate spans of any length (max_length = null, or a suggester that states no spans_per_token)"
            if per_token is None
            else f"up to {per_token} candidate spans ending at each token (spans_per_token), more than max_sentence_length"
        )
        bound = "bound the spans (max_length of the suggester, e.g. 8), "
    raise ValueError(
        f"{owner}: a sentence of {n:,} tokens (Doc {doc} of the batch, tokens {start}-{start + n}) is longer than "
        f"max_sentence_length = {max_sentence_length}, and it would have {lattice}: they grow with the "
        f"square of its length (up to {n * (n + 1) // 2:,}). Split the Docs into sentences (a parser or a sentencizer "
        f"before the component), {bound}or {raise_limit(n)} (null: no limit)."
    )


def check_ragged_capacity(
    doc_offsets: np.ndarray, sentence_offsets: np.ndarray, per_token: Optional[int], name: str
) -> None:
    """A ValueError if a Doc could have more spans than a Ragged holds
    (``RAGGED_SPANS``): per sentence of n tokens min(per_token n, n (n + 1) / 2),
    all of them when ``per_token`` is None."""
    lengths = np.diff(sentence_offsets).astype(np.float64)
    worst = lengths * (lengths + 1) / 2
    if per_token is not None:
        worst = np.minimum(worst, per_token * lengths)
    doc_of = np.searchsorted(doc_offsets, sentence_offsets[:-1], side="right") - 1
    per_doc = np.bincount(doc_of, weights=worst, minlength=doc_offsets.shape[0] - 1)
    if per_doc.size and per_doc.max() > RAGGED_SPANS:
        doc = int(np.argmax(per_doc))
        raise ValueError(
            f"{name}: Doc {doc} of the batch ({int(doc_offsets[doc + 1] - doc_offsets[doc]):,} tokens, longest sentence "
            f"{int(lengths[doc_of == doc].max()):,}) could have {int(per_doc[doc]):,} candidate spans, more than a "
            f"suggester's Ragged holds ({RAGGED_SPANS:,}). Bound the spans (max_length of the suggester, e.g. 8) or "
            "split the Doc into sentences (a parser or a sentencizer)."
        )


def component_limit(component: str) -> Callable[[int], str]:
    """For ``check_sentence_lengths``: how to raise the ``max_sentence_length``
    setting of the component ``component`` to n tokens at load."""
    return lambda n: (
        f"raise it at load: spacy.load(path, config={ {'components': {component: {'max_sentence_length': n}}} })"
    )


def _suggester_limit(name: str) -> Callable[[int], str]:
    return lambda n: (
        f"raise max_sentence_length of {name} (e.g. [components.spancat.suggester] max_sentence_length = {n})"
    )


def _check_lengths(
    name: str, doc_offsets, sentence_offsets, per_token: Optional[int], max_sentence_length: Optional[int]
) -> None:
    check_sentence_lengths(doc_offsets, sentence_offsets, per_token, max_sentence_length, name, _suggester_limit(name))
    check_ragged_capacity(doc_offsets, sentence_offsets, per_token, name)


def tree_spans(
    docs: Iterable[Doc],
    *,
    ops: Optional[Ops] = None,
    single_arc: bool = False,
    max_length: Optional[int] = None,
    max_sentence_length: Optional[int] = None,
    name: str = DGM,
) -> Ragged:
    """DGM valid spans (``single_arc``: DGM-S spans) of each sentence, as a
    suggester's Ragged; a non-empty Doc without a parse, a sentence over
    ``max_sentence_length`` with a quadratic lattice, or a Doc with more
    possible spans than a Ragged holds is a ValueError. The trees are those
    of a component's batch when it calls the suggester (``batch_trees``:
    read and checked once), else read and checked here."""
    trees = batch_trees(docs, reader=name)
    heads, sentence_offsets, doc_offsets = trees.heads, trees.sentence_offsets, trees.doc_offsets
    _check_lengths(name, doc_offsets, sentence_offsets, 2 if single_arc else max_length, max_sentence_length)
    spans = (single_arc_spans if single_arc else valid_spans)(heads, sentence_offsets, max_length)
    return spans_to_ragged(spans, doc_offsets, ops)


def sentence_spans(
    docs: Iterable[Doc],
    *,
    ops: Optional[Ops] = None,
    max_length: Optional[int] = None,
    max_sentence_length: Optional[int] = None,
) -> Ragged:
    """Every span of each sentence up to ``max_length`` tokens (None:
    unbounded); the same ValueErrors as ``tree_spans`` but the parse."""
    docs = list(docs)
    doc_offsets, sentence_offsets = batch_offsets(docs)
    _check_lengths(ALL_SPANS, doc_offsets, sentence_offsets, max_length, max_sentence_length)
    return spans_to_ragged(all_spans(sentence_offsets, max_length), doc_offsets, ops)


def _declared(suggester: partial, per_token: Optional[int], tree_reader: Optional[str] = None) -> Suggester:
    """``suggester`` with its ``spans_per_token`` and, for one that reads the
    trees, ``tree_reader``: its name, so that a component reads and checks
    the trees with the batch and names the suggester in the errors."""
    suggester.spans_per_token = per_token
    suggester.tree_reader = tree_reader
    return suggester


@registry.misc(DGM)
def build_dgm_suggester(max_length: Optional[int] = None, max_sentence_length: Optional[int] = None) -> Suggester:
    """DGM valid spans of each sentence, at most ``max_length`` tokens (null:
    any); a sentence longer than ``max_sentence_length`` (null: no limit)
    is an error when max_length is null or larger."""
    max_length = positive_or_null(max_length, "max_length", DGM)
    max_sentence_length = positive_or_null(max_sentence_length, "max_sentence_length", DGM)
    return _declared(
        partial(tree_spans, single_arc=False, max_length=max_length, max_sentence_length=max_sentence_length, name=DGM),
        max_length,
        DGM,
    )


@registry.misc(DGM_S)
def build_dgm_s_suggester(max_length: Optional[int] = None) -> Suggester:
    """DGM-S spans of each sentence (single tokens and arcs), at most
    ``max_length`` tokens; at most 2 n spans in n tokens."""
    max_length = positive_or_null(max_length, "max_length", DGM_S)
    return _declared(partial(tree_spans, single_arc=True, max_length=max_length, name=DGM_S), 2, DGM_S)


@registry.misc(ALL_SPANS)
def build_all_spans_suggester(max_length: Optional[int] = None, max_sentence_length: Optional[int] = None) -> Suggester:
    """Every span of each sentence, at most ``max_length`` tokens (null: any);
    a sentence longer than ``max_sentence_length`` (null: no limit) is an
    error when max_length is null or larger."""
    max_length = positive_or_null(max_length, "max_length", ALL_SPANS)
    max_sentence_length = positive_or_null(max_sentence_length, "max_sentence_length", ALL_SPANS)
    return _declared(
        partial(sentence_spans, max_length=max_length, max_sentence_length=max_sentence_length), max_length
    )
