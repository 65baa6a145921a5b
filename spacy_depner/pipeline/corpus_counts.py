"""Test-time corpus counts of the two-stage model (Krishnan & Manning 2006).

The second stage's corpus-level majority features count the first stage's
entities over a corpus. Trained, they hold the counts of the training
corpus; the paper counts the test corpus too. ``counting_pipe`` gives a
``pipe`` of the assembled pipeline that does so for the Docs it is given.
"""

from typing import Callable, Iterable, List

from spacy.language import Language
from spacy.tokens import Doc

from ..ml.majority_counts import CorpusStatistics
from ..ml.nonlocal_features import LAYER_NAME, configure_layer, layer_statistics, nonlocal_layers


def counting_pipe(nlp: Language, second_stage: str = "second_stage") -> Callable[..., List[Doc]]:
    """``pipe(docs, batch_size=64)`` of the two-stage pipeline ``nlp`` that
    first runs every component but ``second_stage`` on ``docs``, adds the
    first stage's entities on them to the corpus counts of the second
    stage's NonLocalFeatures layer (the paper's corpus-level features at test
    time), then runs ``second_stage``; the layer's counts are restored
    afterwards, so each call counts its own Docs only. Returns the Docs."""
    if second_stage not in nlp.pipe_names:
        raise ValueError(f"the pipeline has no component {second_stage!r} (it has {nlp.pipe_names})")
    second = nlp.get_pipe(second_stage)
    layers = nonlocal_layers(second.model)
    if not layers:
        raise ValueError(
            f"{second_stage!r} has no NonLocalFeatures layer ({LAYER_NAME!r}): there are no corpus counts to add to"
        )

    def pipe(docs: Iterable[Doc], batch_size: int = 64) -> List[Doc]:
        saved = [layer.attrs["corpus_statistics"] for layer in layers]
        with nlp.select_pipes(disable=[second_stage]):
            docs = list(nlp.pipe(docs, batch_size=batch_size))
        for layer, counts in zip(layers, saved):  # each layer counts its own first stage's span group
            previous = CorpusStatistics.from_dict(counts) if counts else None
            configure_layer(layer, corpus_statistics=layer_statistics(layer, docs, previous))
            layer.attrs["input_counted"] = True
        try:
            return list(second.pipe(docs, batch_size=batch_size))
        finally:
            for layer, counts in zip(layers, saved):
                layer.attrs["corpus_statistics"] = counts
                layer.attrs["input_counted"] = False

    return pipe
