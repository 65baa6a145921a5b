"""A batch is read once: through a component whose suggester and model both
read the trees (the DGM suggester, dependency features), the parse check
and the forest check run once per batch, in prediction, in training and in
``rank``'s measures; the suggester alone (as spaCy's spancat calls it) and
the model alone still check the trees themselves."""

import sys

import pytest
import spacy
from thinc.api import NumpyOps
from tiny_corpus import SMALL_TOK2VEC, TINY, input_doc, make_example

from spacy_depner.doc_arrays import trees as doc_trees
from spacy_depner.pipeline.suggesters import DGM, build_dgm_suggester
from spacy_depner.pipeline.uncertainty import doc_uncertainties

WITH_FEATURES = {"tok2vec": SMALL_TOK2VEC, "dependency_features": True, "dependency_width": 8}
CASES = {
    "dgm_ner, DGM suggester and dependency features": (
        "dgm_ner",
        {
            "model": {"@architectures": "spacy_depner.SpanScorer.v1", "hidden_width": 16, **WITH_FEATURES},
            "suggester": {"@misc": DGM, "max_length": None},
        },
    ),
    "nested_ner, DGM suggester": ("nested_ner", {"suggester": {"@misc": DGM, "max_length": 3}, "space": "cyk"}),
    "chain_ner, dependency features": (
        "chain_ner",
        {"model": {"@architectures": "spacy_depner.TagScorer.v1", "hidden_width": 16, **WITH_FEATURES}},
    ),
}


@pytest.fixture
def checks(monkeypatch):
    """Counts of the parse check (``require_parse``, wherever a module holds
    it) and of the forest check (``forest.first_fault``)."""
    counts = {"parse": 0, "forest": 0}
    original_parse, original_fault = doc_trees.require_parse, doc_trees.forest.first_fault

    def parse(*args, **kwargs):
        counts["parse"] += 1
        return original_parse(*args, **kwargs)

    def fault(*args):
        counts["forest"] += 1
        return original_fault(*args)

    for name, module in list(sys.modules.items()):
        if name.startswith("spacy_depner") and getattr(module, "require_parse", None) is original_parse:
            monkeypatch.setattr(module, "require_parse", parse)
    monkeypatch.setattr(doc_trees.forest, "first_fault", fault)
    return counts


def trained(factory, config):
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe(factory, config=config)
    examples = [make_example(nlp, *row) for row in TINY]
    for eg in examples:  # nested_ner reads its mentions from the span group
        eg.reference.spans["nested_ner"] = list(eg.reference.ents)
    optimizer = nlp.initialize(lambda: examples)
    return nlp, pipe, examples, optimizer


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_check_runs_once_per_batch(case, checks):
    nlp, pipe, examples, optimizer = trained(*CASES[case])
    docs = [input_doc(nlp, words, heads, deps) for words, heads, deps, _ in TINY]

    def once(step):
        checks.update(parse=0, forest=0)
        step()
        assert checks == {"parse": 1, "forest": 1}, step

    once(lambda: pipe.set_annotations(docs, pipe.predict(docs)))
    once(lambda: nlp.update(examples, sgd=optimizer))
    once(lambda: doc_uncertainties(pipe, docs))
    once(lambda: list(pipe.pipe(docs, batch_size=len(docs))))


def test_a_suggester_or_a_model_alone_checks_the_trees_itself(checks):
    nlp, pipe, _, _ = trained(*CASES["dgm_ner, DGM suggester and dependency features"])
    docs = [input_doc(nlp, words, heads, deps) for words, heads, deps, _ in TINY]
    checks.update(parse=0, forest=0)
    build_dgm_suggester()(docs, ops=NumpyOps())
    assert checks == {"parse": 1, "forest": 1}
    pipe.model.predict(pipe.model_input(pipe.read(docs)))  # the batch's trees out of scope: read again
    assert checks == {"parse": 3, "forest": 3}
    unparsed = [nlp.make_doc("Mary lives in Paris")]
    with pytest.raises(ValueError, match="'spacy_depner.dgm_suggester.v1' needs dependency trees"):
        build_dgm_suggester()(unparsed, ops=NumpyOps())
