"""``python -m experiments bench-apply``: corpus annotation on one process,
on several, and on Ray, timed in one run.

The input is the text of the first ``sentences`` sentences of UD
English-EWT train as JSONL, written ``copies`` times over; the pipeline is
given, or trained here as a user does (``convert ... -c conllu-iob2`` of EWT with
UNER's entities, then ``spacy train configs/own_data/own_data_dgm.cfg`` on
en_core_web_sm for ``steps`` steps). Each round runs every command once, as
a whole process (``python -m spacy_depner apply ... --n-process N`` and
``apply-ray ... --actors N``), the commands interleaved so that all see the
same machine load. The table gives, for each, the median over rounds of the
words/s the command reports (annotation only: from the pipeline loaded, or
the actors ready, to the output written) and of the whole process's wall
time, each with its ratio to one process; and whether every output is
byte-identical to one process's.
"""

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

import typer

from ..kit.data_files import data_file
from ..kit.outputs import write_file
from ..kit.tables import machine, table
from ..publish import speeds

REPO = Path(__file__).resolve().parents[2]
APPLIED = "en_core_web_sm's parser and tok2vec + dgm_ner (configs/own_data/own_data_dgm.cfg)"


def ewt_texts(data: Path, sentences: int) -> List[str]:
    """The ``# text`` of the first ``sentences`` sentences of EWT train."""
    texts = []
    with open(data_file(data, "train", "conllu"), encoding="utf8") as lines:
        for line in lines:
            if line.startswith("# text = "):
                texts.append(line[len("# text = ") :].rstrip("\n"))
                if len(texts) == sentences:
                    break
    return texts


def write_input(path: Path, texts: List[str], copies: int) -> Path:
    with open(path, "w", encoding="utf8") as out:
        for _ in range(copies):
            out.writelines(json.dumps({"text": text}, ensure_ascii=False) + "\n" for text in texts)
    return path


def train_pipeline(data: Path, pretrained: Path, folder: Path, steps: int) -> Path:
    """dgm_ner on en_core_web_sm's parser and tok2vec, trained on EWT + UNER
    with the user's config: ``folder/training/model-best``."""
    python = [sys.executable, "-m"]
    for split in ("train", "dev"):
        conllu, iob2 = data_file(data, split, "conllu"), data_file(data, split, "iob2")
        command = ["spacy_depner", "convert", str(conllu), str(folder / f"{split}.spacy"), "-c", "conllu-iob2"]
        subprocess.run(python + command + ["--iob2", str(iob2)], check=True, stdout=subprocess.DEVNULL)
    config = REPO / "configs" / "own_data" / "own_data_dgm.cfg"
    command = ["spacy", "train", str(config), "--output", str(folder / "training")]
    paths = ["--paths.train", str(folder / "train.spacy"), "--paths.dev", str(folder / "dev.spacy")]
    settings = ["--paths.pretrained", str(pretrained), "--training.max_steps", str(steps)]
    subprocess.run(python + command + paths + settings, check=True)
    return folder / "training" / "model-best"


def timed_run(command: List[str]) -> Dict[str, float]:
    """Whole-process wall seconds and the words/s the command printed."""
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    summary = json.loads(done.stdout)
    return {"wall": wall, "words_per_second": summary["words_per_second"], "words": summary["words"]}


def runs(pipeline: Path, corpus: Path, folder: Path, processes: List[int], ray_actors: int) -> Dict[str, List[str]]:
    """The commands timed, by row name; each writes ``folder/NAME.jsonl``."""
    apply = [sys.executable, "-m", "spacy_depner", "apply", str(pipeline), str(corpus)]
    commands = {
        f"apply --n-process {n}": apply + [str(folder / f"apply_{n}.jsonl"), "--n-process", str(n)] for n in processes
    }
    if ray_actors:
        ray = [sys.executable, "-m", "spacy_depner", "apply-ray", str(pipeline), str(corpus)]
        commands[f"apply-ray --actors {ray_actors}"] = ray + [
            str(folder / f"ray_{ray_actors}.jsonl"),
            "--actors",
            str(ray_actors),
        ]
    return {name: command + ["--no-progress", "--force"] for name, command in commands.items()}


def bench_apply(
    output: Path = typer.Option(..., help="Markdown table to write"),
    folder: Path = typer.Option(..., help="Work folder for the inputs, outputs (and the trained pipeline)"),
    pipeline: Optional[Path] = typer.Option(None, help="A trained pipeline (default: train one, see --steps)"),
    data: Path = typer.Option(Path("../shared/data"), help="Data directory (ud_ewt/r2.9, uner_ewt)"),
    pretrained: Path = typer.Option(
        Path("../shared/data/models/en_core_web_sm-3.8.0"), help="en_core_web_sm, for training the pipeline"
    ),
    steps: int = typer.Option(3000, help="Training steps of the pipeline trained here"),
    sentences: int = typer.Option(5000, help="EWT train sentences in the input"),
    copies: int = typer.Option(4, help="Times the sentences are written over"),
    processes: str = typer.Option("1,2", help="--n-process values, comma-separated (the first is the baseline)"),
    ray_actors: int = typer.Option(2, help="Actors of apply-ray (0: no Ray row)"),
    rounds: int = typer.Option(3, help="Rounds: every command once per round (medians reported)"),
) -> None:
    """Words/s of `apply` on 1 and 2 processes and of `apply-ray`, with ratios to one process, in one run; the
    rows for the words/s table of the speed page beside OUTPUT (OUTPUT.speed_rows.json; publish-results puts them
    on the page)."""
    folder.mkdir(parents=True, exist_ok=True)
    described = f"{APPLIED}, trained {steps:,} steps" if pipeline is None else str(pipeline)
    if pipeline is None:
        pipeline = train_pipeline(data, pretrained, folder, steps)
    corpus = write_input(folder / "input.jsonl", ewt_texts(data, sentences), copies)
    commands = runs(pipeline, corpus, folder, [int(n) for n in processes.split(",")], ray_actors)
    results: Dict[str, List[Dict[str, float]]] = {name: [] for name in commands}
    for _ in range(rounds):
        for name, command in commands.items():
            results[name].append(timed_run(command))
    outputs = {name: Path(command[6]) for name, command in commands.items()}
    base = next(iter(commands))
    rows, baseline = [], {}
    for name, timings in results.items():
        speed = statistics.median(t["words_per_second"] for t in timings)
        wall = statistics.median(t["wall"] for t in timings)
        baseline = baseline or {"speed": speed, "wall": wall}
        same = outputs[name].read_bytes() == outputs[base].read_bytes()
        rows.append(
            [
                name,
                f"{speed:,.0f}",
                f"{speed / baseline['speed']:.2f}",
                f"{wall:.1f}",
                f"{baseline['wall'] / wall:.2f}",
                "yes" if same else "NO",
            ]
        )
    words = results[base][0]["words"]
    text = (
        f"# Corpus annotation: processes and Ray\n\n{machine()}; {pipeline}; input: the first {sentences} sentences "
        f"of EWT train x {copies} ({words:,} words, JSONL); median of {rounds} rounds, the commands interleaved; "
        "words/s as each command reports it (annotation, from the pipeline loaded or the actors ready); "
        "wall: the whole process (start-up and loading included)\n\n"
        + table(
            ["command", "words/s", "ratio to one process", "wall s", "speed-up of the wall", "output = one process's"],
            rows,
        )
        + "\n"
    )
    typer.echo(write_file(output, text))
    corpus = f"the first {sentences:,} sentences of EWT train x {copies} ({words:,} words, JSONL)"
    commands_rows = [{"command": row[0], "words/s": row[1]} for row in rows]
    typer.echo(speeds.write_rows(output, speeds.APPLY, speeds.apply_rows(commands_rows, described, corpus, machine())))
