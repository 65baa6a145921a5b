"""``python -m experiments pretrained-first-stage ...``: flat entities on
UNER English-EWT with a pretrained pipeline (en_core_web_sm), the two-stage
model over that pipeline's own ``ner`` against every spaCy baseline a user
would try, in one run, on the same Docs.

    train     every model of ``MODELS`` once per seed, to OUTPUT/seed_<s>/<model>: the user's
              configs of ``configs/own_data/`` with the corpus replaced by whole UNER English-EWT
              documents (``spacy_depner.UNERDocuments.v1``, the data's own tokens and sentences,
              trees from the pipeline's parser), one recipe and one step budget for all
    evaluate  P/R/F of every model and seed on EWT dev and test and on GUM's named mentions
              (person, organization, place as PER, ORG, LOC; whole documents, out of domain),
              the pipeline's own ner mapped without training beside them, and a paired bootstrap
              of each model against each baseline per seed (``evaluate.py``)
    report    the results page (``pretrained_report.py``)
    tune-decoding  each trained candidate saved again as <model>_posterior: decoding by posterior,
              its penalty chosen on EWT dev (``find-threshold``'s search), scored by evaluate
              as a model of its own
    gum-articles  GUM's whole named mentions scored as they are and with a leading "the" dropped
              from gold and predicted entities alike (``gum_articles.py``)

Models (``configs/own_data/``):

    ner          own_data_ner.cfg: spaCy's ner from scratch on the pipeline's tok2vec (fine-tuned)
    ner_sourced  own_data_ner_sourced.cfg: the pipeline's ner sourced and fine-tuned
    two_stage    own_data_two_stage.cfg: the pipeline's ner frozen as a first stage, its entities
                 read by a chain_ner (CRF, dependency features) through NonLocalFeatures in their
                 own label set (local label + document and corpus majority features)
    two_stage_ner_tok2vec  own_data_two_stage_ner_tok2vec.cfg: the same, its tok2vec started from the
                 weights of the ner's own tok2vec instead of the pipeline's shared one
    ner_sourced_sentences  ner_sourced trained on one Doc per sentence (the sentence-level reader of
                 configs/ner_ewt.cfg) instead of whole documents, scored on the same documents
    two_stage_stacked  own_data_two_stage_stacked.cfg: two_stage_ner_tok2vec reading a second first
                 stage too, the seed's ner_sourced_sentences (trained_ner; on the training documents
                 its cross-validated entities, written by ``crossval``)

    crossval     for two_stage_stacked: ner_sourced_sentences trained on every fold's complement of
                 the training documents (one Doc per sentence, folds of documents), each training
                 document's entities from the model that did not see it, dev's from the seed's
                 ner_sourced_sentences, to OUTPUT/seed_<s>/trained_stage_{train,dev}.jsonl
    two_stage_loo  own_data_two_stage_loo.cfg: two_stage_ner_tok2vec whose corpus features leave
                 each document's own first-stage entities out (leave_one_out)
    two_stage_stacked_loo  own_data_two_stage_stacked_loo.cfg: two_stage_stacked, leave_one_out in both
                 of its NonLocalFeatures layers
    two_stage_sentences  own_data_two_stage_sentences.cfg: two_stage_stacked_loo whose two first stages
                 run one sentence at a time (sentence_ner), the pretrained ner and ner_sourced_sentences,
                 as they score best, in the cross-validated records (``crossval`` writes both kinds) and
                 at run time alike
    two_stage_sentences_dropout  two_stage_sentences, each NonLocalFeatures layer dropped (every
                 feature "none") for a training document with probability FIRST_STAGE_DROPOUT
    two_stage_trained  own_data_two_stage_trained.cfg: two_stage_sentences without the pretrained ner
                 (its trained first stage alone, its tok2vec started from that ner's)
    two_stage_shared  own_data_two_stage_shared.cfg: two_stage_trained whose chain_ner reads the pretrained
                 pipeline's own tok2vec (frozen, the one its parser listens to): the fastest recipe
    two_stage_sentences_shared  own_data_two_stage_sentences_shared.cfg: two_stage_sentences whose chain_ner
                 reads the pretrained pipeline's own tok2vec (frozen) instead of one of its own
    two_stage_shared_window, two_stage_sentences_shared_window  own_data_two_stage_shared_window.cfg,
                 own_data_two_stage_sentences_shared_window.cfg: the same two, one trained window layer
                 over the chain's features (spaCy's MaxoutWindowEncoder, one word each side)
    two_stage_sentences_shared_window2  two_stage_sentences_shared_window with two window layers
                 (--components.chain_ner.model.tok2vec.encode.depth 2)
"""

import json
from pathlib import Path
from typing import Annotated, Dict, List, Optional

import typer
from thinc.api import Config

from spacy_depner.evaluation.pipeline_output import choice_line

from ..kit.options import CONFIGS, DATA, JOBS, PRETRAINED_PIPELINE, RESUME, TRAIN_SEEDS, TRAINED
from ..kit.runs import run_seeds, train_command
from ..kit.seeds import parse_seeds
from .gum_articles import gum_articles
from .pretrained_scores import (
    POSTERIOR,
    TRAINED_CANDIDATES,
    evaluate_study,
    tune_posterior,
    write_evaluation,
    write_report,
)

MODELS = {
    "ner": "own_data_ner.cfg",
    "ner_sourced": "own_data_ner_sourced.cfg",
    "two_stage": "own_data_two_stage.cfg",
    "two_stage_ner_tok2vec": "own_data_two_stage_ner_tok2vec.cfg",
    "ner_sourced_sentences": "own_data_ner_sourced.cfg",
    "two_stage_stacked": "own_data_two_stage_stacked.cfg",
    "two_stage_loo": "own_data_two_stage_loo.cfg",
    "two_stage_stacked_loo": "own_data_two_stage_stacked_loo.cfg",
    "two_stage_sentences": "own_data_two_stage_sentences.cfg",
    "two_stage_sentences_dropout": "own_data_two_stage_sentences.cfg",
    "two_stage_trained": "own_data_two_stage_trained.cfg",
    "two_stage_shared": "own_data_two_stage_shared.cfg",
    "two_stage_sentences_shared": "own_data_two_stage_sentences_shared.cfg",
    "two_stage_shared_window": "own_data_two_stage_shared_window.cfg",
    "two_stage_sentences_shared_window": "own_data_two_stage_sentences_shared_window.cfg",
    "two_stage_sentences_shared_window2": "own_data_two_stage_sentences_shared_window.cfg",
    "two_stage_pretrained_window": "own_data_two_stage_pretrained_window.cfg",
    "two_stage_sentences_shared_window_other_types": "own_data_two_stage_sentences_shared_window.cfg",
}
FIRST_STAGE_DROPOUT = 0.2
# en_core_web_sm's OntoNotes types that UNER's PER, ORG and LOC do not cover (PERSON, ORG, GPE, LOC, FAC left out)
OTHER_TYPES = [
    "CARDINAL",
    "DATE",
    "EVENT",
    "LANGUAGE",
    "LAW",
    "MONEY",
    "NORP",
    "ORDINAL",
    "PERCENT",
    "PRODUCT",
    "QUANTITY",
    "TIME",
    "WORK_OF_ART",
]
CHAIN_TOK2VEC = ("components", "chain_ner", "model", "tok2vec")
SETTINGS = {  # a study variant of an own-data config: (section path, value)
    "two_stage_sentences_dropout": [
        ((*CHAIN_TOK2VEC, "dropout"), FIRST_STAGE_DROPOUT),
        ((*CHAIN_TOK2VEC, "tok2vec", "dropout"), FIRST_STAGE_DROPOUT),
    ],
    "two_stage_sentences_shared_window2": [((*CHAIN_TOK2VEC, "encode", "depth"), 2)],
    "two_stage_sentences_shared_window_other_types": [((*CHAIN_TOK2VEC, "embed", "tok2vec", "labels"), OTHER_TYPES)],
}
TRAINED_STAGE = "ner_sourced_sentences"  # the second first stage of two_stage_stacked
TRAINED_STAGE_KEY = "trained_stage"
SENTENCES = {"ner_sourced_sentences"}  # trained on one Doc per sentence (CONFIGS/ner_ewt.cfg's corpora)
BASELINES = ("ner", "ner_sourced", "ner_sourced_sentences")
TUNED = {name + POSTERIOR: name for name in TRAINED_CANDIDATES}  # written by tune-decoding, not trained
CANDIDATES = (*TRAINED_CANDIDATES, *TUNED)
DOCUMENTS_CONFIG = "two_stage_second_ewt.cfg"  # its [corpora]: whole UNER English-EWT documents
SENTENCES_CONFIG = "ner_ewt.cfg"  # its [corpora]: one UNER English-EWT sentence per Doc

pretrained_first_stage = typer.Typer(
    no_args_is_help=True, help="Two-stage model over a pretrained pipeline's ner, against spaCy's baselines"
)
pretrained_first_stage.command("gum-articles")(gum_articles)


def study_config(configs: Path, model: str, pretrained: str) -> Config:
    """The own-data config of ``model`` on whole UNER English-EWT documents:
    the corpora and data paths of CONFIGS/two_stage_second_ewt.cfg (no
    first-stage file: the pipeline's ner gives the first stage), trees
    predicted by the pipeline's parser, ``paths.pretrained`` set."""
    config = Config().from_disk(configs / "own_data" / MODELS[model], interpolate=False)
    documents = Config().from_disk(
        configs / (SENTENCES_CONFIG if model in SENTENCES else DOCUMENTS_CONFIG), interpolate=False
    )
    for key in ("data", "train_conllu", "train_iob2", "dev_conllu", "dev_iob2"):
        config["paths"][key] = documents["paths"][key]
    config["paths"]["dependencies"] = "predicted"
    config["paths"]["pretrained"] = str(pretrained)
    config["corpora"] = {split: documents["corpora"][split] for split in ("train", "dev")}
    for split in ("train", "dev"):
        if model not in SENTENCES:
            config["corpora"][split]["first_stage"] = None
    for path, value in SETTINGS.get(model, []):
        section = config
        for key in path[:-1]:
            section = section[key]
        section[path[-1]] = value
    if reads_trained_stage(config):
        for split in ("train", "dev"):
            config["paths"][f"trained_stage_{split}"] = None
            config["corpora"][split]["first_stage"] = f"${{paths.trained_stage_{split}}}"
            config["corpora"][split]["spans_key"] = TRAINED_STAGE_KEY
    return config


def reads_trained_stage(config: Config) -> bool:
    """Whether an own-data config's second stage reads a trained first stage too
    (``paths.trained_ner``: the seed's ner_sourced_sentences and its cross-validated entities)."""
    return "trained_ner" in config["paths"]


def trained_stage_by_sentence(config: Config) -> bool:
    """Whether that trained first stage runs one sentence at a time (a ``sentence_ner``)."""
    return config["components"].get("trained_ner", {}).get("factory") == "sentence_ner"


def trained_stage_file(output: Path, seed: int, split: str, by_sentence: bool = False) -> Path:
    """The entities of the seed's trained first stage on SPLIT (train: cross-validated),
    run on whole documents or, ``by_sentence``, one sentence at a time."""
    return output / f"seed_{seed}" / f"{TRAINED_STAGE_KEY}_{split}{'_sentences' if by_sentence else ''}.jsonl"


def model_overrides(output: Path, name: str, config: Config, seed: int) -> List[str]:
    """The per-seed settings of a model of study config ``config``: one that
    reads a trained first stage reads the seed's ner_sourced_sentences and its
    cross-validated entities (by sentence when that stage runs so)."""
    if not reads_trained_stage(config):
        return []
    by_sentence = trained_stage_by_sentence(config)
    needed = [trained_stage_file(output, seed, split, by_sentence) for split in ("train", "dev")]
    needed.append(output / f"seed_{seed}" / TRAINED_STAGE / "model-best")
    missing = [str(path) for path in needed if not path.exists()]
    if missing:
        raise typer.BadParameter(
            f"{name} of seed {seed} needs {', '.join(missing)}: train {TRAINED_STAGE} and run "
            f"`pretrained-first-stage crossval --seeds {seed}` with this --output first"
        )
    return [
        "--paths.trained_stage_train",
        str(needed[0]),
        "--paths.trained_stage_dev",
        str(needed[1]),
        "--paths.trained_ner",
        str(needed[2]),
    ]


def folds_config(configs: Path, pretrained: str) -> Config:
    """ner_sourced_sentences's config whose training corpus is the sentences
    of the training documents outside fold ``${paths.exclude_fold}``."""
    config = study_config(configs, TRAINED_STAGE, pretrained)
    documents = Config().from_disk(configs / DOCUMENTS_CONFIG, interpolate=False)
    train = dict(documents["corpora"]["train"])
    train.update(folds="${paths.folds}", exclude_fold="${paths.exclude_fold}", sentences=True, first_stage=None)
    config["corpora"]["train"] = train
    config["paths"]["folds"] = 0
    config["paths"]["exclude_fold"] = -1
    return config


def model_names(chosen: str, known=(*MODELS, *TUNED)) -> List[str]:
    names = list(known) if chosen.strip() == "all" else [name.strip() for name in chosen.split(",") if name.strip()]
    unknown = [name for name in names if name not in known]
    if unknown:
        raise typer.BadParameter(f"unknown models {unknown}: choose among {', '.join(known)}", param_hint="--models")
    return names


@pretrained_first_stage.command("train")
def train(
    data: Path = DATA,
    configs: Path = CONFIGS,
    output: Path = TRAINED,
    pretrained_pipeline: Annotated[Optional[str], PRETRAINED_PIPELINE] = None,
    steps: Annotated[int, typer.Option(help="Training steps of every model")] = 3000,
    seeds: str = TRAIN_SEEDS,
    models: Annotated[str, typer.Option(help=f"Models, separated by commas, or all: {', '.join(MODELS)}")] = "all",
    limit: Annotated[int, typer.Option(help="First N documents of train and dev (0: all)")] = 0,
    jobs: int = JOBS,
    resume: bool = RESUME,
) -> None:
    """Train every model once per seed, ``jobs`` at a time; with --resume the finished runs are kept."""
    if pretrained_pipeline is None:
        raise typer.BadParameter("give the pretrained pipeline, e.g. DATA/models/en_core_web_sm-3.8.0")
    names = model_names(models, MODELS)
    written, composed = {}, {}
    for name in names:
        path = output / "configs" / f"{name}.cfg"
        path.parent.mkdir(parents=True, exist_ok=True)
        composed[name] = study_config(configs, name, pretrained_pipeline)
        composed[name].to_disk(path)
        written[name] = path
    runs: Dict[int, Dict[str, List[str]]] = {
        seed: {
            name: train_command(
                written[name],
                output / f"seed_{seed}" / name,
                data,
                steps,
                limit,
                model_overrides(output, name, composed[name], seed),
                seed=seed,
                eval_frequency=200,
            )
            for name in names
        }
        for seed in parse_seeds(seeds)
    }
    run_seeds(runs, output, jobs, resume=resume, steps=steps, limit=limit, pretrained_pipeline=pretrained_pipeline)


@pretrained_first_stage.command("crossval")
def crossval(
    data: Path = DATA,
    configs: Path = CONFIGS,
    output: Path = TRAINED,
    pretrained_pipeline: Annotated[Optional[str], PRETRAINED_PIPELINE] = None,
    folds: Annotated[int, typer.Option(help="Folds of the training documents (Krishnan & Manning: 10)")] = 5,
    steps: Annotated[int, typer.Option(help="Training steps of every fold's model")] = 3000,
    seeds: str = TRAIN_SEEDS,
    limit: Annotated[int, typer.Option(help="First N documents of train and dev (0: all)")] = 0,
    jobs: int = JOBS,
    resume: bool = RESUME,
) -> None:
    """The cross-validated entities of the seed's ner_sourced_sentences that
    two_stage_stacked trains on (its fold models to OUTPUT/seed_<s>/folds)."""
    from spacy_depner.workflows.first_stage_folds import cross_validated_records, fold_arguments, predict_records

    from ..kit.outputs import write_jsonl
    from .study import split_documents

    if pretrained_pipeline is None:
        raise typer.BadParameter("give the pretrained pipeline, e.g. DATA/models/en_core_web_sm-3.8.0")
    if folds < 2:
        raise typer.BadParameter("cross-validation needs at least 2 folds", param_hint="--folds")
    chosen = parse_seeds(seeds)
    for seed in chosen:
        if not (output / f"seed_{seed}" / TRAINED_STAGE / "model-best").is_dir():
            raise typer.BadParameter(f"train {TRAINED_STAGE} of seed {seed} first (`pretrained-first-stage train`)")
    path = output / "configs" / "folds.cfg"
    path.parent.mkdir(parents=True, exist_ok=True)
    folds_config(configs, pretrained_pipeline).to_disk(path)
    runs: Dict[int, Dict[str, List[str]]] = {
        seed: {
            f"fold{f}": train_command(
                path,
                output / f"seed_{seed}" / f"fold{f}",
                data,
                steps,
                limit,
                fold_arguments(folds, f),
                seed=seed,
                eval_frequency=200,
            )
            for f in range(folds)
        }
        for seed in chosen
    }
    run_seeds(runs, output, jobs, "crossval_seconds.json", resume=resume, folds=folds, steps=steps, limit=limit)
    import spacy

    vocab = spacy.blank("en").vocab
    train_documents = split_documents(vocab, data, "train", limit)
    dev_documents = split_documents(vocab, data, "dev", limit)
    for seed, by_sentence in [(seed, by_sentence) for seed in chosen for by_sentence in (False, True)]:
        folder = output / f"seed_{seed}"
        fold_models = [folder / f"fold{f}" / "model-best" for f in range(folds)]
        train_file, dev_file = (trained_stage_file(output, seed, split, by_sentence) for split in ("train", "dev"))
        if resume and train_file.exists() and dev_file.exists():
            continue
        write_jsonl(train_file, cross_validated_records(fold_models, train_documents, by_sentence))
        model = folder / TRAINED_STAGE / "model-best"
        write_jsonl(dev_file, predict_records(model, dev_documents, range(len(dev_documents)), by_sentence))
        typer.echo(f"wrote {train_file} and {dev_file}")


@pretrained_first_stage.command("tune-decoding")
def tune_decoding(
    data: Path = DATA,
    models: Path = typer.Option(..., help="The OUTPUT of train"),
    seeds: str = TRAIN_SEEDS,
    names: Annotated[
        Optional[str],
        typer.Option("--models-trained", help="Trained candidates to tune (default: every one trained)"),
    ] = None,
    step: Annotated[float, typer.Option(help="Step of the penalties tried, 0 to 1")] = 0.05,
    resume: Annotated[bool, typer.Option(help="Keep the models already tuned (seed_<s>/tuned_decoding.json)")] = False,
) -> None:
    """Each trained candidate's posterior penalty chosen on EWT dev, saved as <model>_posterior beside it
    (with its own MAP decoding when that scores higher on dev; the choice in seed_<s>/tuned_decoding.json)."""
    for seed in parse_seeds(seeds):
        folder = models / f"seed_{seed}"
        record = folder / "tuned_decoding.json"
        chosen = json.loads(record.read_text()) if record.exists() else {}
        for name in model_names(names or ",".join(TRAINED_CANDIDATES), TRAINED_CANDIDATES):
            model, output = folder / name / "model-best", folder / (name + POSTERIOR) / "model-best"
            if not model.is_dir():
                if names:
                    raise typer.BadParameter(f"seed {seed} {name}: not trained (no {model}): train it first")
                typer.echo(f"seed {seed} {name}: not trained (no {model}), skipped")
                continue
            if resume and output.exists() and name in chosen:
                continue
            chosen[name] = tune_posterior(model, data, output, step)
            record.write_text(json.dumps(chosen, indent=2))
            line = f"posterior_penalty {chosen[name]['tuned_posterior_penalty']}"
            if chosen[name]["chosen"] == "before":
                line = choice_line(chosen[name], "posterior_penalty", "EWT dev")
            typer.echo(f"seed {seed} {name}: {line}")


@pretrained_first_stage.command("evaluate")
def evaluate(
    data: Path = DATA,
    models: Path = typer.Option(..., help="The OUTPUT of train"),
    output: Path = typer.Option(..., help="JSON file of the scores"),
    pretrained_pipeline: Annotated[Optional[str], PRETRAINED_PIPELINE] = None,
    seeds: str = TRAIN_SEEDS,
    names: Annotated[str, typer.Option("--models-trained", help="Models to score, or all")] = "all",
) -> None:
    """Score every model of every seed on EWT dev and test and GUM test, beside the pipeline's own ner mapped."""
    if pretrained_pipeline is None:
        raise typer.BadParameter("give the pretrained pipeline, e.g. DATA/models/en_core_web_sm-3.8.0")
    results = evaluate_study(models, data, pretrained_pipeline, parse_seeds(seeds), model_names(names))
    write_evaluation(output, results)
    typer.echo(f"wrote {output}")


@pretrained_first_stage.command("report")
def report_command(
    evaluation: List[Path] = typer.Option(..., help="The JSON file(s) of evaluate (one per seed, or one for all)"),
    output: Path = typer.Option(..., help="Markdown file to write"),
    candidates: str = typer.Option(
        ",".join(CANDIDATES), help="This project's models, separated by commas: each tested against every baseline"
    ),
) -> None:
    """The results page: F1 per model and split, paired bootstrap of each candidate against each baseline."""
    write_report(evaluation, output, model_names(candidates), list(BASELINES))
    typer.echo(f"wrote {output}")
