"""``spacy_depner.evaluation.penalty_tuning``: the fixed-step search of the
mention penalty of hypergraph_ner (Lu & Roth 2015, sec. 3.7), on a component
and on a saved pipeline, with the GENIA fixture as training and development data."""

from pathlib import Path

import numpy as np
import pytest
import spacy
from tiny_corpus import SMALL_TOK2VEC, train_component

from spacy_depner.evaluation.penalty_tuning import tune_penalty, tune_pipeline_penalty
from spacy_depner.readers.genia import genia_examples, read_genia

GENIA = Path(__file__).parents[1] / "data" / "nested_genia.jsonl"
KEY = "hypergraph_ner"


@pytest.fixture(scope="module")
def trained():
    model = {"@architectures": "spacy_depner.TokenScorer.v1", "hidden_width": 32, "tok2vec": SMALL_TOK2VEC}
    return train_component(
        "hypergraph_ner", {"model": model}, lambda nlp: genia_examples(nlp.vocab, read_genia(GENIA), KEY), 60
    )


def test_tune_penalty_finds_the_best_f1_on_the_grid(trained):
    nlp, ner, examples, _ = trained
    ner.mention_penalty = -40.0  # predicts nothing
    result = tune_penalty(ner, examples, step=0.5, low=-2.0, high=2.0)
    assert result["before_penalty"] == -40.0 and result["before_f"] == 0.0 and result["tuned_f"] > 0.5
    assert ner.mention_penalty == result["tuned_penalty"] and -2.0 <= result["tuned_penalty"] <= 2.0
    # the grid search: no value of the grid does better by spaCy's own scorer, in the same unit (fractions)
    for penalty in np.arange(-2.0, 2.01, 0.5):
        ner.mention_penalty = float(penalty)
        assert nlp.evaluate(examples)[f"spans_{KEY}_f"] <= result["tuned_f"] + 1e-12
    ner.mention_penalty = result["tuned_penalty"]
    assert nlp.evaluate(examples)[f"spans_{KEY}_f"] == pytest.approx(result["tuned_f"])
    with pytest.raises(ValueError, match="step"):
        tune_penalty(ner, examples, step=0.0)


def test_tune_pipeline_penalty_saves_the_tuned_value(trained, tmp_path):
    nlp, ner, _, _ = trained
    ner.mention_penalty = -40.0
    nlp.get_pipe_config(KEY)["mention_penalty"] = -40.0  # the saved setting: predicts nothing
    nlp.to_disk(tmp_path / "model")
    result = tune_pipeline_penalty(tmp_path / "model", tmp_path / "tuned", jsonl=GENIA, step=0.5, low=-2.0, high=2.0)
    assert result["before_f"] == 0.0 and result["tuned_f"] > 0.5
    loaded = spacy.load(tmp_path / "tuned")
    assert loaded.get_pipe(KEY).mention_penalty == result["tuned_penalty"]
    assert loaded.config["components"][KEY]["mention_penalty"] == result["tuned_penalty"]
    with pytest.raises(ValueError, match="no component"):
        tune_pipeline_penalty(tmp_path / "model", tmp_path / "other", jsonl=GENIA, component="nested_ner")
