"""``python -m spacy_depner study ...``: the commands of the DGM study in
``project.yml`` (Jie, Muis & Lu 2017, Tables 1-4 and Figure 6, on UD
English-EWT r2.9 + UNER English-EWT).

    train     trains the parser and every NER model, ``--jobs`` at a time
    coverage  Table 1: gold entities each lattice holds, gold and predicted trees
    evaluate  Tables 2-3: P/R/F of every model on dev and test, gold and predicted trees
    speed     Figure 6: seconds per training iteration and words/s of every model
    report    metrics/study/report.md and metrics/study/speed.png from the above

Every NER model is trained with the gold trees of the training set; the
"predicted" rows give it the trees of the parser trained by ``train`` on the
same training set, as the paper does with MaltParser.
"""
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional

import typer

from .cli import app

study = typer.Typer(no_args_is_help=True, help="The DGM study of project.yml")
app.add_typer(study, name="study")

CONLLU = "ud_ewt/r2.9/en_ewt-ud-{split}.conllu"
IOB2 = {"train": "uner_ewt/en_ewt-ud-train.legacy-2022-12.iob2", "dev": "uner_ewt/en_ewt-ud-dev.iob2",
        "test": "uner_ewt/en_ewt-ud-test.iob2"}
SPLITS = ("train", "dev", "test")


class StudyModel(NamedTuple):
    name: str
    config: str
    component: str
    dependency_features: Optional[bool]  # None: the model has no such setting
    lattice: Optional[str]  # its key in the coverage report, None for tag-based models


FAMILIES = [
    ("linear-chain CRF", "chain_crf", "chain_crf_ewt.cfg", "chain_ner", None),
    ("averaged perceptron", "perceptron", "chain_perceptron_ewt.cfg", "chain_ner", None),
    ("semi-Markov CRF (L=8)", "semi_crf", "semi_markov_ewt.cfg", "dgm_ner", "semi_markov_L8"),
    ("DGM-S", "dgm_s", "dgm_s_ewt.cfg", "dgm_ner", "dgm_s"),
    ("DGM", "dgm", "dgm_ewt.cfg", "dgm_ner", "dgm"),
]
TITLES = {key: title for title, key, *_ in FAMILIES}
TITLES["ner"] = "spaCy ner (reference)"
MODELS = [
    StudyModel(key + ("+dep" if dep else ""), config, component, dep, lattice)
    for _, key, config, component, lattice in FAMILIES
    for dep in (False, True)
] + [StudyModel("ner", "ner_ewt.cfg", "ner", None, None)]


def data_file(data: Path, split: str, kind: str) -> Path:
    return data / (CONLLU.format(split=split) if kind == "conllu" else IOB2[split])


def train_command(config: Path, output: Path, data: Path, steps: int, limit: int, overrides: List[str]) -> List[str]:
    return [sys.executable, "-m", "spacy", "train", str(config), "--output", str(output), "--paths.data", str(data),
            "--training.max_steps", str(steps), "--training.eval_frequency", str(max(1, steps // 4)),
            "--corpora.train.limit", str(limit), "--corpora.dev.limit", str(limit), *overrides]


def run_logged(command: List[str], log: Path) -> float:
    """Run a command with one thread, its output to ``log``; its wall time in seconds."""
    log.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    start = time.perf_counter()
    with log.open("w") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed (exit {done.returncode}); see {log}")
    return time.perf_counter() - start


def run_all(runs: Dict[str, List[str]], logs: Path, jobs: int) -> Dict[str, float]:
    """Run the commands ``jobs`` at a time (``run_logged``, logs to LOGS/NAME.log); wall seconds per name."""
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {name: pool.submit(run_logged, command, logs / f"{name}.log") for name, command in runs.items()}
        return {name: round(future.result(), 1) for name, future in futures.items()}


@study.command("train")
def train(
    data: Path = typer.Option(..., help="Data directory (ud_ewt/r2.9/, uner_ewt/)"),
    output: Path = typer.Option(Path("training/study"), help="Where the pipelines go, one folder per model"),
    configs: Path = typer.Option(Path("configs"), help="Folder of the spacy train configs"),
    steps: int = typer.Option(3000, help="Training steps of every NER model"),
    parser_steps: int = typer.Option(3000, help="Training steps of the parser"),
    limit: int = typer.Option(0, help="Train and dev sentences (0: all)"),
    jobs: int = typer.Option(2, help="Trainings run at the same time, each on one thread"),
) -> None:
    """Train the parser and every NER model (gold trees); wall times to OUTPUT/train_seconds.json."""
    runs = {"parser": train_command(configs / "parser_ewt.cfg", output / "parser", data, parser_steps, limit, [])}
    for model in MODELS:
        overrides = []
        if model.dependency_features:
            overrides = [f"--components.{model.component}.model.dependency_features", "true"]
        runs[model.name] = train_command(configs / model.config, output / model.name, data, steps, limit, overrides)
    seconds = run_all(runs, output / "logs", jobs)
    (output / "train_seconds.json").write_text(json.dumps({"steps": steps, "parser_steps": parser_steps, "seconds": seconds}, indent=2))
    typer.echo(json.dumps(seconds, indent=2))


@study.command("coverage")
def coverage(
    data: Path = typer.Option(..., help="Data directory"),
    parser: Path = typer.Option(Path("training/study/parser/model-best"), help="Parser pipeline for the predicted trees"),
    output: Path = typer.Option(Path("metrics/study/coverage.json"), help="JSON file to write"),
    limit: int = typer.Option(0, help="Sentences per split (0: all)"),
) -> None:
    """Coverage and spans per token of each lattice on train/dev/test, gold and predicted trees."""
    from .coverage import lattice_report, with_parsed_trees
    from .evaluate import load_corpus

    report = {}
    for split in SPLITS:
        corpus = load_corpus(data_file(data, split, "conllu"), data_file(data, split, "iob2"), limit)
        report[split] = {"gold": lattice_report(corpus), "predicted": lattice_report(with_parsed_trees(corpus, parser))}
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(report, indent=2))
    typer.echo(json.dumps(report, indent=2))


@study.command("evaluate")
def evaluate(
    data: Path = typer.Option(..., help="Data directory"),
    models: Path = typer.Option(Path("training/study"), help="Folder of the trained pipelines"),
    output: Path = typer.Option(Path("metrics/study/evaluation.json"), help="JSON file to write"),
    limit: int = typer.Option(0, help="Sentences per split (0: all)"),
) -> None:
    """P/R/F of every model on dev and test, with gold and with predicted trees."""
    import spacy

    from .evaluate import attachment_scores, input_docs, load_corpus, parse_corpus, score_pipeline

    pipelines = {model.name: spacy.load(models / model.name / "model-best") for model in MODELS}
    results: Dict = {"parser": {}, "models": {name: {} for name in pipelines}}
    for split in ("dev", "test"):
        corpus = load_corpus(data_file(data, split, "conllu"), data_file(data, split, "iob2"), limit)
        parsed, _ = parse_corpus(models / "parser" / "model-best", corpus)
        results["parser"][split] = attachment_scores(parsed, corpus)
        for name, nlp in pipelines.items():
            for trees, source in (("given", None), ("predicted", parsed)):
                results["models"][name][f"{split}_{trees}"] = score_pipeline(nlp, corpus, input_docs(nlp.vocab, corpus, source))
        typer.echo(f"{split}: parser {results['parser'][split]}")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(results))


@study.command("speed")
def speed(
    data: Path = typer.Option(..., help="Data directory"),
    models: Path = typer.Option(Path("training/study"), help="Folder of the trained pipelines"),
    output: Path = typer.Option(Path("metrics/study/speed.json"), help="JSON file to write"),
    sample: int = typer.Option(2000, help="Training sentences timed per model"),
    batch_words: int = typer.Option(1000, help="Words per training batch"),
) -> None:
    """Seconds per training iteration (one pass over the training set, from
    the time of ``sample`` sentences) and words/s (dev, gold trees) of every
    model, measured one after the other in one process on one thread."""
    import spacy
    from spacy.util import minibatch

    from .evaluate import input_docs, load_corpus
    from .readers.uner import corpus_examples

    train_corpus = load_corpus(data_file(data, "train", "conllu"), data_file(data, "train", "iob2"))
    dev_corpus = load_corpus(data_file(data, "dev", "conllu"), data_file(data, "dev", "iob2"))
    train_words = sum(len(s.words) for s in train_corpus.sentences)
    rows = {}
    for model in MODELS:
        nlp = spacy.load(models / model.name / "model-best")
        examples = corpus_examples(nlp.vocab, train_corpus, "given")[:sample]
        sample_words = sum(len(eg.predicted) for eg in examples)
        batches = list(minibatch(examples, size=max(1, len(examples) * batch_words // max(sample_words, 1))))
        optimizer = nlp.resume_training()
        nlp.update(batches[0], sgd=optimizer)  # warm-up: numba cache, allocations
        start = time.perf_counter()
        for batch in batches:
            nlp.update(batch, sgd=optimizer)
        seconds = (time.perf_counter() - start) * train_words / max(sample_words, 1)
        docs = input_docs(nlp.vocab, dev_corpus)
        list(nlp.pipe([d.copy() for d in docs[:100]]))
        start = time.perf_counter()
        list(nlp.pipe([d.copy() for d in docs], batch_size=256))
        words_per_second = sum(len(d) for d in docs) / (time.perf_counter() - start)
        rows[model.name] = {"seconds_per_iteration": float(f"{seconds:.4g}"), "words_per_second": round(words_per_second)}
        typer.echo(f"{model.name}: {rows[model.name]}")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps({"train_words": train_words, "models": rows}, indent=2))


@study.command("report")
def report(
    metrics: Path = typer.Option(Path("metrics/study"), help="Folder of coverage.json, evaluation.json, speed.json"),
    models: Path = typer.Option(Path("training/study"), help="Folder of the trained pipelines (for train_seconds.json)"),
    bootstrap_samples: int = typer.Option(1000, help="Paired bootstrap resamples"),
) -> None:
    """Write METRICS/report.md and METRICS/speed.png."""
    from .study_report import write_report

    path = write_report(metrics, models, bootstrap_samples)
    typer.echo(path.read_text())
