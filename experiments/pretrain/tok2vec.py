"""``python -m experiments pretrain``: ``spacy pretrain`` of the shared
tok2vec on the text of the UD English-EWT training split (never dev or
test), for ``study train --pretrained OUTPUT/pretrain.json``.

    OUTPUT/pretrain.json     always: {"epochs", "config", "sentences", "words", "seconds", "weights"};
                             "weights" is the file name of the weights beside it, or null (0 epochs)
    OUTPUT/train_text.jsonl  the training split's sentences (``spacy_depner pretrain-text``)
    OUTPUT/epochs/           spacy pretrain's folder: model<e>.bin after each epoch e, log.jsonl
    OUTPUT/tok2vec.bin       the weights after the last epoch (epochs/model<N-1>.bin)
    OUTPUT/logs/pretrain.log spacy pretrain's output

spaCy project commands cannot branch, so project.yml runs this step and
``study train --pretrained`` always, and the number of epochs decides: with
0, nothing is pretrained, pretrain.json says so ("weights": null) and an
earlier run's text and weights are removed, so every model trains from its
seed's random weights, as without this step.
"""

import sys
import time
from pathlib import Path
from typing import List, Optional

import srsly
import typer

from spacy_depner.cli.pretrain_text import TextFormat, sentence_words, write_pretrain_text
from spacy_depner.util.atomic_files import atomic_folder_contents, remove_path

from ..kit.data_files import data_file
from ..kit.options import DATA
from ..kit.outputs import write_json
from ..kit.runs import run_logged

MANIFEST, WEIGHTS, TEXT, EPOCHS = "pretrain.json", "tok2vec.bin", "train_text.jsonl", "epochs"


def pretrain_command(config: Path, output: Path, text: Path, epochs: int) -> List[str]:
    """``spacy pretrain CONFIG OUTPUT`` on the JSON lines TEXT for ``epochs`` epochs
    (the config's [pretraining] and [corpora.pretrain] say what and how)."""
    return [
        sys.executable,
        "-m",
        "spacy",
        "pretrain",
        str(config),
        str(output),
        "--paths.raw_text",
        str(text),
        "--pretraining.max_epochs",
        str(epochs),
    ]


def pretrained_weights(manifest: Path) -> Optional[Path]:
    """The weights file that the pretrain.json ``manifest`` names (beside
    it), or None if it pretrained 0 epochs; a missing or malformed manifest,
    or missing weights, is a ValueError saying how to make them."""
    remake = f"run `python -m experiments pretrain --output {manifest.parent}` first"
    if not manifest.is_file():
        raise ValueError(f"--pretrained {manifest}: no such file; {remake}")
    try:
        record = srsly.read_json(manifest)
    except ValueError as error:
        raise ValueError(f"--pretrained {manifest}: not JSON ({error}); {remake}") from None
    if not isinstance(record, dict) or "weights" not in record:
        raise ValueError(
            f'--pretrained {manifest}: not the {MANIFEST} of `python -m experiments pretrain` (no "weights"); {remake}'
        )
    if record["weights"] is None:
        return None
    weights = manifest.parent / str(record["weights"])
    if not weights.is_file():
        raise ValueError(f"--pretrained {manifest} names the weights {weights}, which are missing; {remake}")
    return weights


def tok2vec_weights(init_tok2vec: Optional[Path], pretrained: Optional[Path]) -> Optional[Path]:
    """The weights to load into the models' tok2vec: the file ``init_tok2vec``,
    those that the pretrain.json ``pretrained`` names, or None."""
    if init_tok2vec is not None and pretrained is not None:
        raise ValueError("--init-tok2vec and --pretrained both name the tok2vec weights: give one of them")
    if pretrained is not None:
        return pretrained_weights(pretrained)
    if init_tok2vec is not None and not init_tok2vec.is_file():
        raise ValueError(
            f"--init-tok2vec {init_tok2vec}: no such file; give the weights that `spacy pretrain` "
            "writes (OUTPUT/model<epoch>.bin), e.g. with `python -m experiments pretrain`"
        )
    return init_tok2vec


def pretrain(
    data: Path = DATA,
    config: Path = typer.Option(
        ...,
        help="spacy config whose tok2vec is pretrained (its pretraining section says how), e.g. configs/dgm_ewt.cfg",
    ),
    epochs: int = typer.Option(..., min=0, help="Epochs over the training text (0: no pretraining)"),
    output: Path = typer.Option(..., help="Folder of pretrain.json, train_text.jsonl, tok2vec.bin"),
) -> None:
    """Pretrain the tok2vec of CONFIG on the text of the EWT training split
    for EPOCHS epochs (spacy pretrain, one thread) and write OUTPUT/tok2vec.bin
    and OUTPUT/pretrain.json; with 0 epochs only pretrain.json, saying none."""
    if not config.is_file():
        raise ValueError(f"--config {config}: no such file; give a spacy config with a [pretraining] section")
    if epochs == 0:
        for name in (TEXT, EPOCHS, WEIGHTS):
            remove_path(output / name)
        typer.echo(write_json(output / MANIFEST, {"epochs": 0, "config": str(config), "weights": None}))
        return
    train = data_file(data, "train", "conllu")
    start = time.perf_counter()
    with atomic_folder_contents(output) as folder:
        counts = write_pretrain_text(sentence_words(train, TextFormat.conllu), folder / TEXT, str(train))
        run_logged(pretrain_command(config, folder / EPOCHS, folder / TEXT, epochs), output / "logs" / "pretrain.log")
        last = folder / EPOCHS / f"model{epochs - 1}.bin"
        if not last.is_file():
            raise RuntimeError(f"spacy pretrain wrote no {last.name}; see {output / 'logs' / 'pretrain.log'}")
        (folder / WEIGHTS).write_bytes(last.read_bytes())
        record = {
            "epochs": epochs,
            "config": str(config),
            "train": str(train),
            "sentences": counts["sentences"],
            "words": counts["words"],
            "seconds": round(time.perf_counter() - start, 1),
            "weights": WEIGHTS,
        }
        text = write_json(folder / MANIFEST, record)
    typer.echo(text)
