"""``python -m experiments two-stage ...``: the two-stage model of Krishnan &
Manning (2006) on UD English-EWT + UNER, one Example per document.

    crossval  trains the first stage on all of train and, for k-fold
              cross-validation, on every fold's complement; writes the
              first-stage entities of train (each document from the model
              that did not see it), dev and test as JSON lines
    train     trains the second stage on those entities (non-local features)
    evaluate  first stage alone vs the assembled two-stage pipeline on test:
              P/R/F, approximate randomization (Krishnan & Manning's test),
              inference time of the pair / the first stage
    report    METRICS/report.md
"""
import json
from pathlib import Path
from typing import Dict, List, Sequence

import typer

from spacy_depner.atomic_files import atomic_path
from spacy_depner.evaluation.corpus_scores import entity_counts
from spacy_depner.evaluation.metrics import prf_from_counts
from spacy_depner.evaluation.significance import approximate_randomization
from spacy_depner.pipeline.corpus_counts import counting_pipe

from .dgm_models import data_file
from .options import CORPUS, DATA, JOBS, JSON_OUTPUT, SPLIT
from .outputs import write_file, write_json, write_jsonl
from .runs import run_all, run_logged, train_command
from .tables import percent, table
from .timing import pipeline_seconds

two_stage = typer.Typer(no_args_is_help=True, help="The two-stage non-local consistency model of project.yml")

SECOND_STAGE = "second_stage"
CORPORA = ("ewt", "gum")  # UNER English-EWT entities; UD English-GUM named mentions


def check_corpus(corpus: str) -> None:
    if corpus not in CORPORA:
        raise typer.BadParameter(f"corpus must be one of {', '.join(CORPORA)}, not {corpus!r}")


def first_stage_file(output: Path, split: str) -> Path:
    return output / f"first_stage_{split}.jsonl"


def trained(output: Path, name: str) -> bool:
    """Whether ``spacy train`` finished the run NAME of ``run_all`` in OUTPUT:
    it writes OUTPUT/NAME/model-last at every evaluation, and its closing
    line "Saved pipeline to output directory" to the run's log only at the end."""
    log = output / "logs" / f"{name}.log"  # run_all's log of NAME
    return (output / name / "model-last").is_dir() and log.is_file() and \
        "Saved pipeline to output directory" in log.read_text(encoding="utf8", errors="replace")


def split_documents(vocab, data: Path, split: str, limit: int = 0, corpus: str = "ewt"):
    """Examples of the split's documents, gold trees in the input: UNER
    English-EWT entities, or UD English-GUM's named mentions."""
    from spacy_depner.readers.documents import document_examples, gum_named_examples

    if corpus == "gum":
        return gum_named_examples(vocab, data / "ud_gum" / f"en_gum-ud-{split}.conllu", limit=limit)
    return document_examples(vocab, data_file(data, split, "conllu"), data_file(data, split, "iob2"), limit=limit)


def predict_records(model: Path, examples, ids: Sequence[int]) -> List[Dict]:
    """First-stage records of the documents ``ids`` of ``examples``, by the pipeline at ``model``."""
    import spacy

    from spacy_depner.readers.documents import first_stage_records

    docs = list(spacy.load(model).pipe([examples[i].predicted.copy() for i in ids], batch_size=64))
    return first_stage_records(docs, ids)


@two_stage.command("crossval")
def crossval(
    data: Path = DATA,
    corpus: str = CORPUS,
    output: Path = typer.Option(..., help="Where the first-stage pipelines and entities go"),
    config: Path = typer.Option(..., help="First-stage config with folds (e.g. configs/two_stage_first_CORPUS.cfg)"),
    folds: int = typer.Option(10, help="Cross-validation folds of the training documents (the paper: 10)"),
    steps: int = typer.Option(3000, help="Training steps of every first-stage model"),
    limit: int = typer.Option(0, help="Train and dev documents (0: all)"),
    jobs: int = JOBS,
    resume: bool = typer.Option(False, help="Keep the first-stage models whose training finished in OUTPUT "
                                "(model-last, and the closing line of spacy train in OUTPUT/logs/NAME.log)"),
) -> None:
    """First stage on all of train, and on each fold's complement; its entities
    on train (cross-validated), dev and test to OUTPUT/first_stage_*.jsonl."""
    from spacy_depner.readers.documents import fold_indices

    if folds < 2:
        raise typer.BadParameter("cross-validation needs at least 2 folds")
    check_corpus(corpus)
    runs = {"first": train_command(config, output / "first", data, steps, limit, [])}
    for f in range(folds):
        runs[f"fold{f}"] = train_command(config, output / f"fold{f}", data, steps, limit,
                                         ["--paths.folds", str(folds), "--paths.exclude_fold", str(f)])
    seconds_file, names = output / "crossval_seconds.json", list(runs)
    # a resumed run keeps the wall times of the kept models (None: trained by an interrupted run)
    previous = json.loads(seconds_file.read_text())["seconds"] if resume and seconds_file.is_file() else {}
    if resume:
        runs = {name: command for name, command in runs.items() if not trained(output, name)}
    seconds = run_all(runs, output, jobs, seconds_file.name, folds=folds, steps=steps)
    if len(runs) < len(names):
        seconds = {name: seconds[name] if name in runs else previous.get(name) for name in names}
        write_json(seconds_file, {"folds": folds, "steps": steps, "seconds": seconds})
    import spacy

    vocab = spacy.blank("en").vocab
    train_examples = split_documents(vocab, data, "train", limit, corpus)
    records = []
    for f in range(folds):
        records += predict_records(output / f"fold{f}" / "model-best", train_examples,
                                   fold_indices(len(train_examples), folds, only_fold=f))
    write_jsonl(first_stage_file(output, "train"), sorted(records, key=lambda r: r["document"]))
    for split in ("dev", "test"):
        examples = split_documents(vocab, data, split, limit if split == "dev" else 0, corpus)
        write_jsonl(first_stage_file(output, split), predict_records(output / "first" / "model-best", examples, range(len(examples))))
    typer.echo(json.dumps(seconds, indent=2))


@two_stage.command("train")
def train(
    data: Path = DATA,
    corpus: str = CORPUS,
    output: Path = typer.Option(..., help="Folder of crossval's output; the second stage goes to OUTPUT/second"),
    config: Path = typer.Option(..., help="Second-stage config (e.g. configs/two_stage_second_CORPUS.cfg)"),
    steps: int = typer.Option(3000, help="Training steps"),
    limit: int = typer.Option(0, help="Train and dev documents (0: all)"),
) -> None:
    """Train the second stage on the cross-validated first-stage entities of train (dev: the full first stage's)."""
    check_corpus(corpus)
    command = train_command(config, output / "second", data, steps, limit,
                            ["--paths.first_stage_train", str(first_stage_file(output, "train")),
                             "--paths.first_stage_dev", str(first_stage_file(output, "dev"))])
    typer.echo(f"training the second stage: log {output / 'logs' / 'second.log'}", err=True)
    seconds = run_logged(command, output / "logs" / "second.log")
    write_json(output / "second_seconds.json", {"steps": steps, "seconds": round(seconds, 1)}, indent=None)
    typer.echo(f"second stage trained in {seconds:.0f} s")


def assemble(first: Path, second: Path):
    """The two-stage pipeline: the first stage's pipeline, ``first_stage_spans``,
    then the second stage's entity component (named ``second_stage``)."""
    import spacy

    nlp = spacy.load(first)
    second_nlp = spacy.load(second)
    nlp.add_pipe("first_stage_spans")
    nlp.add_pipe(second_nlp.pipe_names[-1], name=SECOND_STAGE, source=second_nlp)
    return nlp


@two_stage.command("evaluate")
def evaluate(
    data: Path = DATA,
    corpus: str = CORPUS,
    output: Path = typer.Option(..., help="Folder of the first and second stages"),
    metrics: Path = JSON_OUTPUT,
    split: str = SPLIT,
    iterations: int = typer.Option(1000, help="Approximate randomization iterations (the paper: 1000)"),
    count_input: bool = typer.Option(False, help="Also count the first stage's entities on SPLIT in the corpus features"),
) -> None:
    """First stage vs two-stage on SPLIT (whole documents, gold trees): P/R/F (fractions),
    approximate randomization p-value, inference time ratio; the assembled
    pipeline is saved to OUTPUT/pipeline. Corpus features count the training
    corpus's first-stage entities, and with --count-input those on SPLIT too."""
    import spacy

    check_corpus(corpus)
    first = spacy.load(output / "first" / "model-best")
    pair = assemble(output / "first" / "model-best", output / "second" / "model-best")
    with atomic_path(output / "pipeline") as temporary:
        pair.to_disk(temporary)
    examples = split_documents(first.vocab, data, split, corpus=corpus)
    pipes = {"first": first.pipe, "pair": counting_pipe(pair, SECOND_STAGE) if count_input else pair.pipe}
    seconds, annotated = pipeline_seconds(pipes, [eg.predicted for eg in examples], repeats=3, batch_size=64, warm_up=5)
    references = [eg.reference for eg in examples]
    a, b = entity_counts(annotated["pair"], references), entity_counts(annotated["first"], references)
    test = approximate_randomization(a, b, n_iterations=iterations)
    words = sum(len(eg.predicted) for eg in examples)
    result = {
        "corpus": corpus, "split": split, "documents": len(examples), "words": words,
        "corpus_counts": "training + " + split if count_input else "training",
        "first_stage": {**prf_from_counts(b), "seconds": round(seconds["first"], 3), "words_per_second": round(words / seconds["first"])},
        "two_stage": {**prf_from_counts(a), "seconds": round(seconds["pair"], 3), "words_per_second": round(words / seconds["pair"])},
        "time_ratio": round(seconds["pair"] / seconds["first"], 3),
        "approximate_randomization": test,
    }
    typer.echo(write_json(metrics, result))


@two_stage.command("report")
def report(
    metrics: Path = typer.Option(..., help="Folder of evaluation*.json (from evaluate --metrics)"),
) -> None:
    """Write METRICS/report.md: one row per evaluation file (split, corpus counts)."""
    rows = []
    for path in sorted(metrics.glob("evaluation*.json")):
        result = json.loads(path.read_text())
        test = result["approximate_randomization"]
        first, pair = result["first_stage"], result["two_stage"]
        rows.append([result.get("corpus", "ewt"), result["split"], result["documents"], result.get("corpus_counts", "training"),
                     *(percent(stage[k]) for stage in (first, pair) for k in ("p", "r", "f")),
                     round(100.0 * test["delta"], 2), round(test["p_value"], 4), first["words_per_second"],
                     pair["words_per_second"], result["time_ratio"]])
    text = "\n\n".join([
        "# Two-stage non-local consistency (Krishnan & Manning 2006)",
        "Corpora: ewt, UNER English-EWT entities; gum, UD English-GUM's named mentions (head with a proper noun, "
        "outermost of nested ones; CC BY-NC-SA 4.0, non-commercial). "
        "Whole documents, gold trees. First stage: the linear-chain CRF; second stage: the same with the "
        "non-local majority features. p: approximate randomization of the F1 difference (two-sided). "
        "time ratio: inference time of the pair / the first stage alone.",
        table(["corpus", "split", "documents", "corpus counts", "first P", "first R", "first F", "two-stage P", "two-stage R",
               "two-stage F", "ΔF", "p", "first words/s", "two-stage words/s", "time ratio"], rows),
    ]) + "\n"
    typer.echo(write_file(metrics / "report.md", text))
