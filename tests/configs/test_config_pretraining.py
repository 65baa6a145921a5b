"""The configs' [pretraining]: spaCy loads ``--paths.init_tok2vec`` only when
that section is non-empty, so every config with a tok2vec has one naming
it, and a composed config given weights from ``spacy pretrain`` starts
training from them."""

from typing import List, Tuple

import numpy as np
import pytest
import spacy
import srsly
from corpus_copies import ROOT, write_ewt
from spacy.schemas import ConfigSchemaPretrain
from spacy.training.initialize import get_tok2vec_ref, init_nlp
from spacy.training.pretrain import pretrain
from spacy.util import load_config, load_model_from_config, registry
from thinc.api import Config, Model

from spacy_depner.cli.pretrain_text import TextFormat, sentence_words, write_pretrain_text

CONFIGS = ROOT / "configs"
ALL_CONFIGS = sorted(CONFIGS.glob("*.cfg")) + sorted(CONFIGS.glob("own_data/*.cfg"))
# source parts of a pipeline package (en_core_web_sm): not built here
SOURCED = {
    "own_data_dgm.cfg",
    "own_data_ner_sourced.cfg",
    "own_data_two_stage.cfg",
    "own_data_two_stage_ner_tok2vec.cfg",
}


def listens(section) -> bool:
    """Whether a config section holds a listener: its vectors are another component's."""
    if not isinstance(section, dict):
        return False
    return str(section.get("@architectures", "")).startswith("spacy.Tok2VecListener.") or any(
        listens(value) for value in section.values()
    )


def tok2vec_holders(config: Config) -> List[Tuple[str, str]]:
    """(component, layer) of each tok2vec of the config: a "tok2vec" component
    (layer ""), or a component whose model has its own Tok2Vec as "tok2vec"
    (not one over a listener, e.g. a window layer over features of another
    component's vectors: spacy pretrain would train that component's)."""
    holders = []
    for name, block in config["components"].items():
        if block.get("factory") == "tok2vec":
            holders.append((name, ""))
        inner = block.get("model", {}).get("tok2vec", {})
        if isinstance(inner, dict) and str(inner.get("@architectures", "")).startswith("spacy.Tok2Vec."):
            if not listens(inner):
                holders.append((name, "tok2vec"))
    return holders


@pytest.mark.parametrize("path", ALL_CONFIGS, ids=lambda path: path.stem)
def test_every_config_with_a_tok2vec_pretrains_it(path):
    config = load_config(path, interpolate=False)
    holders = tok2vec_holders(config)
    if not holders:  # e.g. the two-stage second stage: its tok2vec is inside NonLocalFeatures
        return
    after_init = config["initialize"].get("after_init") or {}
    if after_init.get("@callbacks") == "spacy_depner.tok2vec_from_component.v1":
        # its tok2vec starts from another component's trained weights, copied after initialization
        assert not config["pretraining"], f"{path.name}: pretrained weights would be overwritten after init"
        return
    pretraining = config["pretraining"]
    assert pretraining, f"{path.name}: an empty [pretraining] makes spacy train ignore --paths.init_tok2vec"
    assert (pretraining["component"], pretraining["layer"]) in holders
    if any(layer == "" for _, layer in holders):
        assert pretraining["component"] == "tok2vec"
    assert pretraining["corpus"] == "corpora.pretrain"
    assert config["corpora"]["pretrain"]["@readers"] == "spacy.JsonlCorpus.v1"
    assert config["corpora"]["pretrain"]["path"] == "${paths.raw_text}" and config["paths"]["raw_text"] is None
    assert config["initialize"]["init_tok2vec"] == "${paths.init_tok2vec}"
    resolved = registry.resolve(config.interpolate()["pretraining"], schema=ConfigSchemaPretrain)
    assert resolved["max_epochs"] > 0


@pytest.mark.parametrize("path", [p for p in ALL_CONFIGS if p.name not in SOURCED], ids=lambda path: path.stem)
def test_the_pretrained_layer_is_a_tok2vec(path):
    config = load_config(path, interpolate=False)
    if not config["pretraining"]:
        return
    nlp = load_model_from_config(config, auto_fill=True, validate=True)
    layer = get_tok2vec_ref(nlp, config["pretraining"])
    assert layer.name.startswith("extract_features>>")  # spacy.Tok2Vec.v2, not a listener or a wrapper


def parameters(model: Model) -> List[dict]:
    """The parameters of each node of ``model`` in walk order (as ``Model.to_bytes`` lists them)."""
    return [{name: node.get_param(name) for name in node.param_names if node.has_param(name)} for node in model.walk()]


def same_parameters(left: List[dict], right: List[dict]) -> bool:
    return [sorted(a) for a in left] == [sorted(b) for b in right] and all(
        np.array_equal(a[name], b[name]) for a, b in zip(left, right) for name in a
    )


def test_a_composed_config_starts_from_the_pretrained_weights(tmp_path):
    data = tmp_path / "data"
    write_ewt(data, {"train": 4, "dev": 1})
    text = tmp_path / "text.jsonl"
    write_pretrain_text(
        sentence_words(data / "ud_ewt" / "r2.9" / "en_ewt-ud-train.conllu", TextFormat.conllu), text, "train"
    )
    config_path = CONFIGS / "dgm_ewt.cfg"
    (tmp_path / "pretrain").mkdir()  # spacy pretrain's command makes it, the function does not
    pretrain(
        load_config(
            config_path, overrides={"paths.data": str(data), "paths.raw_text": str(text), "pretraining.max_epochs": 1}
        ).interpolate(),
        tmp_path / "pretrain",
    )
    weights = tmp_path / "pretrain" / "model0.bin"
    saved = srsly.msgpack_loads(weights.read_bytes())["params"]

    def initialized(overrides) -> List[dict]:
        spacy.util.fix_random_seed(0)
        nlp = init_nlp(load_config(config_path, overrides={"paths.data": str(data), **overrides}))
        return parameters(nlp.get_pipe("tok2vec").model)

    assert same_parameters(initialized({"paths.init_tok2vec": str(weights)}), saved)
    assert not same_parameters(initialized({}), saved)
