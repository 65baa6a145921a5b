"""Setting up, from the training corpus, the layers that read corpus-level
statistics: today the ``spacy_depner.NonLocalFeatures.v1`` layers of a
two-stage model's second stage (Krishnan & Manning 2006)."""

from typing import Callable, Iterable, Sequence

from spacy.tokens import Doc
from thinc.api import Model

from .nonlocal_features import LAYER_NAME, configure_nonlocal_features, corpus_statistics


def initialize_corpus_layers(model: Model, labels: Sequence[str], get_docs: Callable[[], Iterable[Doc]]) -> int:
    """Give every NonLocalFeatures layer of ``model`` the label list and the
    corpus counts of the first-stage entities of the Docs ``get_docs()``
    gives (the training Docs, first-stage entities in the layer's span
    group). Returns the number of such layers; without one, ``get_docs`` is
    not called. Components call it at initialization, before the model's
    own initialization."""
    layers = [node for node in model.walk() if node.name == LAYER_NAME]
    for layer in layers:
        configure_nonlocal_features(layer, labels, corpus_statistics(get_docs(), spans_key=layer.attrs["spans_key"]))
    return len(layers)
