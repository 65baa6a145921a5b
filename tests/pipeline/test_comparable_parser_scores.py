"""spacy_depner.comparable_parser_scores.v1 on the real en_core_web_sm: no
UAS against UD trees (another scheme), with a warning saying why; the usual
scores against trees of its own labels. Skipped, saying why, where the data
folder has no en_core_web_sm."""

import os
import pickle
import warnings
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_depner.pipeline.comparable_parser_scores import ComparableParserScorer, make_comparable_parser_scores

SM = Path(os.environ.get("DEPNER_DATA", "/work/shared/data")) / "models" / "en_core_web_sm-3.8.0"
pytestmark = pytest.mark.skipif(
    not (SM / "config.cfg").is_file(),
    reason=f"no en_core_web_sm at {SM} (set DEPNER_DATA to the data folder that has models/)",
)
WORDS = "John Smith visited New York .".split()


@pytest.fixture(scope="module")
def nlp():
    return make_comparable_parser_scores("parser")(spacy.load(SM, exclude=["ner", "lemmatizer", "attribute_ruler"]))


def scores_and_warnings(nlp, reference):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scores = nlp.evaluate([Example(Doc(nlp.vocab, words=WORDS), reference)])
    return scores, [str(w.message) for w in caught if "UAS" in str(w.message)]


def test_no_attachment_score_against_trees_of_another_scheme(nlp):
    ud = Doc(
        nlp.vocab, words=WORDS, heads=[2, 0, 2, 4, 2, 2], deps=["nsubj", "flat", "root", "compound", "obj", "punct"]
    )
    scores, messages = scores_and_warnings(nlp, ud)
    assert not {"dep_uas", "dep_las", "dep_las_per_type"} & set(scores)
    assert len(messages) == 1 and "flat, obj" in messages[0] and "another annotation scheme" in messages[0]
    assert "tag_acc" in scores  # the other components still score


def test_the_usual_scores_against_trees_of_its_own_labels(nlp):
    own = nlp(Doc(nlp.vocab, words=WORDS))
    reference = Doc(nlp.vocab, words=WORDS, heads=[t.head.i for t in own], deps=[t.dep_ for t in own])
    scores, messages = scores_and_warnings(nlp, reference)
    assert scores["dep_uas"] == 1.0 and scores["dep_las"] == 1.0 and not messages


def test_a_component_without_labels_is_named():
    nlp = spacy.blank("en")
    nlp.add_pipe("merge_entities", name="parser")
    with pytest.raises(ValueError, match="'parser' has no labels"):
        make_comparable_parser_scores("parser")(nlp)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """en_core_web_sm's tok2vec, tagger and parser with the callback in its config, saved."""
    nlp = spacy.load(SM, exclude=["ner", "lemmatizer", "attribute_ruler", "senter"])
    nlp.config["nlp"]["after_pipeline_creation"] = {
        "@callbacks": "spacy_depner.comparable_parser_scores.v1",
        "parser": "parser",
    }
    path = tmp_path_factory.mktemp("sm_parser")
    nlp.to_disk(path)
    return path


def test_a_loaded_pipeline_scores_its_parser_on_its_own_trees_and_pickles(saved):
    """The labels are read when scoring, after the weights are loaded; the
    wrapped scorer survives pickling (spawn workers get the pipeline so)."""
    for nlp in (spacy.load(saved), pickle.loads(pickle.dumps(spacy.load(saved)))):
        assert isinstance(nlp.get_pipe("parser").scorer, ComparableParserScorer)
        test_the_usual_scores_against_trees_of_its_own_labels(nlp)
        test_no_attachment_score_against_trees_of_another_scheme(nlp)


@pytest.mark.parametrize("how", ["disable", "exclude", "enable"])
def test_loads_without_its_parser(saved, how):
    nlp = spacy.load(saved, **{how: ["tok2vec"] if how == "enable" else ["parser"]})
    assert nlp.pipe_names == ["tok2vec"] + (["tagger"] if how != "enable" else [])
    assert nlp("John Smith visited New York .")[0].dep_ == ""
    if how == "disable":
        nlp.enable_pipe("parser")
        test_the_usual_scores_against_trees_of_its_own_labels(nlp)
