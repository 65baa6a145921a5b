"""Non-local majority features of the two-stage model (Krishnan & Manning 2006).

A first-stage NER labels a whole document (and a whole corpus); the second
stage gets, for every token, the *majority labels* that the first stage gave to
other occurrences of the same (or of a containing) token sequence. Pure
Python/numpy: no spaCy here (``spacy_depner.ml.nonlocal_features`` adapts Docs).

Inputs. A *document* is ``(tokens, spans)``: ``tokens`` its token texts
(List[str], n tokens) and ``spans`` the first stage's entities as
``(start, end_exclusive, label)`` tuples in token positions. Labels are
strings; ``labels`` (K strings) fixes the feature values: 0 means "no
feature" (nothing to count, or the majority is the outside label O), and
``1 + k`` means ``labels[k]``. Labels of spans that are not in ``labels`` are
not counted. Every comparison of token sequences ignores case (the texts are
lowercased with ``str.lower``), as the paper does (sec. 4: "while deciding if
token sequences are equal or hold a subsequence-supersequence relation, we
ignore case").

The six features (sec. 4, "Our features fired based on document and corpus
level statistics"), each computed from the first-stage output of the document
(columns 0-2) and of the corpus (columns 3-5):

- **token-majority** (columns 0, 3): the majority first-stage label of the
  token's lowercased text over all its occurrences. Each occurrence votes for
  the label of the entity covering it, or for O when no entity covers it (an
  occurrence inside several overlapping entities votes once for each distinct
  label). The value is the same for every occurrence of the text: with three
  occurrences of "Australia", two inside LOC entities and one inside an ORG
  entity, all three get LOC. A majority of O gives 0.
- **entity-majority** (columns 1, 4): for a token inside a first-stage entity
  (an "entity sequence": a token sequence labelled as a single entity), the
  majority label of all occurrences of that entity's lowercased token sequence
  *as an entity*; every token of the entity gets it (two "Bank of Australia"
  ORG and one LOC: ORG for all tokens of all three). For a token outside every
  entity, the majority label of its lowercased text as a *single-token*
  entity; 0 if it never is one.
- **superentity-majority** (columns 2, 5): for a token inside an entity x,
  the majority label of the entities that *strictly contain* x's token
  sequence ("entity supersequences": entity sequences that strictly contain
  another entity sequence within their span; containment is of contiguous
  lowercased token sequences, x != y). Every token of x gets it; 0 if no
  entity contains x. Each entity occurrence votes once, even when x occurs in
  it twice. Example: two "Bank of Australia" ORG and one "Australia Cup" MISC
  give ORG to every entity "Australia". For a token outside every entity, the
  majority label of all entities *containing the token* in their span (any
  entity whose lowercased tokens include the token's text, single-token
  entities included): "york" O beside two "New York" LOC and one
  "New York Knicks" ORG gets LOC.

The paper's text of the superentity paragraph is the published one (ACL 2006,
sec. 4); the copy in ``papers/`` is cut before it.

Overlapping first-stage entities (nested output). Token-majority counts every
covering label; for the entity and superentity features a token takes the
*longest* entity covering it (ties: the one that starts first). With flat
first-stage output (``doc.ents``) this never arises.

Soft votes. A first stage that has exact marginals (one of this package's
components) can vote with them: ``votes`` are spans ``(start, end_exclusive,
label, p)``, every mention the first stage considers with its marginal
probability p (those above a floor), and the counts add p where a hard vote
adds 1, so an occurrence the first stage missed still votes with what the
model believed. An occurrence's token votes go to each label with the
probability that an entity of that label covers it (the sum of its covering
votes' p, at most 1), and to O with the rest. The features of a token are
still read from the first stage's entities (which entity holds it); only the
counts change. Hard votes are votes of p = 1 on the entities: the same counts.

Ties (any feature): the value that comes first in ``[O] + labels`` wins, i.e.
the label first in the label list, and O (value 0) before any label for the
token-majority feature. The result does not depend on the order of documents,
spans or dict iteration.

Corpus level. ``CorpusStatistics`` holds the same counts over many documents
(plain dicts: lowercased token -> label -> count, entity string -> label ->
count, contained sequence -> label -> count), so the corpus columns of a
document are read from it. The paper's corpus is the one being labelled (the
training corpus, with cross-validated first-stage predictions, for training;
the test corpus for testing), so ``update`` it with the documents being
processed before computing their features; the document itself is then part
of its corpus, as in the paper. The counts serialize with
``to_dict``/``from_dict`` (JSON and msgpack safe). Their size grows with the
square of the entity lengths (every contiguous part of every entity is a key),
which is small for flat NER corpora.
"""

from typing import Dict, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from .majority_counts import (
    OUTSIDE,
    CorpusStatistics,
    CountsWithout,
    Span,
    Vote,
    Words,
    _check_spans,
    _check_votes,
    count_document,
    sequence_key,
)

N_FEATURES = 6


def majority(by_label: Optional[Mapping[str, int]], label_index: Mapping[str, int], with_outside: bool = False) -> int:
    """The feature value of a label count: 1 + the index of the most frequent
    label, 0 for none. with_outside: the ``OUTSIDE`` count competes as value 0.
    Ties go to the value first in ``[O] + labels``; unknown labels are ignored."""
    if not by_label:
        return 0
    best_value, best_count = 0, (by_label.get(OUTSIDE, 0) if with_outside else 0)
    for label, count in by_label.items():
        value = label_index.get(label, 0)
        if value == 0 or count <= 0:
            continue
        if count > best_count or (count == best_count and best_value != 0 and value < best_value):
            best_value, best_count = value, count
    return best_value


def _covering_spans(spans: Sequence[Span], n_tokens: int) -> np.ndarray:
    """(n_tokens,) index into ``spans`` of the longest span covering each token
    (ties: the earliest start), -1 outside every span."""
    chosen = np.full(n_tokens, -1, dtype=np.int64)
    # Shorter first, and among equal lengths later starts first: the last write wins.
    order = sorted(range(len(spans)), key=lambda k: (spans[k][1] - spans[k][0], -spans[k][0]))
    for k in order:
        start, end, _ = spans[k]
        chosen[start:end] = k
    return chosen


def majority_columns(
    words: Words,
    spans: Sequence[Span],
    chosen: np.ndarray,
    counts: Tuple[Mapping, Mapping, Mapping],
    label_index: Mapping[str, int],
) -> np.ndarray:
    """(n_tokens, 3) int32: token-, entity- and superentity-majority values of
    a document's tokens read from ``counts`` (document or corpus counts, as
    returned by ``count_document``); ``chosen`` from ``_covering_spans``."""
    token_counts, entity_counts, superentity_counts = counts
    ids, vocabulary = words
    out = np.zeros((len(ids), 3), dtype=np.int32)
    if len(ids) == 0:
        return out
    # One value per distinct lowercased text, gathered for every token.
    token_values = np.array(
        [majority(token_counts.get(word), label_index, with_outside=True) for word in vocabulary], dtype=np.int32
    )
    out[:, 0] = token_values[ids]
    # Tokens inside an entity: the values of the entity's sequence.
    lowered = words.lowered()
    span_values = np.zeros((max(len(spans), 1), 2), dtype=np.int32)
    for k, (start, end, _) in enumerate(spans):
        key = sequence_key(lowered[start:end].tolist())
        span_values[k, 0] = majority(entity_counts.get(key), label_index)
        span_values[k, 1] = majority(superentity_counts.get(key), label_index)
    inside = chosen >= 0
    out[inside, 1:] = span_values[chosen[inside]]
    # Tokens outside every entity: the token as a single-token entity, and every
    # entity containing it (strict supersequences plus the single-token entity),
    # one value per distinct text outside entities.
    outside = ~inside
    outside_values = np.zeros((len(vocabulary), 2), dtype=np.int32)
    for word_id in np.unique(ids[outside]).tolist():
        word = vocabulary[word_id]
        as_entity = entity_counts.get(word)
        containing: Dict[str, int] = dict(superentity_counts.get(word) or {})
        for label, count in (as_entity or {}).items():
            containing[label] = containing.get(label, 0) + count
        outside_values[word_id] = majority(as_entity, label_index), majority(containing, label_index)
    out[outside, 1:] = outside_values[ids[outside]]
    return out


def label_index(labels: Sequence[str]) -> Dict[str, int]:
    """Feature value of each label: 1 + its position (0 is "none")."""
    labels = list(labels)
    if len(set(labels)) != len(labels) or any(not isinstance(label, str) or label == OUTSIDE for label in labels):
        raise ValueError(f"labels must be distinct non-empty strings, got {labels!r}")
    return {label: k + 1 for k, label in enumerate(labels)}


def nonlocal_features(
    tokens: Union[Sequence[str], Words],
    spans: Sequence[Span],
    labels: Sequence[str],
    corpus: Optional[CorpusStatistics] = None,
    votes: Optional[Sequence[Vote]] = None,
    without_document: bool = False,
) -> np.ndarray:
    """The six majority features of every token of one document.

    tokens: the document's token texts (n), or their ``Words``; spans: the first stage's entities,
    ``(start, end_exclusive, label)``; labels: K labels, feature value 1 + k
    for ``labels[k]``; corpus: corpus counts (which should include this
    document, see the module docstring), or None for no corpus features;
    votes: the first stage's soft votes ``(start, end_exclusive, label, p)``
    counted in the document features instead of the spans (None: hard votes);
    without_document: the corpus counts include this document and its own
    counts are taken out of them (leave one out), so that a document's corpus
    features never count its own entities.

    Returns (n, 6) int32 in 0..K: document token-, entity-, superentity-majority,
    then the same at corpus level (zeros when corpus is None). Definitions and
    tie rule: module docstring (Krishnan & Manning 2006, sec. 4).
    """
    index = label_index(labels)
    words = Words.from_tokens(tokens)
    n = len(words.ids)
    spans = _check_spans(spans, n)
    chosen = _covering_spans(spans, n)
    out = np.zeros((n, N_FEATURES), dtype=np.int32)
    document_counts = count_document(words, spans, None if votes is None else _check_votes(votes, n))
    out[:, :3] = majority_columns(words, spans, chosen, document_counts, index)
    if corpus is not None:
        counts = corpus.counts
        if without_document:
            counts = tuple(CountsWithout(c, d) for c, d in zip(counts, document_counts))
        out[:, 3:] = majority_columns(words, spans, chosen, counts, index)
    return out
