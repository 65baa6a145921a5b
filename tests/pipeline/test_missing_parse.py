"""The error for a pipeline that trains a tree-reading component without
trees names that component (not its suggester) and both fixes: a parser
listed in [training] annotating_components, or, in Python, a parser before
it and ``nlp.update(..., annotates=["parser"])``; the Python fix works."""

import pytest
import spacy
from tiny_corpus import SMALL_TOK2VEC, TINY, make_example

from spacy_depner.doc_arrays.trees import require_parse

PARSER = {
    "min_action_freq": 1,
    "model": {
        "@architectures": "spacy.TransitionBasedParser.v2",
        "state_type": "parser",
        "extra_state_tokens": False,
        "hidden_width": 32,
        "maxout_pieces": 2,
        "use_upper": True,
        "tok2vec": SMALL_TOK2VEC,
    },
}
DGM = {"model": {"@architectures": "spacy_depner.SpanScorer.v1", "tok2vec": SMALL_TOK2VEC}}


@pytest.mark.parametrize("factory", ["dgm_ner", "nested_ner"])
def test_training_without_trees_names_the_component_and_both_fixes(factory):
    nlp = spacy.blank("en")
    config = DGM if factory == "dgm_ner" else {"suggester": {"@misc": "spacy_depner.dgm_suggester.v1"}}
    nlp.add_pipe(factory, name="my_ner", config=config)
    examples = [make_example(nlp, *row, trees=False) for row in TINY]
    if factory == "nested_ner":  # its gold mentions are a span group
        for eg in examples:
            eg.reference.spans["nested_ner"] = list(eg.reference.ents)
    with pytest.raises(ValueError) as raised:
        optimizer = nlp.initialize(lambda: examples)
        nlp.update(examples, sgd=optimizer)
    message = str(raised.value)
    assert message.startswith("'my_ner' (its spacy_depner.dgm_suggester.v1) needs dependency trees")
    assert "Put a parser before 'my_ner' in the pipeline" in message
    assert "[training] annotating_components" in message
    assert 'nlp.add_pipe("parser", before="my_ner")' in message and 'annotates=["parser"]' in message


def test_the_python_fix_of_the_message_trains():
    nlp = spacy.blank("en")
    nlp.add_pipe("dgm_ner", name="my_ner", config=DGM)
    nlp.add_pipe("parser", before="my_ner", config=PARSER)
    examples = [make_example(nlp, *row, trees=False) for row in TINY]
    optimizer = nlp.initialize(lambda: examples)
    losses = nlp.update(examples, sgd=optimizer, annotates=["parser"])
    assert losses["my_ner"] > 0 and losses["parser"] > 0


def test_a_suggester_alone_names_itself_and_the_component_that_uses_it():
    nlp = spacy.blank("en")
    with pytest.raises(
        ValueError,
        match=r"^'my_suggester' needs dependency trees.*"
        r"Put a parser before the component that uses 'my_suggester'",
    ):
        require_parse([nlp("Mary lives in Paris")], reader="my_suggester")
