"""``python -m experiments configs``: the comparison configs, each composed
from the one shared recipe and its model's own part.

    configs/recipe/training.cfg   optimizer, averaging, dropout, batcher, steps: every model
    configs/recipe/tok2vec.cfg    the shared encoder (every model but the two-stage second stage)
    configs/recipe/<corpus>.cfg   the corpus: paths and readers (ewt, genia, gum)
    configs/models/<name>.cfg     the model: its pipeline, its component, its score weights

A model part names its recipe parts on a line ``# recipe: training tok2vec ewt``;
``configs/<name>.cfg`` is the merge of those parts (in that order) and then the
model part, so it runs as is with ``spacy train configs/<name>.cfg``; the
user's own-data configs (parts ``own_data_*``) go to ``configs/own_data/``,
apart from the studies'. ``configs/transformer/<name>.cfg`` (own data:
``configs/own_data/transformer/``) is the same on the transformer encoder of
``recipe/transformer.cfg`` (the models of ``transformer.TRANSFORMER_MODELS``), and
``configs/transformer/curated_<name>.cfg`` on the curated transformer of
``recipe/curated_transformer.cfg`` (``transformer.CURATED_MODELS``). Edit the
parts and run this command; ``--check`` fails when a composed config is stale.
"""

import re
from pathlib import Path
from typing import List, Optional, Tuple

import typer
from thinc.api import Config

from ..kit.options import CONFIGS
from .transformer import (
    CURATED,
    CURATED_MODELS,
    SPACY_TRANSFORMERS,
    TRANSFORMER,
    TRANSFORMER_MODELS,
    Encoder,
    with_transformer,
)

RECIPE_LINE = "# recipe:"
OWN_DATA = "own_data"  # the user's configs (models own_data_*): configs/own_data/, apart from the studies' configs
TRANSFORMER_HEADER = (
    "# This config: the above with a transformer encoder, fine-tuned, in place of the tok2vec "
    '(pip install "spacy-depner[{extra}]"; configs/[own_data/]transformer/{prefix}<name>.cfg, paths.transformer: '
    "a Hugging Face name or folder)."
)
TORCH_HEADER = (
    '# Needs torch, from the project extra (pip install "spacy-depner[project]"): its encoder is a torch layer '
    "({layers}); without torch, spacy train, spacy debug config and spacy init fill-config end in "
    "ModuleNotFoundError: No module named 'torch'."
)
TORCH_LAYER = re.compile(r'^@architectures = "(spacy\.Torch[^"]*)"', re.MULTILINE)
GENERATED = "# Composed by `python -m experiments configs` from {parts}: edit those, not this file."
# the last header line of a config for a user's own data, in place of GENERATED (configs/README.md tells how they
# are made)
OWN_DATA_FOOTER = (
    "# Copy this file and change what your data needs; any setting can also be given on the command line "
    "(--paths.train, --training.max_steps, ...)."
)


def model_parts(configs: Path) -> List[Path]:
    """The model parts under CONFIGS/models, sorted by name."""
    return sorted((configs / "models").glob("*.cfg"))


def composed_path(configs: Path, name: str, encoder: Optional[Encoder] = None) -> Path:
    """Where the config composed from the model part NAME lies: CONFIGS/<name>.cfg,
    or CONFIGS/own_data/<name>.cfg for the user's own-data configs; with an
    ``encoder``, in the folder's transformer/ as <encoder.prefix><name>.cfg."""
    folder = configs / OWN_DATA if name.startswith(f"{OWN_DATA}_") else configs
    return folder / f"{name}.cfg" if encoder is None else folder / TRANSFORMER / f"{encoder.prefix}{name}.cfg"


def composed_paths(configs: Path) -> List[Path]:
    """Every composed config (and hand-written one) beside the parts: CONFIGS/*.cfg and CONFIGS/own_data/*.cfg."""
    return sorted(configs.glob("*.cfg")) + sorted((configs / OWN_DATA).glob("*.cfg"))


def composed(part: Path, recipe: Path) -> Tuple[List[str], List[str], Config]:
    """The model part ``part``'s leading comment lines, the recipe parts
    named on its ``# recipe:`` line (files of the folder ``recipe``), and
    those parts merged in order with the model part merged last (thinc's
    ``Config.merge``: a section whose registered function differs is taken
    whole from the model part)."""
    lines = part.read_text(encoding="utf8").splitlines()
    recipe_lines = [line for line in lines if line.startswith(RECIPE_LINE)]
    if len(recipe_lines) != 1:
        raise ValueError(
            f"{part}: needs one line '{RECIPE_LINE} PART ...' naming files of {recipe}, found {len(recipe_lines)}"
        )
    names = recipe_lines[0][len(RECIPE_LINE) :].split()
    missing = [name for name in names if not (recipe / f"{name}.cfg").is_file()]
    if missing:
        raise ValueError(
            f"{part}: recipe parts {missing} are not in {recipe} (it has "
            f"{sorted(p.stem for p in recipe.glob('*.cfg'))})"
        )
    config = Config()
    for name in names:
        config = config.merge(Config().from_disk(recipe / f"{name}.cfg", interpolate=False))
    config = config.merge(Config().from_disk(part, interpolate=False))
    header = [
        line
        for line in lines[: next((i for i, line in enumerate(lines) if not line.startswith("#")), len(lines))]
        if not line.startswith(RECIPE_LINE)
    ]
    return header, names, config


def compose(part: Path, recipe: Path, encoder: Optional[Encoder] = None) -> str:
    """The text of the config of the model part ``part``: its leading
    comment, the extra it needs when a layer is torch's (spaCy's
    ``spacy.Torch*`` architectures), a line naming its parts (for a user's
    own data: a line telling the user how to adapt it), then the
    ``composed`` config; with an
    ``encoder``, on the transformer of its part RECIPE/<encoder.part>
    (``transformer.with_transformer``) instead of the CNN tok2vec."""
    header, names, config = composed(part, recipe)
    if encoder is not None:
        config = with_transformer(config, recipe, encoder=encoder)
        names = names + [Path(encoder.part).stem]
        header = header + [TRANSFORMER_HEADER.format(extra=encoder.extra, prefix=encoder.prefix)]
    torch_layers = sorted(set(TORCH_LAYER.findall(config.to_str())))
    if torch_layers and encoder is None:  # an encoder's extra brings torch, as its header says
        header = header + [TORCH_HEADER.format(layers=", ".join(torch_layers))]
    sources = " + ".join([f"recipe/{name}.cfg" for name in names] + [f"models/{part.name}"])
    footer = OWN_DATA_FOOTER if part.stem.startswith(f"{OWN_DATA}_") else GENERATED.format(parts=sources)
    return "\n".join(header + [footer, config.to_str(), ""])


def stale_configs(configs: Path, write: bool) -> List[Path]:
    """The composed configs CONFIGS/<name>.cfg (own data: CONFIGS/own_data/),
    and the transformer twins transformer/<name>.cfg of TRANSFORMER_MODELS and
    transformer/curated_<name>.cfg of CURATED_MODELS beside them, that differ
    from their parts (with ``write``, rewritten)."""
    stale = []
    targets = [(part, composed_path(configs, part.stem), None) for part in model_parts(configs)]
    targets += [
        (configs / "models" / f"{name}.cfg", composed_path(configs, name, encoder), encoder)
        for encoder, names in ((SPACY_TRANSFORMERS, TRANSFORMER_MODELS), (CURATED, CURATED_MODELS))
        for name in names
    ]
    for part, target, encoder in targets:
        text = compose(part, configs / "recipe", encoder)
        if not target.is_file() or target.read_text(encoding="utf8") != text:
            stale.append(target)
            if write:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf8")
    return stale


def configs_command(
    configs: Path = CONFIGS,
    check: bool = typer.Option(False, "--check", help="Only report stale configs (exit 1 if any)"),
) -> None:
    """Compose CONFIGS/<name>.cfg from CONFIGS/recipe/*.cfg and CONFIGS/models/<name>.cfg."""
    stale = stale_configs(configs, write=not check)
    for path in stale:
        typer.echo(f"{'stale' if check else 'wrote'} {path}")
    if check and stale:
        raise typer.Exit(1)
