"""Settings read under their old names (``renamed_settings``): a config
that gives only the old name sets the new one, the same value under both
names is accepted, and two different values are refused."""

import pytest
import spacy

ENTITY_FACTORIES = ["dgm_ner", "chain_ner", "nested_ner", "hypergraph_ner"]


@pytest.mark.parametrize("factory", ENTITY_FACTORIES)
def test_scores_is_the_old_name_of_probabilities(factory):
    nlp = spacy.blank("en")
    old = nlp.add_pipe(factory, name="old", config={"scores": False})
    same = nlp.add_pipe(factory, name="same", config={"probabilities": False, "scores": False})
    new = nlp.add_pipe(factory, name="new", config={"probabilities": False})
    assert old.settings["probabilities"] is False and same.settings["probabilities"] is False
    assert new.settings["probabilities"] is False
    assert not old.needs_marginals
    with pytest.raises(ValueError, match="scores is the old name of probabilities"):
        nlp.add_pipe(factory, name="both", config={"probabilities": False, "scores": True})


@pytest.mark.parametrize("factory", ["dgm_ner", "chain_ner"])
def test_scores_key_is_the_old_name_of_spans_key(factory):
    nlp = spacy.blank("en")
    assert nlp.add_pipe(factory, name="old", config={"scores_key": "mine"}).spans_key == "mine"
    with pytest.raises(ValueError, match="scores_key is the old name of spans_key"):
        nlp.add_pipe(factory, name="both", config={"spans_key": "a", "scores_key": "b"})


def test_structure_is_the_old_name_of_space():
    nlp = spacy.blank("en")
    old = nlp.add_pipe("nested_ner", name="old", config={"structure": "cyk"})
    same = nlp.add_pipe("nested_ner", name="same", config={"space": "semi_markov", "structure": "semi_markov"})
    assert old.settings["space"] == "cyk" and old.structure_options() == {"space": "cyk"}
    assert same.settings["space"] == "semi_markov"
    with pytest.raises(ValueError, match="structure is the old name of space"):
        nlp.add_pipe("nested_ner", name="both", config={"space": "cyk", "structure": "semi_markov"})
