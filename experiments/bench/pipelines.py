"""The pipelines the benchmarks time: a blank English pipeline with spaCy's
tok2vec and one entity component (or spaCy's ``ner``) listening to it."""

from typing import Dict, List, Optional

LISTENER = {"@architectures": "spacy.Tok2VecListener.v1", "width": 96, "upstream": "*"}
LABELS = ["PER", "ORG", "LOC"]
# Each entity component with its default model, listening to the shared tok2vec.
MODELS = {
    "dgm_ner": "spacy_depner.SpanScorer.v1",
    "chain_ner": "spacy_depner.TagScorer.v1",
    "nested_ner": "spacy_depner.MentionScorer.v1",
    "hypergraph_ner": "spacy_depner.TokenScorer.v1",
}


def build_pipeline(last: str, examples, model: Optional[Dict] = None, labels: Optional[List[str]] = None, **settings):
    """A blank English pipeline: tok2vec + ``last`` listening to it (its
    ``model``, by default spaCy's parser model for ``ner`` and the
    component's default architecture (``MODELS``) otherwise; other component
    ``settings``), initialized on
    ``examples`` (with ``labels``, if given)."""
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("tok2vec")
    if model is None and last == "ner":
        model = {
            "@architectures": "spacy.TransitionBasedParser.v2",
            "state_type": "ner",
            "extra_state_tokens": False,
            "hidden_width": 64,
            "maxout_pieces": 2,
            "use_upper": True,
            "nO": None,
            "tok2vec": LISTENER,
        }
    elif model is None:
        model = {"@architectures": MODELS[last], "tok2vec": LISTENER}
    nlp.add_pipe(last, config={"model": model, **settings})
    if labels is not None:
        nlp.config["initialize"]["components"][last] = {"labels": labels}
    nlp.initialize(lambda: examples)
    return nlp
