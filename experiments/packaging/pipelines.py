"""``python -m experiments package``: a pip-installable package (the
library's ``spacy_depner.workflows.packaging``, as ``python -m spacy_depner
package``: an sdist; with ``--wheel`` also a wheel) of one trained model of a
study, the pipeline of its best seed on dev.

    MODELS/seed_<s>/MODEL/model-best   the trained pipelines (or --folder, e.g. model-tuned)
    OUTPUT/<name>-<version>/           spacy package's folder: meta.json, setup.py, README.md,
                                       LICENSES_SOURCES, and dist/<name>-<version>.tar.gz (and the wheel)

The seed is the one whose pipeline scored best on dev during training (the
weighted score of its config's [training.score_weights] over its meta.json
``performance``, as ``spacy train`` chose model-best), unless ``--seed``
names one. The meta that ``spacy package`` writes has a requirement on
spacy-depner (whose entry points register the components, so the package
needs no code of its own), the sources the pipeline was trained on (found in
its config, or ``--sources``) with their licences, the most restrictive of
those licences as the package's (UD English-GUM: CC BY-NC-SA 4.0,
non-commercial), and the P/R/F of the model over every seed of the
evaluation JSON files given (mean and sample sd), as ``performance`` and in
the ``notes`` of its README.
"""

import statistics
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import srsly
import typer

from spacy_depner.workflows.packaging import build_package, package_meta, training_scores

from ..kit.seeds import parse_seeds, seed_folder, seeds_present
from ..kit.tables import mean_sd

# The corpora and pretrained parts a pipeline may be trained from: key -> (a text its config holds when it
# read that source, the source as meta.json's "sources" lists it). Licences from the data folder's READMEs.
SOURCES = {
    "ud_ewt": (
        "ud_ewt/",
        {
            "name": "UD English-EWT r2.9 (words, sentences and trees)",
            "url": "https://github.com/UniversalDependencies/UD_English-EWT",
            "license": "CC BY-SA 4.0",
            "author": "Universal Dependencies; annotations (c) The Board of Trustees of the Leland Stanford Junior University",
        },
    ),
    "uner_ewt": (
        "uner_ewt/",
        {
            "name": "UNER English-EWT (PER, ORG, LOC; train: the first, silver version of 2022-12)",
            "url": "https://github.com/UniversalNER/UNER_English-EWT",
            "license": "CC BY-SA 4.0",
            "author": "Mayhew et al. 2024, Universal NER",
        },
    ),
    "ud_gum": (
        "ud_gum/",
        {
            "name": "UD English-GUM (GUM V11; nested entity mentions)",
            "url": "https://github.com/UniversalDependencies/UD_English-GUM",
            "license": "CC BY-NC-SA 4.0",
            "author": "Amir Zeldes, Georgetown University",
        },
    ),
    "genia": (
        "genia",
        {
            "name": "GENIA term corpus 3.02 (nested DNA, RNA, protein, cell_line, cell_type)",
            "url": "http://www.geniaproject.org",
            "license": "CC BY 3.0",
            "author": "GENIA Project (Kim et al. 2003); corpus annotations (c) GENIA Project",
        },
    ),
    "en_core_web_sm": (
        "en_core_web_sm",
        {
            "name": "spaCy en_core_web_sm 3.8.0 (parser, tok2vec, vocab)",
            "url": "https://github.com/explosion/spacy-models/releases/tag/en_core_web_sm-3.8.0",
            "license": "MIT",
            "author": "Explosion",
        },
    ),
    "all-MiniLM-L6-v2": (
        "all-MiniLM-L6-v2",
        {
            "name": "sentence-transformers/all-MiniLM-L6-v2 (transformer encoder, fine-tuned)",
            "url": "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2",
            "license": "Apache-2.0",
            "author": "sentence-transformers",
        },
    ),
}
# From the least to the most restrictive: a package takes the last one any of its sources has.
LICENCES = ["MIT", "Apache-2.0", "CC BY 3.0", "CC BY-SA 4.0", "CC BY-NC-SA 4.0"]
# The trees of the study's evaluation splits (dev_given, test_pretrained, ...).
TREES = {
    "given": "gold trees",
    "predicted": "the study parser's trees",
    "pretrained": "the trees of the pipeline's own parser",
}


def pipeline_sources(config_text: str) -> List[str]:
    """The keys of SOURCES whose text the pipeline's config (its text, uninterpolated) holds."""
    return [key for key, (marker, _) in SOURCES.items() if marker in config_text]


def package_licence(sources: Sequence[str]) -> str:
    """The most restrictive licence of the SOURCES keys (LICENCES order)."""
    if not sources:
        raise ValueError(
            "the pipeline has no known source, so its licence is unknown: give --sources "
            f"(some of {', '.join(SOURCES)})"
        )
    return max((SOURCES[key][1]["license"] for key in sources), key=LICENCES.index)


def dev_score(pipeline: Path) -> Optional[float]:
    """The weighted dev score that ``spacy train`` gave PIPELINE (and chose its
    model-best by); None if its meta.json has no score that is weighed."""
    scores = training_scores(pipeline)
    return (
        float(sum(score * weight for score, weight in scores.values())) if any(w for _, w in scores.values()) else None
    )


def best_seed(models: Path, model: str, folder: str, seeds: Optional[str]) -> Dict[int, Optional[float]]:
    """The dev score of MODELS/seed_<s>/MODEL/FOLDER for every seed of ``seeds``
    (default: every seed folder that holds it), best first; a seed without
    a score is an error unless it is the only one."""
    chosen = (
        parse_seeds(seeds)
        if seeds
        else [seed for seed in seeds_present(models) if (seed_folder(models, seed) / model / folder).is_dir()]
    )
    missing = [seed for seed in chosen if not (seed_folder(models, seed) / model / folder / "meta.json").is_file()]
    if missing or not chosen:
        raise ValueError(
            f"no trained pipeline {model}/{folder} in {models}/seed_<s> for seed(s) "
            f"{', '.join(map(str, missing)) or 'any'}: train it first, or check --model and --folder"
        )
    scores = {seed: dev_score(seed_folder(models, seed) / model / folder) for seed in chosen}
    unscored = [seed for seed, score in scores.items() if score is None]
    if unscored and len(chosen) > 1:
        raise ValueError(
            f"the meta.json of {model}/{folder} of seed(s) {', '.join(map(str, unscored))} has no score "
            "that its config's [training.score_weights] weighs: give --seed"
        )
    return dict(sorted(scores.items(), key=lambda item: -(item[1] or 0.0)))


def seed_accuracy(evaluations: Sequence[Dict], key: str) -> Dict[str, Dict[str, Dict[str, float]]]:
    """The P/R/F of the model KEY in the evaluation JSON of the studies, per
    split: {split: {seed: {"p", "r", "f"}}}. The DGM study's files hold
    {"models": {key: {seed: {split: scores}}}} (splits such as
    test_pretrained), the nested study's {"split", "models": {key: {seed: scores}}}."""
    found: Dict[str, Dict[str, Dict[str, float]]] = {}
    for evaluation in evaluations:
        for seed, result in evaluation.get("models", {}).get(key, {}).items():
            splits = (
                {evaluation.get("split", "test"): result}
                if "f" in result
                else {split: scores for split, scores in result.items() if isinstance(scores, dict) and "f" in scores}
            )
            for split, scores in splits.items():
                found.setdefault(split, {})[seed] = {measure: scores[measure] for measure in ("p", "r", "f")}
    return found


def accuracy_performance(accuracy: Dict[str, Dict[str, Dict[str, float]]]) -> Dict[str, Optional[float]]:
    """``performance`` entries of the accuracy over seeds: SPLIT_p, SPLIT_r,
    SPLIT_f (means) and SPLIT_f_sd (sample sd; None with one seed)."""
    performance: Dict[str, Optional[float]] = {}
    for split, by_seed in accuracy.items():
        for measure in ("p", "r", "f"):
            performance[f"{split}_{measure}"] = statistics.mean(scores[measure] for scores in by_seed.values())
        values = [scores["f"] for scores in by_seed.values()]
        performance[f"{split}_f_sd"] = statistics.stdev(values) if len(values) > 1 else None
    return performance


def seed_lists(accuracy: Dict[str, Dict[str, Dict[str, float]]]) -> Dict[str, List[int]]:
    """The seeds evaluated on each split."""
    return {split: [int(seed) for seed in by_seed] for split, by_seed in accuracy.items()}


def accuracy_notes(accuracy: Dict[str, Dict[str, Dict[str, float]]], seed: int, chosen_by: str) -> str:
    """The README lines of the accuracy over the seeds and of the seed packaged (CHOSEN_BY says why)."""
    lines = []
    for split, by_seed in accuracy.items():
        trees = TREES.get(split.rpartition("_")[2])
        listed = ", ".join(by_seed)
        lines.append(
            f"- {split}{f' ({trees})' if trees else ''}: F1 {mean_sd([s['f'] for s in by_seed.values()], 100)}, "
            f"P {mean_sd([s['p'] for s in by_seed.values()], 100)}, "
            f"R {mean_sd([s['r'] for s in by_seed.values()], 100)} (%, seeds {listed})"
        )
    heading = ("Accuracy over the training seeds (mean ± sample sd):\n\n" + "\n".join(lines) + "\n\n") if lines else ""
    return heading + f"This package holds the pipeline of seed {seed}, {chosen_by}."


def study_meta(
    pipeline: Path,
    name: str,
    version: str,
    model: str,
    sources: List[str],
    accuracy: Dict,
    seed: int,
    chosen_by: str,
    description: Optional[str],
) -> Dict:
    """The library's package meta with the study's sources, their most
    restrictive licence, and the accuracy over the seeds."""
    names = ", ".join(SOURCES[key][1]["name"].partition(" (")[0] for key in sources)
    performance = {**accuracy_performance(accuracy), "seeds": {"packaged": seed, "evaluated": seed_lists(accuracy)}}
    return package_meta(
        pipeline,
        name,
        version,
        performance,
        accuracy_notes(accuracy, seed, chosen_by),
        description or f"spacy-depner model {model} trained on {names}.",
        package_licence(sources),
        [SOURCES[key][1] for key in sources],
    )


def package_pipeline(
    models: Path = typer.Argument(..., help="Folder of the trained pipelines, MODELS/seed_<s>/<model>"),
    model: str = typer.Option(..., help="The model to package, e.g. dgm+dep@pretrained-tok2vec"),
    name: str = typer.Option(..., help="Package name, e.g. en_depner_ewt_dgm"),
    output: Path = typer.Option(..., help="Folder of the package folders"),
    version: str = typer.Option("0.1.0", help="Package version"),
    folder: str = typer.Option("model-best", help="The pipeline folder of the model, e.g. model-tuned"),
    seed: Optional[int] = typer.Option(None, help="Package this seed's pipeline (default: the best on dev)"),
    seeds: Optional[str] = typer.Option(
        None, help="Seeds to choose from, e.g. 0,1,2 (default: every seed folder holding the model)"
    ),
    evaluation: List[Path] = typer.Option(
        [],
        help="Evaluation JSON of the study (repeatable; a missing file is "
        "skipped): the model's P/R/F over its seeds go into the meta",
    ),
    key: Optional[str] = typer.Option(
        None, help="The model's name in the evaluation JSON (default: --model; e.g. NAME@tuned)"
    ),
    sources: Optional[str] = typer.Option(
        None, help=f"Sources, separated by commas, of {', '.join(SOURCES)} (default: those the pipeline's config names)"
    ),
    description: Optional[str] = typer.Option(None, help="Package description (default: the model and its sources)"),
    wheel: bool = typer.Option(False, help="Also build a wheel (pip wheel of the sdist, offline)"),
    skip_untrained: bool = typer.Option(
        False, help="Say so and do nothing when no seed holds the model (a workflow run with other --vars.models)"
    ),
) -> None:
    """Package the best seed (on dev) of MODEL, with its accuracy over the seeds, sources and licence."""
    if skip_untrained and not any((seed_folder(models, s) / model / folder).is_dir() for s in seeds_present(models)):
        typer.echo(f"{model} was not trained in {models}: no package {name}")
        return
    scores = best_seed(models, model, folder, str(seed) if seed is not None else seeds)
    chosen = next(iter(scores))
    pipeline = seed_folder(models, chosen) / model / folder
    keys = (
        pipeline_sources((pipeline / "config.cfg").read_text(encoding="utf8"))
        if sources is None
        else [part.strip() for part in sources.split(",") if part.strip()]
    )
    unknown = [part for part in keys if part not in SOURCES]
    if unknown:
        raise ValueError(f"--sources: no source {', '.join(unknown)}; give some of {', '.join(SOURCES)}")
    for path in evaluation:
        if not path.is_file():
            typer.echo(f"no {path}: its accuracy is left out")
    accuracy = seed_accuracy([srsly.read_json(path) for path in evaluation if path.is_file()], key or model)
    if seed is not None or len(scores) == 1:
        chosen_by = "the seed asked for" if seed is not None else "the only seed"
    else:
        chosen_by = (
            f"the best on dev in training (score {scores[chosen]:.4f}) of seeds {', '.join(map(str, sorted(scores)))}"
        )
    meta = study_meta(pipeline, name, version, model, keys, accuracy, chosen, chosen_by, description)
    for path in build_package(pipeline, output, meta, wheel):
        typer.echo(f"{path} ({path.stat().st_size / 1e6:.1f} MB)")
    typer.echo(f"{name} {version}: {model} of seed {chosen}, {chosen_by}; licence {meta['license']}")
