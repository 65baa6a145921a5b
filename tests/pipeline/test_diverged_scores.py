"""A diverged model is a clear error, not garbage confidences or gradients.

Each entity component is initialized on the tiny corpus, then its output
layer (the one thinc Linear of its model) gets weights of 1e20, as after a
divergence: its scores reach ~1e20. Wherever marginals are computed
(``update``, and ``predict`` with ``probabilities``), the structure's bound
(``structures.score_range``) turns this into the ValueError "scores out of
range: the model has diverged". ``predict`` with ``probabilities = false`` only
decodes the MAP, which is right at any magnitude, so it still answers. NaN weights give the
structures' "must be finite" error at predict and update alike.
"""

import numpy as np
import pytest
import spacy
from spacy.tokens import Span
from tiny_corpus import SMALL_TOK2VEC, TINY, make_example

DIVERGED = "scores out of range: the model has diverged"
ARCHITECTURES = {
    "dgm_ner": "spacy_depner.SpanScorer.v1",
    "nested_ner": "spacy_depner.MentionScorer.v1",
    "hypergraph_ner": "spacy_depner.TokenScorer.v1",
    "chain_ner": "spacy_depner.TagScorer.v1",
}


def initialized(factory: str):
    """(nlp, component, examples): the component alone, initialized on the
    tiny corpus (entities also as the span group the span components learn)."""
    nlp = spacy.blank("en")
    ner = nlp.add_pipe(factory, config={"model": {"@architectures": ARCHITECTURES[factory], "tok2vec": SMALL_TOK2VEC}})
    examples = [make_example(nlp, *row) for row in TINY]
    for eg in examples:
        eg.reference.spans[factory] = [Span(eg.reference, e.start, e.end, label=e.label_) for e in eg.reference.ents]
    ner.initialize(lambda: examples, nlp=nlp)
    return nlp, ner, examples


def set_output_weights(model, value: float) -> None:
    """Every weight of the model's output layer (its only Linear) set to
    ``value`` times the sign of its initial value."""
    (output,) = [node for node in model.walk() if node.name == "linear"]
    output.set_param("W", (np.sign(output.get_param("W")) * value).astype("float32"))


@pytest.mark.parametrize("factory", ["dgm_ner", "nested_ner", "hypergraph_ner", "chain_ner"])
def test_predict_and_update_refuse_a_diverged_model(factory):
    nlp, ner, examples = initialized(factory)
    docs = [eg.predicted for eg in examples]
    ner.predict(docs)  # fine before
    set_output_weights(ner.model, 1e20)
    with pytest.raises(ValueError, match=DIVERGED + r"\. The largest \|score\| is [1-9]\.?\d*e\+(19|2\d)"):
        ner.predict(docs)
    with pytest.raises(ValueError, match=DIVERGED):
        ner.update(examples)
    with pytest.raises(ValueError, match=DIVERGED):
        nlp(docs[0].copy())
    ner.settings["probabilities"] = False  # the MAP alone: no marginals, no bound
    ner.predict(docs)
    ner.settings["threshold"] = 0.5  # a threshold needs the marginals again
    with pytest.raises(ValueError, match=DIVERGED):
        ner.predict(docs)


def test_chain_ner_decodes_a_diverged_model_without_scores_but_refuses_to_train_it():
    nlp, ner, examples = initialized("chain_ner")
    set_output_weights(ner.model, 1e20)
    docs = [eg.predicted for eg in examples]
    ner.settings["probabilities"] = False
    prediction = ner.predict(docs)
    assert prediction.mentions.shape[1] == 3 and prediction.probabilities is None
    with pytest.raises(ValueError, match=DIVERGED):
        ner.update(examples)


@pytest.mark.parametrize("factory", sorted(ARCHITECTURES))
def test_nan_weights_are_refused_at_predict_and_update(factory):
    nlp, ner, examples = initialized(factory)
    set_output_weights(ner.model, np.nan)
    for run in (lambda: ner.predict([eg.predicted for eg in examples]), lambda: ner.update(examples)):
        with pytest.raises(ValueError, match="finite.*NaN or inf"):
            run()
