"""Configs on a pretrained transformer encoder in place of the recipe's CNN
tok2vec. Two encoders, each a recipe part of configs/recipe (the
``transformer`` component, its model name or path ``paths.transformer``, the
fine-tuning optimizer) and the listener every ``spacy.Tok2VecListener.v1`` of
the models is rewritten to (each token the mean of its word pieces):

    SPACY_TRANSFORMERS  recipe/transformer.cfg: spacy-transformers'
                        ``transformer``, TransformerListener.v1
    CURATED             recipe/curated_transformer.cfg: spacy-curated-transformers'
                        ``curated_transformer`` (en_core_web_trf 3.8's encoder),
                        LastTransformerLayerListener.v1

    with_transformer    a config with its tok2vec replaced by an encoder's transformer
    TRANSFORMER_MODELS  the model parts composed again on SPACY_TRANSFORMERS, as
                        CONFIGS/transformer/<name>.cfg (``python -m experiments configs``)
    CURATED_MODELS      the model parts composed again on CURATED, as
                        CONFIGS/transformer/curated_<name>.cfg (one per component)
"""

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Optional, Union

from thinc.api import Config

TRANSFORMER = "transformer"
TOK2VEC = "tok2vec"
TOK2VEC_LISTENER = "spacy.Tok2VecListener.v1"
ENCODERS = ("cnn", TRANSFORMER)
# the model parts that have a composed transformer twin in CONFIGS/transformer/
TRANSFORMER_MODELS = (
    "dgm_ewt",
    "semi_markov_ewt",
    "chain_crf_ewt",
    "ner_ewt",
    "genia_nested",
    "genia_hypergraph",
    "genia_spancat",
    "own_data_dgm",
    "own_data_nested",
)
# the model parts composed on the curated transformer: each of dgm_ner, chain_ner, nested_ner and hypergraph_ner
CURATED_MODELS = ("dgm_ewt", "chain_crf_ewt", "genia_nested", "genia_hypergraph")
MEAN = {"@layers": "reduce_mean.v1"}


@dataclass(frozen=True)
class Encoder:
    """A transformer encoder: its recipe part (a file of configs/recipe), the
    listener block every model's ``tok2vec`` becomes, the prefix of its
    composed configs' names in CONFIGS/transformer, the pip extra that
    installs it and the Python package that runs it."""

    part: str
    listener: Dict[str, Any] = field(repr=False)
    prefix: str
    extra: str
    package: str


SPACY_TRANSFORMERS = Encoder(
    part="transformer.cfg",
    prefix="",
    extra="transformers",
    package="spacy_transformers",
    listener={
        "@architectures": "spacy-transformers.TransformerListener.v1",
        "grad_factor": 1.0,
        "upstream": TRANSFORMER,
        "pooling": MEAN,
    },
)
CURATED = Encoder(
    part="curated_transformer.cfg",
    prefix="curated_",
    extra="curated-transformers",
    package="spacy_curated_transformers",
    listener={
        "@architectures": "spacy-curated-transformers.LastTransformerLayerListener.v1",
        "width": f"${{components.{TRANSFORMER}.model.hidden_width}}",
        "grad_factor": 1.0,
        "upstream": TRANSFORMER,
        "pooling": MEAN,
    },
)


def _listeners_replaced(section: Any, listener: Dict[str, Any]) -> Any:
    if not isinstance(section, dict):
        return section
    if section.get("@architectures") == TOK2VEC_LISTENER:
        return copy.deepcopy(listener)
    return {key: _listeners_replaced(value, listener) for key, value in section.items()}


def with_transformer(
    config: Config, recipe: Path, name: Optional[Union[str, Path]] = None, encoder: Encoder = SPACY_TRANSFORMERS
) -> Config:
    """``config`` (models listening to a component named 'tok2vec') with that
    component replaced by RECIPE/<encoder.part>'s ``transformer`` in the same
    place of the pipeline (its ``[initialize.components.transformer]`` too,
    where the part has one), every Tok2VecListener by the encoder's listener,
    and the part's learning-rate schedule in the recipe's optimizer, without
    the CNN tok2vec's [pretraining]; ``paths.transformer`` set to ``name`` if
    given (a Hugging Face model name or folder)."""
    config = Config(config)
    pipeline = list(config["nlp"]["pipeline"])
    if TOK2VEC not in pipeline or TOK2VEC not in config["components"]:
        raise ValueError(
            f"the config has no '{TOK2VEC}' component to replace with a transformer (its pipeline: {pipeline})"
        )
    part = Config().from_disk(recipe / encoder.part, interpolate=False)
    components = {
        key: _listeners_replaced(value, encoder.listener)
        for key, value in config["components"].items()
        if key != TOK2VEC
    }
    config["components"] = {TRANSFORMER: part["components"][TRANSFORMER], **components}
    config["nlp"]["pipeline"] = [TRANSFORMER if component == TOK2VEC else component for component in pipeline]
    config["training"]["optimizer"] = {**config["training"]["optimizer"], **part["training"]["optimizer"]}
    loaders = part.get("initialize", {}).get("components", {})
    if loaders:
        config.setdefault("initialize", {}).setdefault("components", {}).update(loaders)
    if config.get("pretraining"):  # the CNN tok2vec's pretraining: nothing to pretrain here
        config["pretraining"] = {}
        config.get("corpora", {}).pop("pretrain", None)
    config["paths"]["transformer"] = str(name) if name is not None else part["paths"]["transformer"]
    if name is None and "data" not in config["paths"]:
        config["paths"]["data"] = "../shared/data"
    return config
