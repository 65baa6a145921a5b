"""Study configs that read a pretrained pipeline (e.g. en_core_web_sm): its
parser sourced, frozen and annotating, so that every model of the arm trains
and predicts on the trees it will see in use; and optionally its tok2vec,
sourced and fine-tuned, shared by the entity model through its listener.

    with_pretrained_parser   the recipe part configs/recipe/pretrained_parser.cfg, as the own-data
                             configs have it: pipeline = ["parser", ...]; the parser copies the
                             tok2vec it listened to (``replace_listeners``), so it stays what was
                             released while a shared tok2vec is fine-tuned; the pipeline's vocab
    with_pretrained_tok2vec  [components.tok2vec] of configs/recipe/pretrained_tok2vec.cfg: sourced from
                             the pipeline; the width its listeners read is the pipeline's

The data keep their own tokens (the study's readers): the parser parses
them, one sentence per Doc, its sentence start preset.
"""

from pathlib import Path
from typing import Optional, Union

from thinc.api import Config

from .transformer import with_transformer

PARSER = "parser"
PARSER_PART = "pretrained_parser.cfg"  # the recipe parts of the pretrained parser and tok2vec, in configs/recipe
TOK2VEC_PART = "pretrained_tok2vec.cfg"
TOK2VEC = "tok2vec"


def pipeline_config(pretrained: Union[str, Path]) -> Config:
    """The config of the pipeline ``pretrained``: a folder, or the name of an installed package."""
    path = Path(pretrained)
    if not (path / "config.cfg").is_file():
        import spacy.util

        found = (
            sorted(spacy.util.get_package_path(str(pretrained)).glob("*/config.cfg"))
            if spacy.util.is_package(str(pretrained))
            else []
        )
        if not found:
            raise ValueError(
                f"{pretrained}: neither a pipeline folder (with a config.cfg) nor an installed pipeline "
                "package; give e.g. DATA/models/en_core_web_sm-3.8.0, or install the package "
                "(python -m spacy download en_core_web_sm) and give its name"
            )
        path = found[0].parent
    return Config().from_disk(path / "config.cfg", interpolate=False)


def pretrained_width(pretrained: Union[str, Path]) -> int:
    """The output width of the tok2vec of the pipeline ``pretrained``."""
    config = pipeline_config(pretrained)
    try:
        return int(config["components"][TOK2VEC]["model"]["encode"]["width"])
    except KeyError as error:
        raise ValueError(
            f"{pretrained}/config.cfg has no [components.tok2vec.model.encode] width: the pretrained "
            "pipeline needs a CNN tok2vec component named 'tok2vec' (as en_core_web_sm has)"
        ) from error


def with_pretrained_parser(config: Config, recipe: Path, pretrained: Union[str, Path]) -> Config:
    """``config`` merged with the recipe part RECIPE/pretrained_parser.cfg
    (the pretrained pipeline's parser sourced with its own copy of the
    tok2vec it listened to, frozen and annotating; the pipeline's vocab),
    ``paths.pretrained`` set to ``pretrained`` and the parser first in the pipeline."""
    joined = Config(config).merge(Config().from_disk(recipe / PARSER_PART, interpolate=False))
    joined["paths"]["pretrained"] = str(pretrained)
    joined["nlp"]["pipeline"] = [PARSER] + [name for name in config["nlp"]["pipeline"] if name != PARSER]
    return joined


def with_pretrained_tok2vec(config: Config, recipe: Path, pretrained: Union[str, Path]) -> Config:
    """``config`` (whose models listen to a component named 'tok2vec') with
    that component replaced by the recipe part RECIPE/pretrained_tok2vec.cfg's
    (sourced from the pretrained pipeline and trained), its width the pipeline's."""
    config = Config(config)
    if TOK2VEC not in config["components"]:
        raise ValueError(f"the config has no [components.{TOK2VEC}] to replace with the pretrained one")
    part = Config().from_disk(recipe / TOK2VEC_PART, interpolate=False)["components"][TOK2VEC]
    part["model"]["encode"]["width"] = pretrained_width(pretrained)
    config["components"][TOK2VEC] = part
    return config


def pretrained_config(config: Path, pretrained: Union[str, Path], tok2vec: bool) -> Config:
    """The study config ``config`` with the pretrained pipeline's parser
    (and with ``tok2vec`` its tok2vec) and input Docs without trees (the
    corpus's ``paths.dependencies = "predicted"``: the parser gives them)."""
    recipe = config.parent / "recipe"
    joined = with_pretrained_parser(Config().from_disk(config, interpolate=False), recipe, pretrained)
    if tok2vec:
        joined = with_pretrained_tok2vec(joined, recipe, pretrained)
    joined["paths"]["dependencies"] = "predicted"
    return joined


def model_config(
    configs: Path,
    config: str,
    output: Path,
    name: str,
    pretrained: bool,
    pipeline: Optional[str],
    tok2vec: bool = False,
    transformer: Optional[str] = None,
) -> Path:
    """The config a study's model ``name`` trains with: CONFIGS/<config>, or
    for a model of a ``pretrained`` arm that config joined to the pretrained
    ``pipeline`` (``pretrained_config``, its tok2vec too with ``tok2vec``),
    and with a ``transformer`` (a Hugging Face name or folder) on that
    encoder instead of the CNN tok2vec (``transformer.with_transformer``),
    written once to OUTPUT/configs/<name>.cfg."""
    if not pretrained and transformer is None:
        return configs / config
    if pretrained and pipeline is None:
        raise ValueError(
            f"{name} is trained in a pretrained pipeline: give it with --pretrained-pipeline "
            "(a pipeline folder such as DATA/models/en_core_web_sm-3.8.0, or an installed package name)"
        )
    if tok2vec and transformer is not None:
        raise ValueError(
            f"{name} listens to the pretrained pipeline's tok2vec: it cannot be trained on a transformer "
            "(train NAME@pretrained, whose encoder the transformer replaces)"
        )
    joined = (
        pretrained_config(configs / config, pipeline, tok2vec)
        if pretrained
        else Config().from_disk(configs / config, interpolate=False)
    )
    if transformer is not None:
        joined = with_transformer(joined, configs / "recipe", transformer)
    path = output / "configs" / f"{name}.cfg"
    path.parent.mkdir(parents=True, exist_ok=True)
    joined.to_disk(path)
    return path
