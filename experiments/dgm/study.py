"""``python -m experiments study ...``: the commands of the DGM study in
``project.yml`` (Jie, Muis & Lu 2017, Tables 1-4 and Figure 6, on UD
English-EWT r2.9 + UNER English-EWT).

    train     trains the parser and every NER model (or those of ``--models``) once per seed (``--seeds``),
              ``--jobs`` at a time, to OUTPUT/seed_<s>/<model>; with ``--jackknife``
              also each tree-reading model on the jackknifed trees, OUTPUT/seed_<s>/<model>@jackknife;
              with ``--init-tok2vec`` or ``--pretrained`` (``python -m experiments pretrain``) every
              NER model starts from pretrained tok2vec weights (the parser does not)
    coverage  Table 1: gold entities each lattice holds, gold trees and each seed's parser's trees
    evaluate  Tables 2-3: P/R/F of every model (and twin) of every seed on dev and test, gold and predicted trees
    speed     Figure 6: seconds per training iteration and words/s of every model (the first seed's;
              not the twins: the same models, trained on other trees)
    report    METRICS/report.md and METRICS/speed.png from the above

Every NER model is trained with the gold trees of the training set; the
"predicted" rows give the model of seed s the trees of the parser of seed s
(trained by ``train`` on the same training set, as the paper does with
MaltParser). With ``train --jackknife``, the models that read trees in
training (``models``) are trained a second time on the training split's
jackknifed trees (``python -m experiments jackknife-trees``: each sentence
parsed by a parser that did not see it), so that they train on trees like
those they are tested on. The steps after ``train`` take ``--seeds`` or find
the seeds in the models folder, and the twins in the seeds' folders.
"""

import json
import time
from pathlib import Path
from typing import Annotated, Dict, List, Optional

import typer
from tqdm import tqdm

from spacy_depner.util.progress import progress

from ..configs.pretrained import model_config
from ..kit.data_files import data_file
from ..kit.options import (
    CONFIGS,
    DATA,
    INIT_TOK2VEC,
    JOBS,
    JSON_OUTPUT,
    PIPELINES,
    PRETRAINED,
    PRETRAINED_PIPELINE,
    RESUME,
    SEEDS,
    TRAIN_SEEDS,
    TRAINED,
    TRANSFORMER,
)
from ..kit.outputs import write_json
from ..kit.runs import run_seeds, train_command
from ..kit.seeds import chosen_seeds, parse_seeds, seed_folder, trained_names
from ..kit.timing import pipeline_seconds
from ..pretrain.tok2vec import tok2vec_weights
from .models import BY_NAME, JACKKNIFE, MODELS, SPLITS, TREE_READERS, StudyModel, model_names, study_models, twin_names
from .pretrained_ner import ONTONOTES_TO_UNER, mapped_ner_scores
from .report import write_report

study = typer.Typer(no_args_is_help=True, help="The DGM study of project.yml")


def training_runs(
    chosen: List[StudyModel],
    seed: int,
    data: Path,
    output: Path,
    configs: Path,
    steps: int,
    parser_steps: int,
    limit: int,
    jackknife: Optional[Path],
    init_tok2vec: Optional[Path],
    pipeline: Optional[str] = None,
    transformer: Optional[str] = None,
) -> Dict[str, List[str]]:
    """The ``spacy train`` command of the parser and of each model of
    ``chosen`` for seed ``seed`` (to OUTPUT/seed_<s>/<name>), by name; the
    models' tok2vec from the weights ``init_tok2vec`` if given (every study
    model has a tok2vec component), the parser's never, nor a tok2vec
    sourced from the pretrained pipeline ``pipeline``; with a ``transformer``,
    every NER model on it (``pretrained.model_config``, no tok2vec weights), the parser on its CNN."""
    folder = seed_folder(output, seed)
    pretrained = [] if init_tok2vec is None else ["--paths.init_tok2vec", str(init_tok2vec)]
    runs = {"parser": train_command(configs / "parser_ewt.cfg", folder / "parser", data, parser_steps, limit, [], seed)}
    for model in chosen:
        config = model_config(
            configs,
            model.config,
            output,
            model.name,
            bool(model.pretrained),
            pipeline,
            tok2vec=model.pretrained == "tok2vec",
            transformer=transformer,
        )
        weights = [] if model.pretrained == "tok2vec" or transformer else pretrained
        runs[model.name] = train_command(
            config, folder / model.name, data, steps, limit, model.overrides(jackknife) + weights, seed
        )
    return runs


@study.command("train")
def train(
    data: Path = DATA,
    output: Path = TRAINED,
    configs: Path = CONFIGS,
    steps: int = typer.Option(3000, help="Training steps of every NER model"),
    parser_steps: int = typer.Option(3000, help="Training steps of the parser"),
    limit: int = typer.Option(0, help="Train and dev sentences (0: all)"),
    jobs: int = JOBS,
    seeds: str = TRAIN_SEEDS,
    jackknife: Optional[Path] = typer.Option(
        None,
        help="The training split with jackknifed trees (OUTPUT/train.jackknife.conllu of `python -m experiments "
        f"jackknife-trees`): also train the tree-reading models on it, to OUTPUT/seed_<s>/<model>{JACKKNIFE}",
    ),
    jackknife_models: str = typer.Option(
        "all",
        help=f"With --jackknife: the models trained on it too, e.g. dgm+dep,chain_crf+dep "
        f"(all: every tree-reading model, {','.join(TREE_READERS)})",
    ),
    models: str = typer.Option(
        "all",
        "--models",
        help=f"The models trained on the gold trees (the parser always is), e.g. ner,chain_crf,dgm+dep "
        f"(all: {','.join(m.name for m in MODELS)})",
    ),
    init_tok2vec: Annotated[Optional[Path], INIT_TOK2VEC] = None,
    pretrained: Annotated[Optional[Path], PRETRAINED] = None,
    pretrained_pipeline: Annotated[Optional[str], PRETRAINED_PIPELINE] = None,
    transformer: Annotated[Optional[str], TRANSFORMER] = None,
    resume: bool = RESUME,
) -> None:
    """Train the parser and every NER model (gold trees) once per seed, to
    OUTPUT/seed_<s>/<model>, and with --jackknife the chosen tree-reading
    models on the jackknifed trees too, to OUTPUT/seed_<s>/<model>@jackknife;
    wall times per seed to OUTPUT/train_seconds.json. With pretrained tok2vec
    weights, every NER model's tok2vec starts from them (the same for every
    seed; the other layers start from the seed's random weights)."""
    if jackknife is not None and not jackknife.is_file():
        raise typer.BadParameter(
            f"--jackknife {jackknife}: no such file; write it with `python -m experiments "
            "jackknife-trees --output FOLDER` (FOLDER/train.jackknife.conllu)"
        )
    if jackknife is None and jackknife_models.strip() != "all":
        raise typer.BadParameter(
            f"--jackknife-models {jackknife_models} chooses models to train on jackknifed trees: "
            "give those trees with --jackknife FILE too"
        )
    names = model_names(models)
    twins = twin_names(jackknife_models) if jackknife is not None else ()
    if jackknife_models.strip() == "all":  # every tree reader among the chosen models
        twins = [name for name in twins if name in names]
    chosen = study_models(twins, names)
    weights = tok2vec_weights(init_tok2vec, pretrained)
    runs = {
        seed: training_runs(
            chosen,
            seed,
            data,
            output,
            configs,
            steps,
            parser_steps,
            limit,
            jackknife,
            weights,
            pretrained_pipeline,
            transformer,
        )
        for seed in parse_seeds(seeds)
    }
    seconds = run_seeds(
        runs,
        output,
        jobs,
        resume=resume,
        steps=steps,
        parser_steps=parser_steps,
        pretrained_pipeline=pretrained_pipeline,
        transformer=transformer,
        jackknife=None if jackknife is None else str(jackknife),
        init_tok2vec=None if weights is None else str(weights),
    )
    typer.echo(json.dumps(seconds, indent=2))


def trained_models(models: Path, seeds: List[int]) -> List[StudyModel]:
    """The models to evaluate: each model of the study and each twin
    (trained on the jackknifed trees) whose pipeline every seed of ``seeds``
    holds (``study train --models`` may have trained some only). A model
    that some of the seeds hold and others do not is a ValueError: train it
    for every seed, or choose the seeds with --seeds; so is a folder that
    holds no model at all."""
    names = trained_names(models, seeds, list(BY_NAME), "study train (--jackknife for a twin)")
    return [BY_NAME[name] for name in names]


def pipeline_in_use(trained: List[StudyModel], pipeline: Optional[str]) -> Optional[str]:
    """The pretrained pipeline ``pipeline`` if a model of a pretrained arm is
    among the ``trained`` ones (the report compares them with it), else None."""
    return pipeline if any(model.pretrained for model in trained) else None


@study.command("coverage")
def coverage(
    data: Path = DATA,
    models: Path = typer.Option(
        ..., help="Folder of the trained pipelines: the predicted trees are those of MODELS/seed_<s>/parser"
    ),
    output: Path = JSON_OUTPUT,
    limit: int = typer.Option(0, help="Sentences per split (0: all)"),
    seeds: Optional[str] = SEEDS,
    pretrained_pipeline: Annotated[Optional[str], PRETRAINED_PIPELINE] = None,
) -> None:
    """Coverage and spans per token of each lattice on train/dev/test, with
    the gold trees, the trees of each seed's parser and (--pretrained-pipeline)
    those of the pretrained pipeline's parser (when the models folder holds a pretrained arm):
    {split: {"gold": report, "predicted": {seed: report}, "pretrained": report}}."""
    from spacy_depner.evaluation.corpus_scores import load_corpus
    from spacy_depner.evaluation.coverage import lattice_report, with_parsed_trees

    chosen = chosen_seeds(models, seeds)
    pretrained_pipeline = pipeline_in_use(trained_models(models, chosen), pretrained_pipeline)
    report = {}
    for split in SPLITS:
        corpus = load_corpus(data_file(data, split, "conllu"), data_file(data, split, "iob2"), limit)
        predicted = {
            str(seed): lattice_report(with_parsed_trees(corpus, seed_folder(models, seed) / "parser" / "model-best"))
            for seed in chosen
        }
        report[split] = {"gold": lattice_report(corpus), "predicted": predicted}
        if pretrained_pipeline is not None:
            report[split]["pretrained"] = lattice_report(with_parsed_trees(corpus, pretrained_pipeline))
    typer.echo(write_json(output, report))


@study.command("evaluate")
def evaluate(
    data: Path = DATA,
    models: Path = PIPELINES,
    output: Path = JSON_OUTPUT,
    limit: int = typer.Option(0, help="Sentences per split (0: all)"),
    seeds: Optional[str] = SEEDS,
    pretrained_pipeline: Annotated[Optional[str], PRETRAINED_PIPELINE] = None,
) -> None:
    """P/R/F (fractions) of every model of every seed, and of the twins
    trained on jackknifed trees that the seeds' folders hold, on dev and
    test, with gold trees and with the trees of the same seed's parser; a
    model of a pretrained arm with the trees of its own (the pretrained)
    parser ("dev_pretrained", "test_pretrained"); with --pretrained-pipeline
    and a pretrained arm among the models, that pipeline's own ner, its types mapped to the corpus's, trained on
    nothing here ("pretrained_ner"):
    {"seeds": [...], "parser": {seed: {split: UAS/LAS}}, "models": {name: {seed: {"dev_given": P/R/F, ...}}},
     "pretrained_ner": {"mapping": ..., split: P/R/F}}."""
    import spacy

    from spacy_depner.evaluation.corpus_scores import (
        attachment_scores,
        input_docs,
        load_corpus,
        parse_corpus,
        score_pipeline,
    )

    chosen = chosen_seeds(models, seeds)
    evaluated = trained_models(models, chosen)
    pretrained_pipeline = pipeline_in_use(evaluated, pretrained_pipeline)
    corpora = {
        split: load_corpus(data_file(data, split, "conllu"), data_file(data, split, "iob2"), limit)
        for split in ("dev", "test")
    }
    results: Dict = {"seeds": chosen, "parser": {}, "models": {model.name: {} for model in evaluated}}
    if pretrained_pipeline is not None:
        results["pretrained_ner"] = {
            "pipeline": pretrained_pipeline,
            "mapping": ONTONOTES_TO_UNER,
            **mapped_ner_scores(pretrained_pipeline, corpora),
        }
    runs = sum(2 if model.pretrained else 4 for model in evaluated)
    bar = progress(None, runs * len(chosen), "models evaluated (seeds x 2 splits x their kinds of trees)", unit="run")
    for seed in chosen:
        folder, key = seed_folder(models, seed), str(seed)
        pipelines = {model.name: (model, spacy.load(folder / model.name / "model-best")) for model in evaluated}
        results["parser"][key] = {}
        for split, corpus in corpora.items():
            parsed, _ = parse_corpus(folder / "parser" / "model-best", corpus)
            results["parser"][key][split] = attachment_scores(parsed, corpus)
            for name, (model, nlp) in pipelines.items():
                # a pretrained arm's pipeline parses with its own parser; the others get the trees
                kinds = (
                    [("pretrained", input_docs(nlp.vocab, corpus, trees=False))]
                    if model.pretrained
                    else [
                        ("given", input_docs(nlp.vocab, corpus)),
                        ("predicted", input_docs(nlp.vocab, corpus, parsed)),
                    ]
                )
                for trees, docs in kinds:
                    results["models"][name].setdefault(key, {})[f"{split}_{trees}"] = score_pipeline(nlp, corpus, docs)
                    bar.update(1)
            bar.write(f"seed {seed}, {split}: parser {results['parser'][key][split]}")
    bar.close()
    write_json(output, results, indent=None)


@study.command("speed")
def speed(
    data: Path = DATA,
    models: Path = PIPELINES,
    output: Path = JSON_OUTPUT,
    sample: int = typer.Option(2000, help="Training sentences timed per model"),
    batch_words: int = typer.Option(1000, help="Words per training batch"),
    seeds: Optional[str] = SEEDS,
) -> None:
    """Seconds per training iteration (one pass over the training set, from
    the time of ``sample`` sentences) and words/s (dev, gold trees) of every
    model of the first (smallest) seed only, measured one after the other in
    one process on one thread. The twins trained on jackknifed trees are not
    timed: they are the same models, trained on other trees. A pipeline of a
    pretrained arm is timed with its parser (it parses in training and in use)."""
    import spacy
    from spacy.util import minibatch, registry

    from spacy_depner.evaluation.corpus_scores import first_sentences, input_docs, load_corpus
    from spacy_depner.readers.uner import corpus_examples

    train_corpus = load_corpus(data_file(data, "train", "conllu"), data_file(data, "train", "iob2"))
    dev_corpus = load_corpus(data_file(data, "dev", "conllu"), data_file(data, "dev", "iob2"))
    train_words = sum(len(s.words) for s in train_corpus.sentences)
    sample_corpus = first_sentences(train_corpus, sample)
    seed = chosen_seeds(models, seeds)[0]
    rows = {}
    timed = [model for model in trained_models(models, [seed]) if not model.jackknife]
    for model in progress(timed, len(timed), f"models of seed {seed} timed", unit="model"):
        nlp = spacy.load(seed_folder(models, seed) / model.name / "model-best")
        # a pretrained arm trains as spacy train does: its frozen parser parses the input, not updated
        examples = corpus_examples(nlp.vocab, sample_corpus, "predicted" if model.pretrained else "given")
        sample_words = sum(len(eg.predicted) for eg in examples)
        batches = list(minibatch(examples, size=max(1, len(examples) * batch_words // max(sample_words, 1))))
        # the trained config's optimizer, interpolated (a schedule may read [training] max_steps, as the
        # transformer's does; nlp.resume_training() alone resolves it uninterpolated and fails)
        optimizer = nlp.resume_training(
            sgd=registry.resolve({"optimizer": nlp.config.interpolate()["training"]["optimizer"]})["optimizer"]
        )
        update = {
            "sgd": optimizer,
            "exclude": nlp.config["training"]["frozen_components"],
            "annotates": nlp.config["training"]["annotating_components"],
        }
        nlp.update(batches[0], **update)  # warm-up: numba cache, allocations
        start = time.perf_counter()
        for batch in batches:
            nlp.update(batch, **update)
        seconds = (time.perf_counter() - start) * train_words / max(sample_words, 1)
        docs = input_docs(nlp.vocab, dev_corpus, trees=not model.pretrained)
        pipe_seconds, _ = pipeline_seconds({model.name: nlp.pipe}, docs, repeats=1, batch_size=256, warm_up=100)
        words_per_second = sum(len(d) for d in docs) / pipe_seconds[model.name]
        rows[model.name] = {
            "seconds_per_iteration": float(f"{seconds:.4g}"),
            "words_per_second": round(words_per_second),
        }
        tqdm.write(f"{model.name}: {rows[model.name]}")
    write_json(output, {"seed": seed, "train_words": train_words, "models": rows})


@study.command("report")
def report(
    metrics: Path = typer.Option(..., help="Folder of coverage.json, evaluation.json, speed.json"),
    models: Path = PIPELINES,
    bootstrap_samples: int = typer.Option(1000, help="Paired bootstrap resamples"),
) -> None:
    """Write METRICS/report.md and METRICS/speed.png."""
    path = write_report(metrics, models, bootstrap_samples)
    typer.echo(path.read_text())
