"""The comparison configs: composed from one recipe (configs/recipe) and each
model's part (configs/models), so they differ only in their component."""

import os
from pathlib import Path

import pytest
from spacy import util
from thinc.api import Config

from experiments.configs.compose import compose, composed_path, composed_paths, model_parts, stale_configs
from experiments.configs.transformer import (
    CURATED,
    CURATED_MODELS,
    SPACY_TRANSFORMERS,
    TRANSFORMER_MODELS,
    with_transformer,
)

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
SHARED = ("training", "system", "initialize")
PRETRAINED = Path(os.environ.get("DEPNER_DATA", "/work/shared/data")) / "models" / "en_core_web_sm-3.8.0"
PARSERS = ("parser_ewt.cfg", "parser_gum.cfg")
TRANSFORMER_RECIPE = Config().from_disk(
    CONFIGS / "recipe" / "transformer.cfg", interpolate=False
)  # the studies' own parsers: not entity models
# (encoder, model part) of every composed config of configs/transformer
TRANSFORMER_CONFIGS = [(SPACY_TRANSFORMERS, name) for name in TRANSFORMER_MODELS] + [
    (CURATED, name) for name in CURATED_MODELS
]


@pytest.mark.parametrize(
    "path",
    composed_paths(CONFIGS)
    + sorted(CONFIGS.glob("transformer/*.cfg"))
    + sorted(CONFIGS.glob("own_data/transformer/*.cfg")),
    ids=lambda path: str(path.relative_to(CONFIGS)),
)
def test_every_entity_config_trains_with_the_recipes_optimizer(path):
    """The recipe's optimizer, parameter averaging included; on a transformer
    only its learning rate is the part's fine-tuning schedule."""
    recipe = Config().from_disk(CONFIGS / "recipe" / "training.cfg", interpolate=False)["training"]["optimizer"]
    if path.parent.name == "transformer":
        recipe = {**recipe, "learn_rate": TRANSFORMER_RECIPE["training"]["optimizer"]["learn_rate"]}
    if path.name not in PARSERS:
        assert Config().from_disk(path, interpolate=False)["training"]["optimizer"] == recipe


def test_committed_configs_are_composed_from_their_parts():
    assert model_parts(CONFIGS), "no model parts found"
    assert stale_configs(CONFIGS, write=False) == []


@pytest.mark.parametrize("corpus", ["ewt", "genia", "gum"])
def test_the_models_of_a_comparison_share_the_recipe_and_the_encoder(corpus):
    configs = {
        part.stem: Config().from_disk(composed_path(CONFIGS, part.stem), interpolate=False)
        for part in model_parts(CONFIGS)
        if f" {corpus}" in part.read_text().split("# recipe:")[1].split("\n")[0]
    }
    assert len(configs) >= 3
    for section in SHARED:
        blocks = {
            name: {k: v for k, v in config[section].items() if k != "score_weights"} for name, config in configs.items()
        }
        assert len({repr(block) for block in blocks.values()}) == 1, blocks
    encoders = {
        repr(config["components"]["tok2vec"]) for config in configs.values() if "tok2vec" in config["components"]
    }
    assert len(encoders) == 1
    assert all(config["training"]["optimizer"]["use_averages"] is True for config in configs.values())


@pytest.mark.parametrize("part", model_parts(CONFIGS), ids=lambda path: path.stem)
def test_each_composed_config_builds_its_pipeline(part):
    config = util.load_config(composed_path(CONFIGS, part.stem), interpolate=False)
    if "pretrained" in config["paths"]:  # the own-data configs source a pretrained pipeline's parts
        if not (PRETRAINED / "config.cfg").is_file():
            pytest.skip(f"no en_core_web_sm at {PRETRAINED} (set DEPNER_DATA to the data folder that has models/)")
        config["paths"]["pretrained"] = str(PRETRAINED)
    if "trained_ner" in config["paths"]:  # a ner trained on the user's labels: any pipeline with a ner
        config["paths"]["trained_ner"] = str(PRETRAINED)
    nlp = util.load_model_from_config(config, auto_fill=True, validate=True)
    assert nlp.pipe_names == list(config["nlp"]["pipeline"])
    # spaCy's SCORE (the weights it combines from the components' defaults and the config) is the entity F
    # alone: a sentencizer's sents_f, or spancat's default spans_sc_f, would halve it
    weighted = {name for name, weight in nlp.config["training"]["score_weights"].items() if weight}
    assert weighted in ({"ents_f"}, {"f_nested_ner"}), weighted


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
    assert sorted(stale) == sorted(
        [composed_path(copy, part.stem) for part in model_parts(copy)]
        + [composed_path(copy, name, encoder) for encoder, name in TRANSFORMER_CONFIGS]
    )
    assert {
        "own_data/own_data_dgm.cfg",
        "own_data/transformer/own_data_dgm.cfg",
        "dgm_ewt.cfg",
        "transformer/dgm_ewt.cfg",
    } <= {str(path.relative_to(copy)) for path in stale}  # the user's configs apart
    assert Config().from_disk(copy / "dgm_ewt.cfg", interpolate=False)["training"]["dropout"] == 0.2
    assert stale_configs(copy, write=False) == []


@pytest.mark.parametrize("encoder,name", TRANSFORMER_CONFIGS, ids=lambda x: getattr(x, "extra", x))
def test_each_transformer_config_is_its_model_on_the_shared_transformer(encoder, name):
    cnn = Config().from_disk(composed_path(CONFIGS, name), interpolate=False)
    config = Config().from_disk(composed_path(CONFIGS, name, encoder), interpolate=False)
    part = Config().from_disk(CONFIGS / "recipe" / encoder.part, interpolate=False)
    assert config["nlp"]["pipeline"] == ["transformer" if c == "tok2vec" else c for c in cnn["nlp"]["pipeline"]]
    assert "tok2vec" not in config["components"]
    assert config["components"]["transformer"] == part["components"]["transformer"]
    assert config["initialize"]["components"].get("transformer") == part.get("initialize", {}).get(
        "components", {}
    ).get("transformer")  # the curated transformer's loaders of weights and word pieces
    assert set(part["training"]["optimizer"]) == {"learn_rate"}  # the recipe's optimizer, its rate only
    assert config["training"]["optimizer"]["learn_rate"] == part["training"]["optimizer"]["learn_rate"]
    text = composed_path(CONFIGS, name, encoder).read_text()
    assert "spacy.Tok2VecListener.v1" not in text
    listeners = [
        c
        for c in config["components"]
        if c != "transformer" and "model" in config["components"][c] and "tok2vec" in config["components"][c]["model"]
    ]
    assert listeners, "no model listens to the transformer"
    for component in listeners:
        assert config["components"][component]["model"]["tok2vec"] == encoder.listener
    # the rest is the CNN config's: the components but their encoder, the corpora, the score weights
    for component in listeners:
        rest = {k: v for k, v in config["components"][component].items() if k != "model"}
        assert rest == {k: v for k, v in cnn["components"][component].items() if k != "model"}
    assert config["corpora"] == {k: v for k, v in cnn["corpora"].items() if k != "pretrain"}


@pytest.mark.parametrize(
    "encoder,name",
    [(e, n) for e, n in TRANSFORMER_CONFIGS if not n.startswith("own_data")],
    ids=lambda x: getattr(x, "extra", x),
)
def test_transformer_configs_pass_spacy_debug_config(encoder, name, tmp_path):
    pytest.importorskip(
        encoder.package, reason=f"{encoder.package} is not installed: pip install 'spacy-depner[{encoder.extra}]'"
    )
    data = PRETRAINED.parents[1]
    if not (data / "models" / "all-MiniLM-L6-v2" / "config.json").is_file():
        pytest.skip(f"no all-MiniLM-L6-v2 under {data}/models (set DEPNER_DATA to the data folder that has models/)")
    from spacy.cli.debug_config import debug_config

    debug_config(composed_path(CONFIGS, name, encoder), overrides={"paths.data": str(data)})


def test_a_config_without_a_tok2vec_cannot_take_a_transformer():
    config = Config().from_disk(CONFIGS / "two_stage_second_ewt.cfg", interpolate=False)
    if "tok2vec" in config["nlp"]["pipeline"]:
        config["nlp"]["pipeline"] = [c for c in config["nlp"]["pipeline"] if c != "tok2vec"]
    with pytest.raises(ValueError, match="no 'tok2vec' component to replace"):
        with_transformer(config, CONFIGS / "recipe")


# how a config was made, which a user copying an own-data config has no use for
GENERATION_WORDS = ("Composed by", "python -m experiments", "recipe part", "recipe line", "configs/models", "# recipe:")


@pytest.mark.parametrize(
    "path", sorted(CONFIGS.glob("own_data/**/*.cfg")), ids=lambda path: str(path.relative_to(CONFIGS))
)
def test_an_own_data_config_header_speaks_to_the_user(path):
    lines = path.read_text(encoding="utf8").splitlines()
    header = "\n".join(lines[: next(i for i, line in enumerate(lines) if not line.startswith("#"))])
    assert "python -m spacy train" in header
    assert [word for word in GENERATION_WORDS if word in header] == []


def test_the_configs_readme_names_every_own_data_config():
    readme = (CONFIGS / "README.md").read_text(encoding="utf8")
    assert "own_data/" in readme and "python -m experiments configs" in readme
    assert [path.name for path in sorted(CONFIGS.glob("own_data/*.cfg")) if path.name not in readme] == []
