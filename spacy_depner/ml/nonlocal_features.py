"""Two-stage non-local features as a tok2vec wrapper (Krishnan & Manning 2006).

``spacy_depner.NonLocalFeatures.v1`` is a ``Model[List[Doc], List[Floats2d]]``
usable anywhere a tok2vec is (the ``tok2vec`` of ``chain_ner``'s
``TagScorer`` or of ``dgm_ner``'s ``SpanScorer``, for instance):

    docs: List[Doc], B docs of n_b tokens, each with the first stage's
        entities in ``doc.spans[spans_key]``
    output: List[Floats2d], (n_b, tok2vec width + F * width) per doc: the
        wrapped tok2vec's vector of each token, then one embedding (``width``
        each, one table per feature) of each of its six majority features,
        and with ``local = true`` a seventh: the first stage's own label of the
        token with its position in the entity (B, I, L, U), or O (F = 6 or 7)

The six features (document token-, entity-, superentity-majority, then the
same at corpus level; values 0 = none, 1..K = a label) are computed in the
forward pass by ``spacy_depner.ml.majority_labels.nonlocal_features`` (see
there for the definitions, sec. 4 of the paper, and the tie rule) from:

- ``doc.spans[spans_key]``: the first stage's entities of that Doc. A missing
  key is a ValueError: the first stage's predictions must be copied there.
- ``model.attrs["labels"]``: the label list (value 1 + k for ``labels[k]``):
  the component's labels (``labels = null``), a list given in the config, or
  ``labels = "first_stage"``: the labels of the first stage's entities on the
  training corpus, in its own label set (a pretrained pipeline's ``ner``, 18
  OntoNotes types, read by a second stage that predicts PER, ORG and LOC).
- ``model.attrs["corpus_statistics"]``: ``CorpusStatistics.to_dict()`` of the
  first stage's output over the corpus (``{}``: corpus features all 0).
- with ``votes_key`` set, ``doc.spans[votes_key]``: the first stage's soft
  votes, every mention it considers with its marginal probability in the
  group's ``attrs["scores"]`` (``first_stage_spans`` with ``votes_from``, or a
  reader, puts them there); they are counted instead of the entities, the
  entities still say which entity holds a token (``majority_labels``, "Soft
  votes").

Both attrs serialize with the model (``to_bytes``/``to_disk``). The embedding
tables are one parameter, ``embeddings`` (6 * (n_labels + 1), width): rows
``c * (n_labels + 1) + v`` embed value v of feature column c (row v = 0
included, a learnt "none" vector per column). ``n_labels`` is the config
value, or ``len(attrs["labels"])`` at initialization; nO = tok2vec width +
6 * width is inferred at initialization.

How a pipeline uses it (the paper's two stages):

1. A first-stage NER (any component: ``ner``, ``chain_ner``, ``dgm_ner``)
   runs before the second stage, and its entities are copied to
   ``doc.spans[spans_key]`` (e.g. ``doc.spans["first_stage"] = list(doc.ents)``)
   by the second-stage component or a small component between the two.
2. The second stage is any entity component whose model's ``tok2vec`` is
   this layer wrapping an ordinary tok2vec, e.g. in a config::

       [components.ner2.model.tok2vec]
       @architectures = "spacy_depner.NonLocalFeatures.v1"
       width = 16
       spans_key = "first_stage"

       [components.ner2.model.tok2vec.tok2vec]
       @architectures = "spacy.HashEmbedCNN.v2"
       ...

3. At initialization, before the model is initialized, the component sets the
   label list, and the corpus counts, on every such layer:
   ``configure_nonlocal_features(model, labels, statistics)`` where
   ``statistics = corpus_statistics(docs, spans_key)`` over the first stage's
   output on the training corpus (the paper uses 10-fold cross-validated
   first-stage predictions on the training data, sec. 5, so that they are as
   noisy as on test data). Whole documents (readers' ``whole_documents``
   option) give the document-level features their meaning.
4. To label another corpus with corpus-level features, update the counts
   with the first stage's output on that corpus and set them again
   (``configure_nonlocal_features(model, corpus_statistics=...)``): the
   paper's corpus features at test time are over the test corpus.
"""

from typing import Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np
from spacy.attrs import ORTH
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model, glorot_uniform_init
from thinc.types import Floats2d

from .majority_counts import CorpusStatistics, Span, Vote, Words
from .majority_labels import N_FEATURES, label_index, nonlocal_features

LAYER_NAME = "nonlocal_features"
FIRST_STAGE_LABELS = "first_stage"  # labels = "first_stage": the first stage's own label set, read from the corpus
POSITIONS = 4  # B, I, L, U: the local feature's positions of a token in a first-stage entity


@registry.architectures("spacy_depner.NonLocalFeatures.v1")
def build_nonlocal_features(
    tok2vec: Model[List[Doc], List[Floats2d]],
    width: int = 16,
    spans_key: str = "first_stage",
    n_labels: Optional[int] = None,
    labels: Union[None, str, List[str]] = None,
    local: bool = False,
    votes_key: Optional[str] = None,
    leave_one_out: bool = False,
    dropout: float = 0.0,
) -> Model[List[Doc], List[Floats2d]]:
    """A tok2vec whose token vectors are extended with embeddings of the six
    two-stage majority features (Krishnan & Manning 2006, sec. 4), and with
    ``local`` of the first stage's own label of each token.

    width: embedding width per feature (output grows by 6 or 7 * width).
    spans_key: ``doc.spans`` key holding the first stage's entities.
    n_labels: number of labels; None: ``len(model.attrs["labels"])`` at init.
    labels: the first stage's labels the features count: None, the
        component's; a list; or "first_stage", those of the first stage's
        entities on the training corpus (its own label set).
    local: add the token's own first-stage label and position (B/I/L/U),
        one embedding per (label, position) and one for O.
    votes_key: ``doc.spans`` key of the first stage's soft votes (spans with
        their marginal probabilities in ``attrs["scores"]``), counted instead
        of the entities of ``spans_key``; None: hard votes, each entity once.
    leave_one_out: a document's corpus features never count its own
        first-stage entities: in training (the corpus counts are the training
        documents') and in ``counting_pipe`` (they count its input) the
        document's counts are taken out; otherwise (new text, counts of the
        training corpus) they hold none of it anyway. False: the paper's
        counts, the document included where the corpus holds it.
    dropout: in training, the probability that a document's features of this
        layer are all "none" (every column at value 0), as if its first stage
        had found nothing there, so that the second stage does not learn to
        trust one first stage alone (on text unlike the training corpus, the
        first stage trained on it errs more often); 0: never. Prediction
        never drops anything.
    """
    if isinstance(labels, str) and labels != FIRST_STAGE_LABELS:
        raise ValueError(
            f"labels must be null (the component's labels), a list of the first stage's labels or "
            f"{FIRST_STAGE_LABELS!r} (those found on the training corpus), not {labels!r}"
        )
    if width < 1:
        raise ValueError(f"width must be at least 1, not {width!r}")
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"dropout must be at least 0 and below 1, not {dropout!r}")
    if n_labels is not None and n_labels < 1:
        raise ValueError(f"n_labels must be at least 1 (or null to take the component's labels), not {n_labels!r}")
    return Model(
        LAYER_NAME,
        nonlocal_features_forward,
        init=init_nonlocal_features,
        layers=[tok2vec],
        dims={"nO": None, "width": width, "n_labels": n_labels},
        params={"embeddings": None},
        refs={"tok2vec": tok2vec},
        attrs={
            "spans_key": spans_key,
            "labels": list(labels) if isinstance(labels, list) else [],
            "label_source": "config" if isinstance(labels, list) else (labels or "component"),
            "local": bool(local),
            "votes_key": votes_key,
            "leave_one_out": bool(leave_one_out),
            "dropout": float(dropout),
            "input_counted": False,
            "corpus_statistics": {},
        },
    )


def n_features(model: Model) -> int:
    """Number of embedded feature columns: the six majority features, and the local label."""
    return N_FEATURES + int(bool(model.attrs.get("local")))


def embedding_rows(model: Model) -> int:
    """Rows of the embedding table: (n_labels + 1) per majority feature, 1 + 4 * n_labels for the local one."""
    n_labels = model.get_dim("n_labels")
    return N_FEATURES * (n_labels + 1) + (1 + POSITIONS * n_labels if model.attrs.get("local") else 0)


def init_nonlocal_features(model: Model, X: Optional[List[Doc]] = None, Y=None) -> Model:
    """Initializes the tok2vec, sets n_labels (from attrs["labels"] if unset)
    and nO, and draws the embedding tables. Needs no first-stage spans."""
    tok2vec = model.layers[0]
    tok2vec.initialize(X=X)
    if not model.has_dim("n_labels"):
        labels = list(model.attrs.get("labels") or [])
        if not labels:
            raise ValueError(
                "NonLocalFeatures needs its label list before initialization: set n_labels in the "
                "config, or model.attrs['labels'] (configure_nonlocal_features(model, labels))"
            )
        model.set_dim("n_labels", len(labels))
    width = model.get_dim("width")
    if tok2vec.has_dim("nO") and tok2vec.get_dim("nO"):
        tok2vec_width = tok2vec.get_dim("nO")
    elif X:
        tok2vec_width = tok2vec.predict(X[:1])[0].shape[1]
    else:
        raise ValueError("NonLocalFeatures cannot infer the width of its tok2vec: initialize it with sample Docs")
    model.set_dim("nO", tok2vec_width + n_features(model) * width)
    model.set_param("embeddings", glorot_uniform_init(model.ops, (embedding_rows(model), width)))
    return model


def doc_document(
    doc: Doc, spans_key: str, votes_key: Optional[str] = None
) -> Tuple[Words, List[Span], Optional[List[Vote]]]:
    """``(words, spans, votes)`` of a Doc for ``nonlocal_features``: the
    token texts as ``Words`` (read from the Doc's ORTH array, one string
    look-up per distinct text), the first stage's entities in
    ``doc.spans[spans_key]`` and, with ``votes_key``, its soft votes in
    ``doc.spans[votes_key]`` (probabilities in ``attrs["scores"]``; else None)."""
    if spans_key not in doc.spans:
        raise ValueError(
            f"NonLocalFeatures: the Doc has no span group {spans_key!r}. The first stage's "
            f"predicted entities must be copied to doc.spans[{spans_key!r}] before the second "
            f"stage runs (e.g. doc.spans[{spans_key!r}] = list(doc.ents))."
        )
    types, type_ids = np.unique(doc.to_array(ORTH).reshape(-1), return_inverse=True)
    words = Words.from_types([doc.vocab.strings[orth] for orth in types.tolist()], type_ids.reshape(-1))
    spans = [(span.start, span.end, span.label_) for span in doc.spans[spans_key]]
    return words, spans, None if votes_key is None else doc_votes(doc, votes_key)


def votes_key_of(spans_key: str) -> str:
    """Where the soft votes of the first stage in ``doc.spans[spans_key]`` go
    when a reader or ``first_stage_spans`` puts them in a Doc."""
    return f"{spans_key}_votes"


def doc_votes(doc: Doc, votes_key: str) -> List[Vote]:
    """The soft votes of ``doc.spans[votes_key]``: (start, end, label, probability) per span."""
    group = doc.spans[votes_key] if votes_key in doc.spans else None
    scores = None if group is None else group.attrs.get("scores")
    if group is None or scores is None or len(scores) != len(group):
        raise ValueError(
            f"NonLocalFeatures: the Doc has no soft votes in doc.spans[{votes_key!r}] (spans with their "
            "marginal probabilities in attrs['scores']): put first_stage_spans with votes_from = the first "
            f"stage's component before the second stage, or read training Docs whose first-stage records have "
            "votes (two-stage crossval), or set votes_key = null for hard votes"
        )
    return [(span.start, span.end, span.label_, float(p)) for span, p in zip(group, np.asarray(scores).tolist())]


def corpus_statistics(
    docs: Iterable[Doc],
    spans_key: str = "first_stage",
    statistics: Optional[CorpusStatistics] = None,
    votes_key: Optional[str] = None,
) -> CorpusStatistics:
    """Counts of the first stage's entities in ``doc.spans[spans_key]`` (with
    ``votes_key``: of its soft votes there) over ``docs``, added to
    ``statistics`` if given (else new)."""
    statistics = statistics if statistics is not None else CorpusStatistics()
    return statistics.update(doc_document(doc, spans_key, votes_key) for doc in docs)


def layer_statistics(
    layer: Model, docs: Iterable[Doc], statistics: Optional[CorpusStatistics] = None
) -> CorpusStatistics:
    """``corpus_statistics`` of ``docs`` as the NonLocalFeatures ``layer`` counts them (its span group, its votes)."""
    return corpus_statistics(docs, layer.attrs["spans_key"], statistics, layer.attrs.get("votes_key"))


def configure_nonlocal_features(
    model: Model,
    labels: Optional[Sequence[str]] = None,
    corpus_statistics: Optional[CorpusStatistics] = None,
) -> int:
    """Set the label list and/or the corpus counts on every NonLocalFeatures
    layer inside ``model``; returns how many layers were found."""
    layers = nonlocal_layers(model)
    for layer in layers:
        configure_layer(layer, labels, corpus_statistics)
    return len(layers)


def nonlocal_layers(model: Model) -> List[Model]:
    """The NonLocalFeatures layers inside ``model`` (one per first stage it reads)."""
    return [node for node in model.walk() if node.name == LAYER_NAME]


def configure_layer(
    layer: Model, labels: Optional[Sequence[str]] = None, corpus_statistics: Optional[CorpusStatistics] = None
) -> None:
    """Set the label list (unless the layer reads the first stage's own
    labels) and/or the corpus counts of one NonLocalFeatures layer, not of
    the layers it wraps."""
    if labels is not None and layer.attrs.get("label_source", "component") == "component":
        layer.attrs["labels"] = list(labels)
    if corpus_statistics is not None:
        layer.attrs["corpus_statistics"] = corpus_statistics.to_dict()


def _statistics_view(model: Model) -> Optional[CorpusStatistics]:
    """The corpus counts of attrs["corpus_statistics"] (shared, not copied: O(1))."""
    data = model.attrs.get("corpus_statistics") or {}
    return CorpusStatistics.from_dict(data, copy=False) if data else None


def local_labels(n_tokens: int, spans: Sequence[Span], index: dict) -> np.ndarray:
    """(n_tokens,) int32 local feature of each token: 0 outside the first
    stage's entities ``spans`` ((start, end_exclusive, label), as
    ``doc_document`` gives them) of ``index``'s labels, else 1 + 4 * k +
    position (0 B, 1 I, 2 L, 3 U) in the entity of label k (``index``:
    label -> 1 + k). Of overlapping entities the last one wins."""
    out = np.zeros(n_tokens, dtype=np.int32)
    kept = [(start, end, index[label]) for start, end, label in spans if label in index]
    if not kept:
        return out
    starts, ends, label_ids = (np.array(column, dtype=np.int64) for column in zip(*kept))
    lengths = ends - starts
    first = np.repeat(np.cumsum(lengths) - lengths, lengths)
    offset = np.arange(int(lengths.sum()), dtype=np.int64) - first
    length = np.repeat(lengths, lengths)
    position = np.where(length == 1, 3, np.where(offset == 0, 0, np.where(offset == length - 1, 2, 1)))
    out[np.repeat(starts, lengths) + offset] = 1 + POSITIONS * (np.repeat(label_ids, lengths) - 1) + position
    return out


def feature_rows(model: Model, docs: List[Doc], counted: bool = False) -> np.ndarray:
    """(N, F) int32 rows of the embedding table for the tokens of ``docs``
    (F = 6, or 7 with the local label)."""
    labels = list(model.attrs.get("labels") or [])
    n_labels = model.get_dim("n_labels")
    if not labels:
        raise ValueError("NonLocalFeatures has no labels: set model.attrs['labels'] (configure_nonlocal_features)")
    if len(labels) > n_labels:
        raise ValueError(
            f"NonLocalFeatures was initialized for {n_labels} labels but has {len(labels)} "
            f"({labels}): set n_labels in the config or re-initialize the model"
        )
    spans_key = model.attrs["spans_key"]
    statistics = _statistics_view(model)
    documents = [doc_document(doc, spans_key, model.attrs.get("votes_key")) for doc in docs]  # read once
    without = bool(model.attrs.get("leave_one_out")) and (counted or bool(model.attrs.get("input_counted")))
    features = [
        nonlocal_features(words, spans, labels, statistics, votes, without) for words, spans, votes in documents
    ]
    values = np.concatenate(features) if features else np.zeros((0, N_FEATURES), dtype=np.int32)
    if model.attrs.get("local"):
        index = label_index(labels)
        local = [local_labels(len(words.ids), spans, index) for words, spans, _ in documents]
        values = np.hstack([values, (np.concatenate(local) if local else np.zeros(0, dtype=np.int32))[:, None]])
    return (values + none_rows(model)[None, :]).astype(np.int32)


def none_rows(model: Model) -> np.ndarray:
    """(F,) int32 rows of the embedding table of a token with every feature at "none" (value 0)."""
    rows = np.arange(N_FEATURES, dtype=np.int32) * (model.get_dim("n_labels") + 1)
    return (
        np.append(rows, N_FEATURES * (model.get_dim("n_labels") + 1)).astype(np.int32)
        if model.attrs.get("local")
        else rows
    )


def dropped_documents(model: Model, docs: List[Doc], rows: np.ndarray, rate: float) -> np.ndarray:
    """``rows`` ((N, F), the tokens of ``docs``) with every token of a document
    drawn with probability ``rate`` (numpy's generator, which spaCy's seed
    sets) set to ``none_rows``."""
    dropped = np.random.random(len(docs)) < rate
    if not dropped.any():
        return rows
    tokens = np.repeat(dropped, [len(doc) for doc in docs])
    rows = rows.copy()
    rows[tokens] = none_rows(model)
    return rows


def nonlocal_features_forward(model: Model, docs: List[Doc], is_train: bool):
    tok2vec = model.layers[0]
    rows_np = feature_rows(model, docs, counted=is_train)  # training Docs are in the corpus counts
    if is_train and model.attrs.get("dropout", 0.0) > 0:
        rows_np = dropped_documents(model, docs, rows_np, model.attrs["dropout"])
    vectors, backprop_tok2vec = tok2vec(docs, is_train)
    embeddings = model.get_param("embeddings")
    width = model.get_dim("width")
    lengths = [v.shape[0] for v in vectors]
    rows = model.ops.asarray1i(rows_np.reshape(-1))
    embedded = embeddings[rows].reshape(len(rows_np), rows_np.shape[1] * width)
    joined = model.ops.xp.hstack([model.ops.flatten(vectors), embedded]) if vectors else embedded
    outputs = model.ops.unflatten(joined, lengths)  # one array, a row block per Doc

    def backprop(d_outputs: List[Floats2d]) -> List[Doc]:
        d_vectors = [model.ops.xp.ascontiguousarray(d[:, : v.shape[1]]) for d, v in zip(d_outputs, vectors)]
        if d_outputs:
            d_embedded = model.ops.xp.concatenate([d[:, vectors[i].shape[1] :] for i, d in enumerate(d_outputs)])
            d_embeddings = model.ops.alloc2f(*embeddings.shape)
            model.ops.scatter_add(d_embeddings, rows, model.ops.xp.ascontiguousarray(d_embedded).reshape(-1, width))
            model.inc_grad("embeddings", d_embeddings)
        return backprop_tok2vec(d_vectors)

    return outputs, backprop
