"""A wrong value of a component's setting in a config is caught by spaCy's
config validation (the factories' typed arguments), as for spaCy's own
components: ``spacy train`` then prints the validation error, not a
traceback."""

import pytest
import spacy
from confection import ConfigValidationError
from spacy.util import load_model_from_config

WRONG = [
    ("dgm_ner", "decoding", "posteriour"),
    ("nested_ner", "decoding", "MAP"),
    ("hypergraph_ner", "decoding", "viterbi"),
    ("chain_ner", "decoding", "posteriour"),
    ("nested_ner", "space", "cky"),
    ("nested_ner", "ents", "outer"),
    ("hypergraph_ner", "ents", "longest"),
    ("chain_ner", "scheme", "IOB"),
    ("chain_ner", "loss", "hinge"),
]


@pytest.mark.parametrize("factory,setting,value", WRONG)
def test_a_wrong_setting_is_a_config_validation_error(factory, setting, value):
    nlp = spacy.blank("en")
    nlp.add_pipe(factory)
    config = nlp.config.copy()
    config["components"][factory][setting] = value
    with pytest.raises(ConfigValidationError) as raised:
        load_model_from_config(config, auto_fill=True, validate=True)
    assert f"{factory} -> {setting}" in str(raised.value) and repr(value) in str(raised.value)
    config["components"][factory][setting] = nlp.config["components"][factory][setting]
    assert load_model_from_config(config, auto_fill=True, validate=True).pipe_names == [factory]
