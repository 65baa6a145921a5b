"""The comparison configs: composed from one recipe (configs/recipe) and each
model's part (configs/models), so they differ only in their component."""
import os
from pathlib import Path

import pytest
from spacy import util
from thinc.api import Config

from experiments.configs import compose, model_parts, stale_configs

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
SHARED = ("training", "system", "initialize")
PRETRAINED = Path(os.environ.get("DEPNER_DATA", "/work/shared/data")) / "models" / "en_core_web_sm-3.8.0"
PARSERS = ("parser_ewt.cfg", "parser_gum.cfg")  # the studies' own parsers: not entity models


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.cfg")), ids=lambda path: path.stem)
def test_every_entity_config_trains_with_the_recipes_optimizer(path):
    recipe = Config().from_disk(CONFIGS / "recipe" / "training.cfg", interpolate=False)["training"]["optimizer"]
    if path.name not in PARSERS:
        assert Config().from_disk(path, interpolate=False)["training"]["optimizer"] == recipe


def test_committed_configs_are_composed_from_their_parts():
    assert model_parts(CONFIGS), "no model parts found"
    assert stale_configs(CONFIGS, write=False) == []


@pytest.mark.parametrize("corpus", ["ewt", "genia", "gum"])
def test_the_models_of_a_comparison_share_the_recipe_and_the_encoder(corpus):
    configs = {part.stem: Config().from_disk(CONFIGS / part.name, interpolate=False)
               for part in model_parts(CONFIGS) if f" {corpus}" in part.read_text().split("# recipe:")[1].split("\n")[0]}
    assert len(configs) >= 3
    for section in SHARED:
        blocks = {name: {k: v for k, v in config[section].items() if k != "score_weights"} for name, config in configs.items()}
        assert len({repr(block) for block in blocks.values()}) == 1, blocks
    encoders = {repr(config["components"]["tok2vec"]) for config in configs.values() if "tok2vec" in config["components"]}
    assert len(encoders) == 1
    assert all(config["training"]["optimizer"]["use_averages"] is True for config in configs.values())


@pytest.mark.parametrize("part", model_parts(CONFIGS), ids=lambda path: path.stem)
def test_each_composed_config_builds_its_pipeline(part):
    config = util.load_config(CONFIGS / part.name, interpolate=False)
    if "pretrained" in config["paths"]:  # the own-data configs source a pretrained pipeline's parts
        if not (PRETRAINED / "config.cfg").is_file():
            pytest.skip(f"no en_core_web_sm at {PRETRAINED} (set DEPNER_DATA to the data folder that has models/)")
        config["paths"]["pretrained"] = str(PRETRAINED)
    nlp = util.load_model_from_config(config, auto_fill=True, validate=True)
    assert nlp.pipe_names == list(config["nlp"]["pipeline"])


def test_a_part_without_its_recipe_line_is_refused(tmp_path):
    (tmp_path / "recipe").mkdir()
    part = tmp_path / "model.cfg"
    part.write_text("# a model\n[nlp]\npipeline = []\n")
    with pytest.raises(ValueError, match="# recipe:"):
        compose(part, tmp_path / "recipe")
    part.write_text("# recipe: nowhere\n[nlp]\npipeline = []\n")
    with pytest.raises(ValueError, match=r"\['nowhere'\] are not in"):
        compose(part, tmp_path / "recipe")


def test_a_changed_recipe_makes_every_config_stale(tmp_path):
    import shutil

    copy = tmp_path / "configs"
    shutil.copytree(CONFIGS, copy)
    recipe = copy / "recipe" / "training.cfg"
    recipe.write_text(recipe.read_text().replace("dropout = 0.1", "dropout = 0.2"))
    stale = stale_configs(copy, write=True)
    assert sorted(path.name for path in stale) == sorted(part.name for part in model_parts(copy))
    assert Config().from_disk(copy / "dgm_ewt.cfg", interpolate=False)["training"]["dropout"] == 0.2
    assert stale_configs(copy, write=False) == []
