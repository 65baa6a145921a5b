"""Setting up, from the training corpus, the layers that read corpus-level
statistics: today the ``spacy_depner.NonLocalFeatures.v1`` layers of a
two-stage model's second stage (Krishnan & Manning 2006)."""

from typing import Callable, Iterable, List, Sequence

from spacy.tokens import Doc
from thinc.api import Model

from .majority_counts import CorpusStatistics
from .nonlocal_features import FIRST_STAGE_LABELS, configure_layer, layer_statistics, nonlocal_layers


def initialize_corpus_layers(model: Model, labels: Sequence[str], get_docs: Callable[[], Iterable[Doc]]) -> int:
    """Give every NonLocalFeatures layer of ``model`` the label list and the
    corpus counts of the first-stage entities of the Docs ``get_docs()``
    gives (the training Docs, first-stage entities in the layer's span
    group). Returns the number of such layers; without one, ``get_docs`` is
    not called. Components call it at initialization, before the model's
    own initialization."""
    layers = nonlocal_layers(model)
    for layer in layers:
        statistics = layer_statistics(layer, get_docs())
        if layer.attrs.get("label_source") == FIRST_STAGE_LABELS:
            layer.attrs["labels"] = first_stage_labels(statistics, layer.attrs["spans_key"])
        configure_layer(layer, labels, statistics)
    return len(layers)


def first_stage_labels(statistics: CorpusStatistics, spans_key: str) -> List[str]:
    """The labels of the first stage's entities counted in ``statistics``, sorted."""
    found = sorted({label for by_label in statistics.entities.values() for label in by_label})
    if not found:
        raise ValueError(
            f"NonLocalFeatures with labels = {FIRST_STAGE_LABELS!r} found no first-stage entity in "
            f"doc.spans[{spans_key!r}] of the training Docs: put the first stage (e.g. a sourced, frozen "
            "and annotating ner, then first_stage_spans) before this component in [training] "
            "annotating_components, or list its labels in the config"
        )
    return found
