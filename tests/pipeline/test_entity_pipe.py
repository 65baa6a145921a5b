"""The contract every entity component shares (pipeline/entity_pipe.py):
explicit initialized state, and clear errors for a missing or corrupt cfg."""

import pytest
import spacy
import srsly
from spacy.tokens import Doc
from spacy.training import Example
from tiny_corpus import TINY

FACTORIES = ["dgm_ner", "nested_ner", "hypergraph_ner", "chain_ner"]


def initialized_pipeline(factory: str):
    nlp = spacy.blank("en")
    component = nlp.add_pipe(factory)
    nlp.config["initialize"]["components"][factory] = {"labels": ["PER", "LOC"]}
    words, heads, deps, _ = TINY[1]
    docs = [Doc(nlp.vocab, words=words, heads=heads, deps=deps)]
    nlp.initialize(lambda: [Example(doc, doc) for doc in docs])
    return nlp, component


@pytest.mark.parametrize("factory", FACTORIES)
def test_initialized_is_explicit_and_labels_are_fixed_after_it(factory):
    nlp = spacy.blank("en")
    component = nlp.add_pipe(factory)
    assert component.initialized is False
    assert component.add_label("PER") == 1
    assert component.add_label("PER") == 0
    nlp, component = initialized_pipeline(factory)
    assert component.initialized is True
    with pytest.raises(ValueError, match="after it was initialized"):
        component.add_label("ORG")


@pytest.mark.parametrize("factory", FACTORIES)
def test_deleted_cfg_file_is_a_clear_error(factory, tmp_path):
    nlp, _ = initialized_pipeline(factory)
    nlp.to_disk(tmp_path)
    loaded = spacy.load(tmp_path)
    assert loaded.get_pipe(factory).initialized is True
    assert loaded.get_pipe(factory).labels == ("PER", "LOC")
    (tmp_path / factory / "cfg").unlink()
    with pytest.raises(ValueError, match="missing or corrupt") as error:
        spacy.load(tmp_path)
    assert str(tmp_path / factory) in str(error.value)


@pytest.mark.parametrize("factory", FACTORIES)
def test_cfg_without_labels_is_a_clear_error(factory, tmp_path):
    nlp, _ = initialized_pipeline(factory)
    nlp.to_disk(tmp_path)
    cfg = srsly.read_json(tmp_path / factory / "cfg")
    del cfg["labels"]
    srsly.write_json(tmp_path / factory / "cfg", cfg)
    with pytest.raises(ValueError, match="missing or corrupt"):
        spacy.load(tmp_path)


@pytest.mark.parametrize("factory", FACTORIES)
def test_bytes_without_cfg_are_a_clear_error(factory):
    _, component = initialized_pipeline(factory)
    data = srsly.msgpack_loads(component.to_bytes())
    del data["cfg"]
    fresh = spacy.blank("en").add_pipe(factory)
    with pytest.raises(ValueError, match="missing or corrupt"):
        fresh.from_bytes(srsly.msgpack_dumps(data))


def test_a_saved_setting_changed_at_load_is_a_clear_error(tmp_path):
    nlp, _ = initialized_pipeline("chain_ner")
    nlp.to_disk(tmp_path)
    with pytest.raises(ValueError, match="trained with scheme = 'BILOU'"):
        spacy.load(tmp_path, config={"components": {"chain_ner": {"scheme": "BIO"}}})


@pytest.mark.parametrize("annotating", [True, False])
def test_initialize_samples_the_trees_of_annotating_components(annotating):
    """Inputs without trees and a parser before the component: the model's
    dependency features are initialized on the parser's trees when the
    parser is an annotating component, and cannot be otherwise."""
    nlp = spacy.blank("en")
    nlp.add_pipe("parser")
    nlp.add_pipe(
        "dgm_ner", config={"model": {"@architectures": "spacy_depner.SpanScorer.v1", "dependency_features": True}}
    )
    if annotating:
        nlp.config["training"]["annotating_components"] = ["parser"]
    examples = []
    for words, heads, deps, _ in TINY:
        examples.append(Example(Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words, heads=heads, deps=deps)))
    nlp.config["initialize"]["components"]["dgm_ner"] = {"labels": ["PER", "LOC"]}
    if annotating:
        nlp.initialize(lambda: examples)
        assert nlp.get_pipe("dgm_ner").initialized
        assert not examples[0].predicted.has_annotation("DEP")  # the sample was a copy
    else:
        with pytest.raises(ValueError, match="needs dependency trees"):
            nlp.initialize(lambda: examples)
