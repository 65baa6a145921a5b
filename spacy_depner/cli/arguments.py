"""The arguments every command spells the same way: PIPELINE (a saved
directory or an installed package), DATA (a file whose suffix gives its
format), --iob2 (the UNER entities of a .conllu DATA), --parser,
--spans-key, the nested corpora told apart by suffix, the flags the
annotating commands share with ``spacy apply`` (--force/-F, --code/-c), and
the tuning commands' --force (save what a search found even when it scores
lower than the input) and their report (``print_tuned``)."""

import json
from pathlib import Path
from typing import Dict, Optional, Tuple

import typer

from ..evaluation.data_files import data_kind
from ..evaluation.pipeline_output import choice_line

PIPELINE_HELP = "Trained pipeline: a directory (e.g. spacy train's model-best) or an installed package"
DATA_HELP = (
    ".conllu (UD CoNLL-U: with --iob2, its UNER entities; alone, UD English-GUM's nested mentions), "
    ".jsonl (GENIA JSON lines) or .spacy (DocBin: doc.ents, or the span group --spans-key)"
)
IOB2_HELP = "UNER IOB2 file with the entities of a .conllu DATA (joined on # sent_id)"
SPANS_KEY_HELP = "DocBin data: span group of the gold spans (default: doc.ents, else the one span group)"
PARSER_HELP = "Parser pipeline (directory or package) whose trees replace the data's gold trees"
# spacy apply's --force/-F; --overwrite, the earlier name, still works.
FORCE_FLAGS = ("--force", "-F", "--overwrite")
RESTART_HELP = (
    "Replace an existing OUTPUT, and start again instead of resuming or refusing an OUTPUT.partial "
    "(--overwrite: the same)"
)
TUNED_FORCE_HELP = "Save the value found even when the input's own settings score higher on DATA"
CODE_HELP = "Python file with additional code (registered functions) to import before loading PIPELINE"
TEXT_KEY_HELP = "Key of the text in each line of a .jsonl INPUT (the other keys are kept as metadata)"
GPU_ID_HELP = "GPU to run the pipeline on, or -1 for the CPU"
NESTED_HELP = ".jsonl (GENIA JSON lines) or .conllu (UD English-GUM, its nested mentions in Entity=)"


def nested_data(data: Path) -> Tuple[Optional[Path], Optional[Path]]:
    """``(jsonl, gum)``: a GENIA ``.jsonl`` or a GUM ``.conllu`` file, told by
    its suffix as every data file is (``data_kind``); another kind is a
    ValueError naming the two it can be."""
    kind = data_kind(data)
    if kind not in ("genia", "gum"):
        raise ValueError(f"DATA {data} is a {kind} file: give {NESTED_HELP}")
    return (Path(data), None) if kind == "genia" else (None, Path(data))


def import_code(path: Optional[Path]) -> None:
    """Import the Python file ``path`` (``--code``), as spaCy's commands do;
    None: nothing. A missing file is a ValueError naming it."""
    from spacy.util import import_file

    if path is None:
        return
    if not Path(path).is_file():
        raise ValueError(f"--code {path}: no such Python file (check the path)")
    import_file("python_code", path)


def use_gpu(gpu_id: int, n_process: int = 1) -> None:
    """Run on GPU ``gpu_id`` (-1: the CPU), as spaCy's commands' ``--gpu-id``;
    a GPU with several worker processes is a ValueError saying how to run."""
    from spacy.cli._util import setup_gpu

    if gpu_id >= 0 and n_process > 1:
        raise ValueError(
            f"--gpu-id {gpu_id} with --n-process {n_process}: worker processes cannot share a GPU; "
            "run one process on the GPU (--n-process 1), or several on the CPU (--gpu-id -1)"
        )
    setup_gpu(gpu_id, silent=True)


def spacy_options(output_help: str, gold_preproc_help: str, retokenize: bool = True) -> dict:
    """The typer options that spaCy's evaluate and find-threshold share, by
    parameter name: -o/--output (a JSON file), -c/--code, -g/--gpu-id and
    -G/--gold-preproc (the data's own tokens, the default; with
    ``retokenize`` also its opposite, --retokenize)."""
    return {
        "output": typer.Option(None, "--output", "-o", help=output_help),
        "code": typer.Option(None, "--code", "-c", help=CODE_HELP),
        "gpu_id": typer.Option(-1, "--gpu-id", "-g", help=GPU_ID_HELP),
        "gold_preproc": typer.Option(
            True, "--gold-preproc/--retokenize" if retokenize else "--gold-preproc", "-G", help=gold_preproc_help
        ),
    }


def print_tuned(
    result: Dict[str, object], setting: str, data: Path, compared: Optional[Dict[str, object]] = None
) -> None:
    """Print a tuning command's ``result`` as JSON, after a line on stderr
    when it kept the input's own settings (``chosen`` "before"), with the
    figures ``kept_or_tuned`` compared (``compared``, by default the result's
    own ``before_*`` and ``tuned_*``)."""
    if result["chosen"] == "before":
        typer.echo(choice_line(result if compared is None else compared, setting, data.name), err=True)
    typer.echo(json.dumps(result, indent=2))
