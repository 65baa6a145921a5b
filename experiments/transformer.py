"""Configs on a pretrained transformer encoder (spacy-transformers) in place
of the recipe's CNN tok2vec: the recipe part configs/recipe/transformer.cfg
(the ``transformer`` component, its model name or path ``paths.transformer``,
the fine-tuning optimizer), and every ``spacy.Tok2VecListener.v1`` of the
models rewritten to a ``spacy-transformers.TransformerListener.v1`` that
listens to it (each token the mean of its word pieces).

    with_transformer   a config with its tok2vec replaced by the transformer
    TRANSFORMER_MODELS the model parts composed again on the transformer, as
                       CONFIGS/transformer/<name>.cfg (``python -m experiments configs``)
"""
from pathlib import Path
from typing import Any, Dict, Optional, Union

from thinc.api import Config

TRANSFORMER = "transformer"
TRANSFORMER_PART = "transformer.cfg"  # in configs/recipe
TOK2VEC = "tok2vec"
TOK2VEC_LISTENER = "spacy.Tok2VecListener.v1"
ENCODERS = ("cnn", TRANSFORMER)
# the model parts that have a composed transformer twin in CONFIGS/transformer/
TRANSFORMER_MODELS = ("dgm_ewt", "semi_markov_ewt", "chain_crf_ewt", "ner_ewt", "genia_nested", "genia_hypergraph",
                      "genia_spancat", "own_data_dgm", "own_data_nested")


def transformer_listener() -> Dict[str, Any]:
    """The listener block every model's ``tok2vec`` becomes: the mean of each
    token's word-piece vectors, the gradient passed back whole."""
    return {"@architectures": "spacy-transformers.TransformerListener.v1", "grad_factor": 1.0,
            "upstream": TRANSFORMER, "pooling": {"@layers": "reduce_mean.v1"}}


def _listeners_replaced(section: Any) -> Any:
    if not isinstance(section, dict):
        return section
    if section.get("@architectures") == TOK2VEC_LISTENER:
        return transformer_listener()
    return {key: _listeners_replaced(value) for key, value in section.items()}


def with_transformer(config: Config, recipe: Path, name: Optional[Union[str, Path]] = None) -> Config:
    """``config`` (models listening to a component named 'tok2vec') with that
    component replaced by RECIPE/transformer.cfg's ``transformer`` in the same
    place of the pipeline, every Tok2VecListener by a TransformerListener, and
    the part's learning-rate schedule in the recipe's optimizer, without the CNN tok2vec's [pretraining]; ``paths.transformer`` set to ``name`` if given (a
    Hugging Face model name or folder)."""
    config = Config(config)
    pipeline = list(config["nlp"]["pipeline"])
    if TOK2VEC not in pipeline or TOK2VEC not in config["components"]:
        raise ValueError(f"the config has no '{TOK2VEC}' component to replace with a transformer "
                         f"(its pipeline: {pipeline})")
    part = Config().from_disk(recipe / TRANSFORMER_PART, interpolate=False)
    components = {key: _listeners_replaced(value) for key, value in config["components"].items() if key != TOK2VEC}
    config["components"] = {TRANSFORMER: part["components"][TRANSFORMER], **components}
    config["nlp"]["pipeline"] = [TRANSFORMER if component == TOK2VEC else component for component in pipeline]
    config["training"]["optimizer"] = {**config["training"]["optimizer"], **part["training"]["optimizer"]}
    if config.get("pretraining"):  # the CNN tok2vec's pretraining: nothing to pretrain here
        config["pretraining"] = {}
        config.get("corpora", {}).pop("pretrain", None)
    config["paths"]["transformer"] = str(name) if name is not None else part["paths"]["transformer"]
    if name is None and "data" not in config["paths"]:
        config["paths"]["data"] = "../shared/data"
    return config
