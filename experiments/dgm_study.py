"""``python -m experiments study ...``: the commands of the DGM study in
``project.yml`` (Jie, Muis & Lu 2017, Tables 1-4 and Figure 6, on UD
English-EWT r2.9 + UNER English-EWT).

    train     trains the parser and every NER model, ``--jobs`` at a time
    coverage  Table 1: gold entities each lattice holds, gold and predicted trees
    evaluate  Tables 2-3: P/R/F of every model on dev and test, gold and predicted trees
    speed     Figure 6: seconds per training iteration and words/s of every model
    report    METRICS/report.md and METRICS/speed.png from the above

Every NER model is trained with the gold trees of the training set; the
"predicted" rows give it the trees of the parser trained by ``train`` on the
same training set, as the paper does with MaltParser.
"""
import json
import time
from pathlib import Path
from typing import Dict

import typer
from tqdm import tqdm

from spacy_depner.evaluation.progress import progress

from .dgm_models import MODELS, SPLITS, data_file
from .dgm_report import write_report
from .options import CONFIGS, DATA, JOBS, JSON_OUTPUT, PIPELINES, TRAINED
from .outputs import write_json
from .runs import run_all, train_command
from .timing import pipeline_seconds

study = typer.Typer(no_args_is_help=True, help="The DGM study of project.yml")


@study.command("train")
def train(
    data: Path = DATA,
    output: Path = TRAINED,
    configs: Path = CONFIGS,
    steps: int = typer.Option(3000, help="Training steps of every NER model"),
    parser_steps: int = typer.Option(3000, help="Training steps of the parser"),
    limit: int = typer.Option(0, help="Train and dev sentences (0: all)"),
    jobs: int = JOBS,
) -> None:
    """Train the parser and every NER model (gold trees); wall times to OUTPUT/train_seconds.json."""
    runs = {"parser": train_command(configs / "parser_ewt.cfg", output / "parser", data, parser_steps, limit, [])}
    for model in MODELS:
        overrides = []
        if model.dependency_features:
            overrides = [f"--components.{model.component}.model.dependency_features", "true"]
        runs[model.name] = train_command(configs / model.config, output / model.name, data, steps, limit, overrides)
    seconds = run_all(runs, output, jobs, steps=steps, parser_steps=parser_steps)
    typer.echo(json.dumps(seconds, indent=2))


@study.command("coverage")
def coverage(
    data: Path = DATA,
    parser: Path = typer.Option(..., help="Parser pipeline for the predicted trees"),
    output: Path = JSON_OUTPUT,
    limit: int = typer.Option(0, help="Sentences per split (0: all)"),
) -> None:
    """Coverage and spans per token of each lattice on train/dev/test, gold and predicted trees."""
    from spacy_depner.evaluation.corpus_scores import load_corpus
    from spacy_depner.evaluation.coverage import lattice_report, with_parsed_trees

    report = {}
    for split in SPLITS:
        corpus = load_corpus(data_file(data, split, "conllu"), data_file(data, split, "iob2"), limit)
        report[split] = {"gold": lattice_report(corpus), "predicted": lattice_report(with_parsed_trees(corpus, parser))}
    typer.echo(write_json(output, report))


@study.command("evaluate")
def evaluate(
    data: Path = DATA,
    models: Path = PIPELINES,
    output: Path = JSON_OUTPUT,
    limit: int = typer.Option(0, help="Sentences per split (0: all)"),
) -> None:
    """P/R/F (fractions) of every model on dev and test, with gold and with predicted trees."""
    import spacy

    from spacy_depner.evaluation.corpus_scores import attachment_scores, input_docs, load_corpus, parse_corpus, score_pipeline

    pipelines = {model.name: spacy.load(models / model.name / "model-best") for model in MODELS}
    results: Dict = {"parser": {}, "models": {name: {} for name in pipelines}}
    bar = progress(None, 4 * len(pipelines), "models evaluated (2 splits x 2 kinds of trees)", unit="run")
    for split in ("dev", "test"):
        corpus = load_corpus(data_file(data, split, "conllu"), data_file(data, split, "iob2"), limit)
        parsed, _ = parse_corpus(models / "parser" / "model-best", corpus)
        results["parser"][split] = attachment_scores(parsed, corpus)
        for name, nlp in pipelines.items():
            for trees, source in (("given", None), ("predicted", parsed)):
                results["models"][name][f"{split}_{trees}"] = score_pipeline(nlp, corpus, input_docs(nlp.vocab, corpus, source))
                bar.update(1)
        bar.write(f"{split}: parser {results['parser'][split]}")
    bar.close()
    write_json(output, results, indent=None)


@study.command("speed")
def speed(
    data: Path = DATA,
    models: Path = PIPELINES,
    output: Path = JSON_OUTPUT,
    sample: int = typer.Option(2000, help="Training sentences timed per model"),
    batch_words: int = typer.Option(1000, help="Words per training batch"),
) -> None:
    """Seconds per training iteration (one pass over the training set, from
    the time of ``sample`` sentences) and words/s (dev, gold trees) of every
    model, measured one after the other in one process on one thread."""
    import spacy
    from spacy.util import minibatch

    from spacy_depner.evaluation.corpus_scores import first_sentences, input_docs, load_corpus
    from spacy_depner.readers.uner import corpus_examples

    train_corpus = load_corpus(data_file(data, "train", "conllu"), data_file(data, "train", "iob2"))
    dev_corpus = load_corpus(data_file(data, "dev", "conllu"), data_file(data, "dev", "iob2"))
    train_words = sum(len(s.words) for s in train_corpus.sentences)
    sample_corpus = first_sentences(train_corpus, sample)
    rows = {}
    for model in progress(MODELS, len(MODELS), "models timed", unit="model"):
        nlp = spacy.load(models / model.name / "model-best")
        examples = corpus_examples(nlp.vocab, sample_corpus, "given")
        sample_words = sum(len(eg.predicted) for eg in examples)
        batches = list(minibatch(examples, size=max(1, len(examples) * batch_words // max(sample_words, 1))))
        optimizer = nlp.resume_training()
        nlp.update(batches[0], sgd=optimizer)  # warm-up: numba cache, allocations
        start = time.perf_counter()
        for batch in batches:
            nlp.update(batch, sgd=optimizer)
        seconds = (time.perf_counter() - start) * train_words / max(sample_words, 1)
        docs = input_docs(nlp.vocab, dev_corpus)
        pipe_seconds, _ = pipeline_seconds({model.name: nlp.pipe}, docs, repeats=1, batch_size=256, warm_up=100)
        words_per_second = sum(len(d) for d in docs) / pipe_seconds[model.name]
        rows[model.name] = {"seconds_per_iteration": float(f"{seconds:.4g}"), "words_per_second": round(words_per_second)}
        tqdm.write(f"{model.name}: {rows[model.name]}")
    write_json(output, {"train_words": train_words, "models": rows})


@study.command("report")
def report(
    metrics: Path = typer.Option(..., help="Folder of coverage.json, evaluation.json, speed.json"),
    models: Path = PIPELINES,
    bootstrap_samples: int = typer.Option(1000, help="Paired bootstrap resamples"),
) -> None:
    """Write METRICS/report.md and METRICS/speed.png."""
    path = write_report(metrics, models, bootstrap_samples)
    typer.echo(path.read_text())
