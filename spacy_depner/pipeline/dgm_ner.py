"""``dgm_ner``: flat NER by a semi-Markov CRF over a lattice of candidate spans.

The lattice is chosen by ``structure`` (Jie, Muis & Lu 2017): ``dgm`` (DGM
valid spans), ``dgm_s`` (single-arc spans) or ``semi_markov`` (every span up to
``max_length``). Entities go to ``doc.ents``; the marginal probability of each
predicted entity goes to ``doc.spans[scores_key].attrs["scores"]``.
"""
from itertools import islice
from typing import Callable, Dict, Iterable, List, Optional, Tuple

import numpy as np
import srsly
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc, Span, SpanGroup
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.util import registry
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer, set_dropout_rate

from ..structures import segment_lattice
from ..structures.candidate_spans import merge_spans, span_index
from .doc_arrays import Batch, covered_tokens, make_batch, require_parse, spans_per_doc

STRUCTURES = ("dgm", "dgm_s", "semi_markov")

DEFAULT_MODEL = Config().from_str(
    """
[model]
@architectures = "spacy_depner.SpanScorer.v1"
hidden_width = 128
maxout_pieces = 2
width_buckets = 8
dependency_features = false
dependency_width = 32

[model.tok2vec]
@architectures = "spacy.HashEmbedCNN.v2"
pretrained_vectors = null
width = 96
depth = 4
embed_size = 2000
window_size = 1
maxout_pieces = 3
subword_features = true
"""
)["model"]


@Language.factory(
    "dgm_ner",
    assigns=["doc.ents", "token.ent_iob", "token.ent_type", "doc.spans"],
    default_config={
        "model": DEFAULT_MODEL,
        "structure": "dgm",
        "max_length": None,
        "add_gold_spans": True,
        "scores_key": "dgm_ner",
        "scorer": {"@scorers": "spacy_depner.entity_scorer.v1"},
    },
    default_score_weights={"ents_f": 1.0, "ents_p": 0.0, "ents_r": 0.0, "ents_per_type": None, "ents_lattice_coverage": 0.0},
)
def make_dgm_ner(
    nlp: Language,
    name: str,
    model: Model,
    structure: str,
    max_length: Optional[int],
    add_gold_spans: bool,
    scores_key: str,
    scorer: Optional[Callable],
) -> "DependencyGuidedNER":
    """structure: "dgm" | "dgm_s" | "semi_markov"; max_length: longest entity in
    tokens (null: unbounded); add_gold_spans: during training, add the gold
    entities that the lattice lacks so that the loss is defined."""
    return DependencyGuidedNER(
        nlp.vocab, model, name, structure=structure, max_length=max_length,
        add_gold_spans=add_gold_spans, scores_key=scores_key, scorer=scorer,
    )


class DependencyGuidedNER(TrainablePipe):
    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "dgm_ner",
        *,
        structure: str = "dgm",
        max_length: Optional[int] = None,
        add_gold_spans: bool = True,
        scores_key: str = "dgm_ner",
        scorer: Optional[Callable] = None,
    ) -> None:
        if structure not in STRUCTURES:
            raise ValueError(f"Unknown structure {structure!r} for '{name}': use one of {', '.join(STRUCTURES)}")
        if max_length is not None and int(max_length) < 1:
            raise ValueError(f"max_length must be a positive integer or null, not {max_length!r}")
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scorer = scorer
        self.cfg = {
            "labels": [],
            "structure": structure,
            "max_length": max_length,
            "add_gold_spans": add_gold_spans,
            "scores_key": scores_key,
        }

    @property
    def labels(self) -> Tuple[str, ...]:
        return tuple(self.cfg["labels"])

    def add_label(self, label: str) -> int:
        if not isinstance(label, str) or not label:
            raise ValueError(f"A label must be a non-empty string, not {label!r}")
        if label in self.labels:
            return 0
        if self.model.has_param("transitions"):
            raise ValueError(
                f"Cannot add label {label!r} to '{self.name}' after it was initialized: "
                "pass every label to initialize (labels = [...] in [initialize.components])."
            )
        self.cfg["labels"].append(label)
        self.vocab.strings.add(label)
        return 1

    def _batch(self, docs: List[Doc]) -> Batch:
        return make_batch(docs, self.cfg["structure"], self.cfg["max_length"], self.name)

    def predict(self, docs: Iterable[Doc]):
        """Viterbi segmentation and marginals: (batch, labels (S,), marginals (S, K))."""
        docs = list(docs)
        if self.model.attrs.get("dependency_features"):
            require_parse(docs, self.name)
        batch = self._batch(docs)
        scores, transitions = self.model.predict((docs, batch.spans))
        scores = self.model.ops.to_numpy(scores)
        transitions = self.model.ops.to_numpy(transitions)
        args = (batch.spans, batch.span_offsets, batch.doc_offsets, scores, transitions)
        _, labels = segment_lattice.viterbi(*args)
        _, span_marginals, _ = segment_lattice.marginals(*args)
        return batch, labels, span_marginals

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        batch, labels, span_marginals = predictions
        rows = np.flatnonzero(labels > 0)
        probabilities = span_marginals[rows, labels[rows]]
        doc_of_row = np.searchsorted(batch.doc_offsets, batch.spans[rows, 0], side="right") - 1
        for d, doc in enumerate(docs):
            mine = rows[doc_of_row == d]
            offset = batch.doc_offsets[d]
            ents = [
                Span(doc, int(batch.spans[r, 0] - offset), int(batch.spans[r, 1] - offset + 1), label=self.labels[labels[r] - 1])
                for r in mine
            ]
            doc.set_ents(ents, default="outside")
            group = SpanGroup(doc, name=self.cfg["scores_key"], spans=ents)
            group.attrs["scores"] = probabilities[doc_of_row == d].astype(np.float32)
            doc.spans[self.cfg["scores_key"]] = group

    def _gold(self, examples: List[Example], batch: Batch) -> Tuple[Batch, np.ndarray, int]:
        """Per-span gold labels (S,) (-1: not a gold segment) on a lattice that,
        with add_gold_spans, holds every gold entity; and the number of gold
        entities the candidate spans lacked."""
        label_ids = {label: i + 1 for i, label in enumerate(self.labels)}
        starts, ends, ids = [], [], []
        for doc_offset, eg in zip(batch.doc_offsets, examples):
            aligned = eg.get_aligned_spans_y2x(eg.reference.ents, allow_overlap=False)
            for span in aligned:
                if span.label_ not in label_ids:
                    raise ValueError(
                        f"Unknown label {span.label_!r} in the gold entities for '{self.name}' "
                        f"(labels: {list(self.labels)}). Add it with initialize(labels=...)."
                    )
                starts.append(doc_offset + span.start)
                ends.append(doc_offset + span.end - 1)
                ids.append(label_ids[span.label_])
        entities = np.array([starts, ends], dtype=np.int64).T.reshape(-1, 2)
        ids = np.array(ids, dtype=np.int64)
        missing = span_index(batch.spans, entities, batch.n_tokens) < 0
        if self.cfg["add_gold_spans"] and missing.any():
            spans = merge_spans(batch.spans, entities[missing], batch.n_tokens)
            batch = batch._replace(spans=spans, span_offsets=spans_per_doc(spans, batch.doc_offsets))
        elif missing.any():
            entities, ids = entities[~missing], ids[~missing]
        gold = np.full(batch.spans.shape[0], -1, dtype=np.int64)
        gold[span_index(batch.spans, entities, batch.n_tokens)] = ids
        singles = np.flatnonzero(covered_tokens(entities, batch.n_tokens) == 0)
        gold[span_index(batch.spans, np.stack([singles, singles], axis=1), batch.n_tokens)] = 0
        return batch, gold, int(missing.sum())

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        losses.setdefault(f"{self.name}_gold_outside_lattice", 0.0)
        examples = list(examples)
        validate_examples(examples, "DependencyGuidedNER.update")
        docs = [eg.predicted for eg in examples]
        if not any(len(doc) for doc in docs):
            return losses
        batch = self._batch(docs)
        batch, gold, n_missing = self._gold(examples, batch)
        set_dropout_rate(self.model, drop)
        (scores, transitions), backprop = self.model.begin_update((docs, batch.spans))
        loss, d_scores, d_transitions = self.get_loss(examples, (batch, gold, scores, transitions))
        backprop((self.model.ops.asarray2f(d_scores), self.model.ops.asarray2f(d_transitions)))
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        losses[f"{self.name}_gold_outside_lattice"] += n_missing
        return losses

    def get_loss(self, examples, predictions) -> Tuple[float, np.ndarray, np.ndarray]:
        """Negative log-likelihood of the gold segmentation (eq. 4 without the L2
        term) and its gradient: marginals minus gold counts."""
        batch, gold, scores, transitions = predictions
        scores = np.asarray(self.model.ops.to_numpy(scores), dtype=np.float64)
        transitions = np.asarray(self.model.ops.to_numpy(transitions), dtype=np.float64)
        K = scores.shape[1]
        log_z, span_marginals, transition_marginals = segment_lattice.marginals(
            batch.spans, batch.span_offsets, batch.doc_offsets, scores, transitions
        )
        rows = np.flatnonzero(gold >= 0)
        gold_counts = segment_lattice.transition_counts(batch.spans, batch.span_offsets, gold, K)
        gold_score = scores[rows, gold[rows]].sum() + (gold_counts * transitions).sum()
        d_scores = span_marginals
        d_scores[rows, gold[rows]] -= 1.0
        return float(log_z.sum() - gold_score), d_scores.astype(np.float32), (transition_marginals - gold_counts).astype(np.float32)

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[List[str]] = None,
    ) -> None:
        validate_get_examples(get_examples, "DependencyGuidedNER.initialize")
        if labels is not None:
            for label in labels:
                self.add_label(label)
        else:
            for eg in get_examples():
                for ent in eg.reference.ents:
                    self.add_label(ent.label_)
        if not self.labels:
            raise ValueError(
                f"'{self.name}' has no labels: give labels to initialize or training examples with entities."
            )
        self.model.set_dim("nO", len(self.labels) + 1)
        sample = [eg.predicted for eg in islice(get_examples(), 10)]
        self.model.initialize(X=(sample, None) if sample else None)

    def from_bytes(self, bytes_data, *, exclude=tuple()):
        return _load_or_explain(self, lambda: TrainablePipe.from_bytes(self, bytes_data, exclude=exclude), "bytes")

    def from_disk(self, path, *, exclude=tuple()):
        return _load_or_explain(self, lambda: TrainablePipe.from_disk(self, path, exclude=exclude), str(path))


def _load_or_explain(pipe: TrainablePipe, load: Callable, source: str):
    """Load a component, turning any failure into an error that names the source."""
    try:
        return load()
    except Exception as error:
        raise ValueError(
            f"Could not load '{pipe.name}' from {source}: the data is missing or corrupt "
            f"({type(error).__name__}: {error}). Save the pipeline again with nlp.to_disk."
        ) from error
