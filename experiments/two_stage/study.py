"""``python -m experiments two-stage ...``: the two-stage model of Krishnan &
Manning (2006) on UD English-EWT + UNER, one Example per document.

    crossval  trains the first stage on all of train and, for k-fold
              cross-validation, on every fold's complement; writes the
              first-stage entities of train (each document from the model
              that did not see it, as ``python -m spacy_depner
              first-stage-folds``), dev and test as JSON lines
    train     trains the second stage on those entities (non-local features)
    evaluate  first stage alone vs the assembled two-stage pipeline on test:
              P/R/F, approximate randomization (Krishnan & Manning's test),
              inference time of the pair / the first stage
    report    METRICS/report.md

Every step runs once per training seed (``--seeds``): the first stage, its
folds and their entities, and the second stage of seed s go to
OUTPUT/seed_<s>/ (first, fold<k>, first_stage_*.jsonl, second, pipeline);
the steps after ``crossval`` take ``--seeds`` or find the seeds in OUTPUT.
"""

import json
from pathlib import Path
from typing import Dict, List, Optional

import typer

from spacy_depner.evaluation.corpus_scores import entity_counts
from spacy_depner.evaluation.metrics import prf_from_counts
from spacy_depner.evaluation.significance import approximate_randomization
from spacy_depner.pipeline.corpus_counts import counting_pipe
from spacy_depner.util.atomic_files import atomic_path
from spacy_depner.workflows.first_stage_folds import cross_validated_records, fold_arguments, predict_records

from ..kit.data_files import data_file
from ..kit.options import CORPUS, DATA, JOBS, JSON_OUTPUT, RESUME, SEEDS, SPLIT, TRAIN_SEEDS
from ..kit.outputs import write_json, write_jsonl, write_linked_report
from ..kit.runs import run_seeds, train_command
from ..kit.seed_tests import ALPHA, over_seeds, seed_count
from ..kit.seeds import chosen_seeds, parse_seeds, seed_folder, seed_keys
from ..kit.tables import mean_sd, p_value, seeds_caption, table
from ..kit.timing import pipeline_seconds
from .consistency import gain_reading, report_section

two_stage = typer.Typer(no_args_is_help=True, help="The two-stage non-local consistency model of project.yml")

SECOND_STAGE = "second_stage"
STAGE = typer.Option(
    "second", help="Folder of the second stage in each seed's folder (e.g. second_soft for a soft-votes second stage)"
)
CORPORA = ("ewt", "gum", "genia")  # UNER English-EWT entities; UD English-GUM named mentions; GENIA abstracts
CORPUS_NOTES = {
    "ewt": "ewt, UNER English-EWT entities (gold trees)",
    "gum": "gum, UD English-GUM's named mentions (head with a proper noun, outermost of nested ones; gold trees; "
    "CC BY-NC-SA 4.0, non-commercial)",
    "genia": "genia, GENIA 3.02's abstracts (the outermost mentions of each sentence, its five types; no trees)",
}


def check_corpus(corpus: str) -> None:
    if corpus not in CORPORA:
        raise typer.BadParameter(f"corpus must be one of {', '.join(CORPORA)}, not {corpus!r}")


def first_stage_file(folder: Path, split: str) -> Path:
    """The first-stage entities of SPLIT in a seed's folder."""
    return folder / f"first_stage_{split}.jsonl"


def split_documents(vocab, data: Path, split: str, limit: int = 0, corpus: str = "ewt"):
    """Examples of the split's documents, gold trees in the input: UNER
    English-EWT entities, or UD English-GUM's named mentions; or GENIA's
    abstracts, their outermost mentions (no trees)."""
    from spacy_depner.readers.documents import document_examples, genia_abstract_examples, gum_named_examples

    if corpus == "genia":
        return genia_abstract_examples(vocab, data / "genia" / f"{split}.jsonl", limit=limit)
    if corpus == "gum":
        return gum_named_examples(vocab, data / "ud_gum" / f"en_gum-ud-{split}.conllu", limit=limit)
    return document_examples(vocab, data_file(data, split, "conllu"), data_file(data, split, "iob2"), limit=limit)


@two_stage.command("crossval")
def crossval(
    data: Path = DATA,
    corpus: str = CORPUS,
    output: Path = typer.Option(..., help="Where the first-stage pipelines and entities go, OUTPUT/seed_<s>/"),
    config: Path = typer.Option(..., help="First-stage config with folds (e.g. configs/two_stage_first_CORPUS.cfg)"),
    folds: int = typer.Option(10, help="Cross-validation folds of the training documents (the paper: 10)"),
    steps: int = typer.Option(3000, help="Training steps of every first-stage model"),
    limit: int = typer.Option(0, help="Train and dev documents (0: all)"),
    jobs: int = JOBS,
    seeds: str = TRAIN_SEEDS,
    resume: bool = RESUME,
) -> None:
    """For each seed: the first stage on all of train, and on each fold's
    complement; its entities on train (cross-validated), dev and test to
    OUTPUT/seed_<s>/first_stage_*.jsonl. Wall times per seed to OUTPUT/crossval_seconds.json."""
    if folds < 2:
        raise typer.BadParameter("cross-validation needs at least 2 folds")
    check_corpus(corpus)
    chosen = parse_seeds(seeds)
    runs: Dict[int, Dict[str, List[str]]] = {}
    for seed in chosen:
        folder = seed_folder(output, seed)
        runs[seed] = {"first": train_command(config, folder / "first", data, steps, limit, [], seed)}
        for f in range(folds):
            overrides = fold_arguments(folds, f)
            runs[seed][f"fold{f}"] = train_command(config, folder / f"fold{f}", data, steps, limit, overrides, seed)
    seconds = run_seeds(runs, output, jobs, "crossval_seconds.json", resume, folds=folds, steps=steps)
    import spacy

    vocab = spacy.blank("en").vocab
    train_examples = split_documents(vocab, data, "train", limit, corpus)
    other_examples = {
        split: split_documents(vocab, data, split, limit if split == "dev" else 0, corpus) for split in ("dev", "test")
    }
    for seed in chosen:
        folder = seed_folder(output, seed)
        fold_models = [folder / f"fold{f}" / "model-best" for f in range(folds)]
        write_jsonl(first_stage_file(folder, "train"), cross_validated_records(fold_models, train_examples))
        for split, examples in other_examples.items():
            write_jsonl(
                first_stage_file(folder, split),
                predict_records(folder / "first" / "model-best", examples, range(len(examples))),
            )
    typer.echo(json.dumps(seconds, indent=2))


@two_stage.command("train")
def train(
    data: Path = DATA,
    corpus: str = CORPUS,
    output: Path = typer.Option(
        ..., help="Folder of crossval's output; each seed's second stage goes to OUTPUT/seed_<s>/second"
    ),
    config: Path = typer.Option(..., help="Second-stage config (e.g. configs/two_stage_second_CORPUS.cfg)"),
    steps: int = typer.Option(3000, help="Training steps"),
    limit: int = typer.Option(0, help="Train and dev documents (0: all)"),
    jobs: int = JOBS,
    seeds: Optional[str] = SEEDS,
    resume: bool = RESUME,
    stage: str = STAGE,
) -> None:
    """Train each seed's second stage (with that seed) on the cross-validated
    first-stage entities of train of the same seed (dev: its full first
    stage's) to OUTPUT/seed_<s>/STAGE; wall times per seed to OUTPUT/STAGE_seconds.json."""
    check_corpus(corpus)
    runs = {}
    for seed in chosen_seeds(output, seeds):
        folder = seed_folder(output, seed)
        for split in ("train", "dev"):
            if not first_stage_file(folder, split).is_file():
                raise ValueError(
                    f"{first_stage_file(folder, split)} does not exist: run `two-stage crossval --seeds {seed}` "
                    "with this --output first"
                )
        runs[seed] = {
            stage: train_command(
                config,
                folder / stage,
                data,
                steps,
                limit,
                [
                    "--paths.first_stage_train",
                    str(first_stage_file(folder, "train")),
                    "--paths.first_stage_dev",
                    str(first_stage_file(folder, "dev")),
                ],
                seed,
            )
        }
    seconds = run_seeds(runs, output, jobs, f"{stage}_seconds.json", resume, steps=steps)
    typer.echo(f"second stages trained: {json.dumps(seconds)} (seconds per seed)")


def assemble(first: Path, second: Path):
    """The two-stage pipeline: the first stage's pipeline, ``first_stage_spans``
    (with the first stage's soft votes when the second stage counts them),
    then the second stage's entity component (named ``second_stage``)."""
    import spacy

    from spacy_depner.ml.nonlocal_features import nonlocal_layers

    nlp = spacy.load(first)
    second_nlp = spacy.load(second)
    second_pipe = second_nlp.get_pipe(second_nlp.pipe_names[-1])
    soft = any(layer.attrs.get("votes_key") for layer in nonlocal_layers(second_pipe.model))
    nlp.add_pipe("first_stage_spans", config={"votes_from": nlp.pipe_names[-1] if soft else None})
    nlp.add_pipe(second_nlp.pipe_names[-1], name=SECOND_STAGE, source=second_nlp)
    return nlp


@two_stage.command("evaluate")
def evaluate(
    data: Path = DATA,
    corpus: str = CORPUS,
    output: Path = typer.Option(..., help="Folder of the first and second stages, OUTPUT/seed_<s>/"),
    metrics: Path = JSON_OUTPUT,
    split: str = SPLIT,
    iterations: int = typer.Option(1000, help="Approximate randomization iterations (the paper: 1000)"),
    count_input: bool = typer.Option(
        False, help="Also count the first stage's entities on SPLIT in the corpus features"
    ),
    seeds: Optional[str] = SEEDS,
    stage: str = STAGE,
) -> None:
    """First stage vs two-stage (second stage OUTPUT/seed_<s>/STAGE) of each
    seed on SPLIT (whole documents): P/R/F (fractions) and the approximate
    randomization test of the pair of the same seed, by seed; inference time
    ratio of the first seed's pipelines only; whether the second stage counts
    hard or soft votes. Each assembled pipeline is saved to
    OUTPUT/seed_<s>/pipeline (STAGE other than second: pipeline_STAGE).
    Corpus features count the training corpus's first-stage entities, and
    with --count-input those on SPLIT too."""
    import spacy

    check_corpus(corpus)
    chosen = chosen_seeds(output, seeds)
    result: Dict = {
        "corpus": corpus,
        "split": split,
        "corpus_counts": "training + " + split if count_input else "training",
        "votes": "hard",
        "seeds": chosen,
        "first_stage": {},
        "two_stage": {},
        "approximate_randomization": {},
    }
    for seed in chosen:
        folder, key = seed_folder(output, seed), str(seed)
        first = spacy.load(folder / "first" / "model-best")
        pair = assemble(folder / "first" / "model-best", folder / stage / "model-best")
        if pair.get_pipe("first_stage_spans").votes_from is not None:
            result["votes"] = "soft"
        with atomic_path(folder / ("pipeline" if stage == "second" else f"pipeline_{stage}")) as temporary:
            pair.to_disk(temporary)
        examples = split_documents(first.vocab, data, split, corpus=corpus)
        pipes = {"first": first.pipe, "pair": counting_pipe(pair, SECOND_STAGE) if count_input else pair.pipe}
        timed = seed == chosen[0]  # the other seeds' pipelines annotate once, untimed
        seconds, annotated = pipeline_seconds(
            pipes,
            [eg.predicted for eg in examples],
            repeats=3 if timed else 1,
            batch_size=64,
            warm_up=5 if timed else 0,
        )
        references = [eg.reference for eg in examples]
        a, b = entity_counts(annotated["pair"], references), entity_counts(annotated["first"], references)
        result["first_stage"][key], result["two_stage"][key] = prf_from_counts(b), prf_from_counts(a)
        result["approximate_randomization"][key] = approximate_randomization(a, b, n_iterations=iterations)
        if timed:
            words = sum(len(eg.predicted) for eg in examples)
            result.update(documents=len(examples), words=words)
            result["speed"] = {
                "seed": seed,
                "time_ratio": round(seconds["pair"] / seconds["first"], 3),
                **{
                    stage: {"seconds": round(seconds[pipe], 3), "words_per_second": round(words / seconds[pipe])}
                    for stage, pipe in (("first_stage", "first"), ("two_stage", "pair"))
                },
            }
    typer.echo(write_json(metrics, result))


def as_documents(docs) -> list:
    """``(token texts, entities)`` of Docs, for ``consistency``."""
    return [([t.text for t in doc], [(e.start, e.end, e.label_) for e in doc.ents]) for doc in docs]


def first_stage_documents(path: Path, gold: list) -> list:
    """The first stage's ``(token texts, entities)`` of each gold document, from a ``first_stage_*.jsonl``."""
    from spacy_depner.readers.documents import read_first_stage

    records = read_first_stage(path)
    missing = [i for i in range(len(gold)) if i not in records]
    if missing:
        raise ValueError(f"{path} has no record of document {missing[0]}: it was written for another --limit or corpus")
    return [(tokens, [tuple(e) for e in records[i][1]["entities"]]) for i, (tokens, _) in enumerate(gold)]


@two_stage.command("consistency")
def consistency(
    data: Path = DATA,
    corpus: str = CORPUS,
    output: Optional[Path] = typer.Option(
        None, help="Folder of crossval's output (OUTPUT/seed_<s>/first_stage_*.jsonl); without it, repetition only"
    ),
    metrics: Path = JSON_OUTPUT,
    split: str = SPLIT,
    seeds: Optional[str] = SEEDS,
) -> None:
    """How often SPLIT repeats its entities, and what of the first stage's error
    document consistency could fix, by seed (experiments/two_stage/consistency.py)."""
    import spacy

    from .consistency import measures

    check_corpus(corpus)
    vocab = spacy.blank("en").vocab
    gold = {
        name: as_documents(eg.reference for eg in split_documents(vocab, data, part, corpus=corpus))
        for name, part in (("train", "train"), ("split", split))
    }
    labels = sorted({span[2] for _, spans in gold["train"] for span in spans})
    first = {}
    for seed in chosen_seeds(output, seeds) if output else []:
        folder = seed_folder(output, seed)
        first[seed] = {
            name: first_stage_documents(first_stage_file(folder, part), gold[name])
            for name, part in (("train", "train"), ("split", split))
        }
    run = output / "crossval_seconds.json" if output else None
    folds = json.loads(run.read_text()).get("folds") if run is not None and run.is_file() else None
    result = {"corpus": corpus, "split": split, "folds": folds, **measures(gold, first, labels)}
    typer.echo(write_json(metrics, result))


@two_stage.command("report")
def report(
    metrics: Path = typer.Option(..., help="Folder of evaluation*.json (from evaluate --metrics)"),
) -> None:
    """Write METRICS/report.md: one row per evaluation file (split, corpus
    counts), P/R/F mean ± sd over its seeds, the approximate randomization
    test per seed summarised by the largest p (``seed_tests``), speed of the first seed."""
    paths = sorted(metrics.glob("evaluation*.json"))
    consistency_results = [json.loads(path.read_text()) for path in sorted(metrics.glob("consistency*.json"))]
    if not paths:
        raise ValueError(
            f"{metrics} holds no evaluation*.json: run `two-stage evaluate --metrics {metrics}/evaluation.json` first"
        )
    rows, seed_lists, timed, corpora, deltas = [], [], set(), [], []
    for path in paths:
        result = json.loads(path.read_text())
        corpora += [result["corpus"]] if result["corpus"] not in corpora else []
        seeds, speed = seed_keys(result["seeds"]), result["speed"]
        seed_lists.append(result["seeds"])
        timed.add(speed["seed"])
        summary = over_seeds({s: result["approximate_randomization"][s] for s in seeds})
        first, pair = ([result[stage][s] for s in seeds] for stage in ("first_stage", "two_stage"))
        variant = f"{result.get('votes', 'hard')} votes" + (
            "" if result["corpus_counts"] == "training" else f", corpus counts {result['corpus_counts']}"
        )
        deltas.append((result["corpus"], result["split"], variant, 100 * sum(summary["deltas"]) / len(seeds)))
        rows.append(
            [
                result["corpus"],
                result["split"],
                result["documents"],
                result["corpus_counts"],
                result.get("votes", "hard"),
                ", ".join(seeds),
                *(mean_sd([scores[k] for scores in stage], 100) for stage in (first, pair) for k in ("p", "r", "f")),
                mean_sd(summary["deltas"], 100),
                seed_count(summary["a_better"], len(seeds)),
                p_value(summary["max_p"]),
                seed_count(summary["significant"], len(seeds)),
                speed["first_stage"]["words_per_second"],
                speed["two_stage"]["words_per_second"],
                speed["time_ratio"],
            ]
        )
    same_seeds = all(seeds == seed_lists[0] for seeds in seed_lists)
    caption = (
        seeds_caption(seed_lists[0])
        if same_seeds
        else "Mean ± sample standard deviation (ddof=1) over the training seeds of each row (column seeds)."
    )
    text = (
        "\n\n".join(
            [
                "# Two-stage non-local consistency (Krishnan & Manning 2006)"
                + ("" if corpora != ["genia"] else ": GENIA abstracts"),
                f"Corpora: {'; '.join(CORPUS_NOTES[c] for c in sorted(corpora, key=CORPORA.index))}. "
                "Whole documents. First stage: the linear-chain CRF; second stage: the same with the "
                "non-local majority features; both, and the first stage's cross-validation, trained once per seed. "
                "votes: hard, the first stage's entities each count once; soft, every mention the first stage "
                "considers (marginal at least 0.01) counts its marginal probability. "
                f"{caption} "
                "p: approximate randomization of the F1 difference (two-sided), run per seed on that seed's first "
                f"and two-stage pipelines; the table gives the largest p over the seeds (p < {ALPHA} there: every seed's "
                f"pair differs at the {ALPHA:.0%} level), the seeds with p < {ALPHA}, and the seeds in which the two-stage "
                "model scores higher. words/s and time ratio (inference time of the pair / the first stage alone): "
                f"the pipelines of seed {', '.join(map(str, sorted(timed)))} only.",
                table(
                    [
                        "corpus",
                        "split",
                        "documents",
                        "corpus counts",
                        "votes",
                        "seeds",
                        "first P",
                        "first R",
                        "first F",
                        "two-stage P",
                        "two-stage R",
                        "two-stage F",
                        "ΔF",
                        "two-stage higher (seeds)",
                        "largest p",
                        f"seeds with p < {ALPHA}",
                        "first words/s",
                        "two-stage words/s",
                        "time ratio",
                    ],
                    rows,
                ),
                *gain_reading(deltas, consistency_results),
                *([report_section(consistency_results)] if consistency_results else []),
            ]
        )
        + "\n"
    )
    typer.echo(write_linked_report(metrics / "report.md", text))
