"""The markdown report and the speed chart of the DGM study, from the JSON
files that ``python -m experiments study`` writes (P/R/F and UAS/LAS as
fractions, per model and seed; the report prints percents, mean ± sd over
the seeds, and significance tested per seed: ``seed_tests``). The models
trained on jackknifed trees (NAME@jackknife), when evaluated, get a section
of their own beside the models trained on the gold trees, so that Tables 2
and 3 stay the paper's."""

import json
from pathlib import Path
from typing import Dict, List

from ..kit.outputs import save_figure, write_linked_report
from ..kit.seed_tests import ALPHA, seed_count, test_summary
from ..kit.seeds import seed_keys
from ..kit.tables import cell, machine, mean_sd, p_value, seeds_caption, table, wall_seconds
from .models import FAMILIES, JACKKNIFE, MODELS, PRETRAINED_MODELS, TITLES, gold_trained
from .pretrained_report import pretrained_section


def title(name: str) -> str:
    return TITLES[gold_trained(name).replace("+dep", "")]


def prf_cells(by_seed: Dict, seeds: List[str], trees: str) -> List:
    """P/R/F on dev and test (percent, mean ± sd over the seeds) with the ``trees`` ("given" or "predicted")."""
    return [
        mean_sd([by_seed[s][f"{split}_{trees}"][k] for s in seeds], 100)
        for split in ("dev", "test")
        for k in ("p", "r", "f")
    ]


def prf_tables(evaluation: Dict) -> str:
    """Tables 2 (with dependency features) and 3 (without) of the paper: P/R/F
    (percent, mean ± sd over the seeds) on dev and test, gold ("given") and predicted trees."""
    seeds = seed_keys(evaluation["seeds"])
    parts = []
    for heading, dep in (("Table 2: with dependency features", True), ("Table 3: without dependency features", False)):
        rows = []
        for trees in ("given", "predicted"):
            names = [m.name for m in MODELS if m.dependency_features is dep] + ([] if dep else ["ner"])
            for name in (name for name in names if name in evaluation["models"]):
                rows.append([trees, title(name)] + prf_cells(evaluation["models"][name], seeds, trees))
        parts.append(
            f"### {heading}\n\n{seeds_caption(evaluation['seeds'])}\n\n"
            + table(["trees", "model", "dev P", "dev R", "dev F", "test P", "test R", "test F"], rows)
        )
    return "\n\n".join(parts)


def coverage_seeds(coverage: Dict) -> List[str]:
    """The seeds whose parser's trees the coverage file holds ("0", ...)."""
    return list(next(iter(coverage.values()))["predicted"])


def predicted_caption(seeds: List[str]) -> str:
    """The caption of a table of gold trees and, for ``seeds``, the predicted trees of each seed's parser."""
    predicted = f" {seeds_caption(seeds, 'Predicted trees (one parser per seed)')}" if seeds else ""
    return f"Gold trees: one value.{predicted}\n\n"


def coverage_table(coverage: Dict) -> str:
    """Table 1: entities each lattice holds (percent), gold trees and the
    trees of each seed's parser (mean ± sd over the seeds)."""
    seeds = coverage_seeds(coverage)
    rows = []
    for split, by_trees in coverage.items():
        gold, predicted = by_trees["gold"], by_trees["predicted"]
        rows.append(
            [
                split,
                gold["sentences"],
                gold["entities"],
                gold["coverage"]["dgm_s"],
                gold["coverage"]["dgm"],
                *(mean_sd([predicted[s]["coverage"][lattice] for s in seeds]) for lattice in ("dgm_s", "dgm")),
            ]
        )
    return predicted_caption(seeds) + table(
        [
            "split",
            "sentences",
            "entities",
            "DGM-S % (gold trees)",
            "DGM % (gold trees)",
            "DGM-S % (predicted trees)",
            "DGM % (predicted trees)",
        ],
        rows,
    )


def spans_table(coverage: Dict) -> str:
    """Table 4: candidate spans (segments an entity may take) per token,
    gold trees and each seed's parser's trees (mean ± sd over the seeds)."""
    seeds, test = coverage_seeds(coverage), coverage["test"]
    rows = [["linear-chain CRF / perceptron (one tag per token)", 1.0, 1.0 if seeds else None]]
    for name, key, _, _, lattice in FAMILIES:
        if lattice:
            rows.append(
                [
                    name,
                    test["gold"]["spans_per_token"][lattice],
                    mean_sd([test["predicted"][s]["spans_per_token"][lattice] for s in seeds]),
                ]
            )
    return predicted_caption(seeds) + table(
        ["model", "spans/token (test, gold trees)", "spans/token (test, predicted trees)"], rows
    )


def speed_table(speed: Dict, train_seconds: Dict) -> str:
    """Figure 6's figures of the pipelines of one seed (speed.json's), and
    the wall time of training each model, mean ± sd over the trained seeds."""
    base = speed["models"].get("semi_crf", {}).get("seconds_per_iteration")  # None when semi_crf was not trained
    walls = train_seconds.get("seconds", {})
    rows = [
        [
            name,
            title(name),
            row["seconds_per_iteration"],
            row["seconds_per_iteration"] / base if base else None,
            row["words_per_second"],
            wall_seconds([by_name.get(name) for by_name in walls.values()]),
        ]
        for name, row in speed["models"].items()
    ]
    return (
        f"Iteration times and words/s: the pipelines of seed {speed['seed']} only. "
        f"{seeds_caption(list(walls), 'Wall time of `study train`') if walls else 'Wall times not recorded.'}\n\n"
        + table(
            [
                "model",
                "family",
                f"s / training iteration (seed {speed['seed']})",
                "ratio vs semi-CRF",
                f"words/s (dev, seed {speed['seed']})",
                "wall time of `study train` (s)",
            ],
            rows,
        )
    )


SPEED_COLOURS = {True: "#4c72b0", False: "#999999"}  # DGM lattice models, the others
SPEED_LEGEND = ((True, "DGM / DGM-S (dependency-guided lattice)"), (False, "tag-based and semi-CRF models, spaCy ner"))


def speed_chart(speed: Dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    known = [
        m.name for m in MODELS if m.name in speed["models"]
    ]  # the study's order, then the others (pretrained arms)
    names = known + [name for name in speed["models"] if name not in known]
    values = [speed["models"][n]["seconds_per_iteration"] for n in names]
    figure, axis = plt.subplots(figsize=(8, 4))
    axis.bar(range(len(names)), values, color=[SPEED_COLOURS["dgm" in n] for n in names])
    axis.legend(
        handles=[
            Patch(color=SPEED_COLOURS[dgm], label=label)
            for dgm, label in SPEED_LEGEND
            if any(("dgm" in n) is dgm for n in names)
        ],
        loc="upper left",
        fontsize="small",
    )
    if values:
        axis.set_ylim(0, 1.35 * max(values))  # room for the legend above the bars
    axis.set_xticks(range(len(names)), names, rotation=45, ha="right")
    axis.set_ylabel("seconds per training iteration")
    axis.set_title(f"Training time per iteration (one pass over EWT train), pipelines of seed {speed['seed']}")
    figure.tight_layout()
    save_figure(figure, path)


def comparison_row(evaluation: Dict, a: str, b: str, trees: str, samples: int) -> List:
    """Model ``a`` against model ``b`` on test with the ``trees``, by a
    paired bootstrap per seed summarised by ``seed_tests.over_seeds``: the F1
    difference (mean ± sd), the seeds in which ``a`` scores higher, the
    largest p and the seeds with p < ALPHA."""
    seeds = seed_keys(evaluation["seeds"])
    summary = test_summary(evaluation, a, b, f"test_{trees}", samples)
    return [
        f"{a} vs {b}",
        trees,
        mean_sd(summary["deltas"], 100),
        seed_count(summary["a_better"], len(seeds)),
        p_value(summary["max_p"]),
        seed_count(summary["significant"], len(seeds)),
    ]


SIGNIFICANCE_HEADER = [
    "comparison (test)",
    "trees",
    "F1 difference",
    "first higher (seeds)",
    "largest p (paired bootstrap)",
    f"seeds with p < {ALPHA}",
]


def significance_table(evaluation: Dict, samples: int) -> str:
    """Paired bootstrap (Koehn 2004) of DGM against the semi-CRF and spaCy's
    ner on test, once per seed (the two models of the same seed), summarised
    by ``seed_tests.over_seeds``: the largest p over the seeds, the seeds
    with p < 0.05 and the seeds in which DGM scores higher."""
    pairs = [
        (dgm, other)
        for dgm, other in (("dgm", "semi_crf"), ("dgm+dep", "semi_crf+dep"), ("dgm", "ner"), ("dgm+dep", "ner"))
        if dgm in evaluation["models"] and other in evaluation["models"]
    ]
    rows = [
        comparison_row(evaluation, dgm, other, trees, samples)
        for dgm, other in pairs
        for trees in ("given", "predicted")
    ]
    return (
        f"{seeds_caption(evaluation['seeds'])} Each seed's DGM model is tested against the other model of the same seed "
        f"(paired bootstrap, {samples} resamples of the test sentences, one-sided in the direction of that seed's "
        f"difference); the table gives the largest p over the seeds, so p < {ALPHA} there means every seed's pair "
        f"differs at the {ALPHA:.0%} level, and in how many seeds the first model scores higher (the direction).\n\n"
        + table(SIGNIFICANCE_HEADER, rows)
    )


def twins(evaluation: Dict) -> List[str]:
    """The evaluated models trained on jackknifed trees (NAME@jackknife), in the order of the study's models."""
    names = [model.name + JACKKNIFE for model in MODELS]
    return [name for name in names if name in evaluation["models"]]


def jackknife_line(train_seconds: Dict) -> str:
    """Where the jackknifed trees came from: the file ``study train
    --jackknife`` read and, if its jackknife.json is beside it, the folds
    and the parsers' UAS/LAS on their held-out folds (mean over the folds)."""
    path = train_seconds.get("jackknife")
    if not path:
        return "The jackknifed training file is not recorded (train_seconds.json has no `jackknife`)."
    summary = Path(path).parent / "jackknife.json"
    if not summary.exists():
        return f"Jackknifed training trees: `{path}`."
    folds = json.loads(summary.read_text())
    scores = list(folds["attachment_per_fold"].values())
    uas, las = (cell(100 * sum(s[k] for s in scores) / len(scores)) for k in ("uas", "las"))
    return (
        f"Jackknifed training trees: `{path}`, {folds['folds']} folds of documents, each parsed by a parser "
        f"({folds['steps']} steps) trained on the other folds (UAS/LAS on its held-out fold, mean over the folds: {uas} / {las})."
    )


def jackknife_section(evaluation: Dict, train_seconds: Dict, samples: int) -> str:
    """Each tree-reading model trained on the gold trees and on the
    jackknifed trees of the training split: P/R/F (percent, mean ± sd over
    the seeds) on dev and test with gold ("given") and predicted trees, and
    the paired bootstrap per seed of the jackknife-trained model against the
    gold-trained one on test."""
    seeds = seed_keys(evaluation["seeds"])
    rows, tests = [], []
    for twin in twins(evaluation):
        gold = gold_trained(twin)
        for trees in ("given", "predicted"):
            for trained, name in (("gold trees", gold), ("jackknifed trees", twin)):
                rows.append([gold, trained, trees] + prf_cells(evaluation["models"][name], seeds, trees))
            tests.append(comparison_row(evaluation, twin, gold, trees, samples))
    return (
        f"{jackknife_line(train_seconds)} The models trained on the gold trees are those of (a); each is trained "
        f"again, with the same seed and settings, on the jackknifed trees (NAME{JACKKNIFE}). {seeds_caption(evaluation['seeds'])}\n\n"
        + table(["model", "trained on", "trees at test", "dev P", "dev R", "dev F", "test P", "test R", "test F"], rows)
        + f"\n\nEach seed's model trained on the jackknifed trees against the model of the same seed trained on the gold "
        f"trees (paired bootstrap, {samples} resamples of the test sentences), summarised as in (e).\n\n"
        + table(SIGNIFICANCE_HEADER, tests)
    )


def write_report(metrics: Path, models: Path, bootstrap_samples: int = 1000) -> Path:
    coverage = json.loads((metrics / "coverage.json").read_text())
    evaluation = json.loads((metrics / "evaluation.json").read_text())
    speed_path = metrics / "speed.json"  # `study speed`: a run may leave it out (its timings need a quiet machine)
    speed = json.loads(speed_path.read_text()) if speed_path.exists() else None
    train_seconds_path = models / "train_seconds.json"
    train_seconds = json.loads(train_seconds_path.read_text()) if train_seconds_path.exists() else {}
    if speed is not None:
        speed_chart(speed, metrics / "speed.png")
    own = any(m.name in evaluation["models"] for m in MODELS)  # the study's own models, beside pretrained arms
    if not own:  # the own parser only trained because `study train` needs it: no model reads its trees
        coverage = {split: {**by_trees, "predicted": {}} for split, by_trees in coverage.items()}
    parser = {
        split: {
            k: cell(mean_sd([by_split[split][k] for by_split in evaluation["parser"].values()], 100))
            for k in ("uas", "las")
        }
        for split in ("dev", "test")
    }
    sections = [
        "# DGM study on UD English-EWT r2.9 + UNER English-EWT",
        f"Measured {machine()}, no GPU; "
        f"{train_seconds.get('steps', '?')} training steps per NER model"
        + (f", {train_seconds.get('parser_steps', '?')} for the parser" if own else "")
        + f", each trained once per training seed. {seeds_caption(evaluation['seeds'])} "
        + (
            "Every NER model is trained with the gold trees; the predicted rows give the model of each seed the trees "
            "of the study's parser of the same seed "
            f"(UAS/LAS dev {parser['dev']['uas']} / {parser['dev']['las']}, test {parser['test']['uas']} / {parser['test']['las']}). "
            "Tag-based and semi-CRF models without dependency features, and spaCy's ner, do not read the trees: their given and predicted rows are the same."
            if own
            else "Only models of a pretrained pipeline were trained: the study's own parser, which no model here reads, "
            "and its trees are left out."
        )
        + (
            " Section (f) gives the tree-reading models trained on predicted (jackknifed) trees too."
            if twins(evaluation)
            else ""
        ),
    ]
    if any(name in evaluation["models"] for name in (m.name for m in PRETRAINED_MODELS)):
        sections.append(
            "## Where users have it: a pretrained pipeline's trees and tok2vec\n\n"
            + pretrained_section(evaluation, coverage, train_seconds.get("pretrained_pipeline"), bootstrap_samples, own)
        )
    sections += [
        "## (a) P/R/F\n\n" + prf_tables(evaluation),
        "## (b) Coverage (Table 1)\n\n" + coverage_table(coverage),
        "## (c) Candidate spans per token (Table 4)\n\n" + spans_table(coverage),
        "## (d) Speed (Figure 6: `speed.png`)\n\n"
        + (
            speed_table(speed, train_seconds) + "\n\n![speed](speed.png)"
            if speed is not None
            else "Not measured in this run: `study speed` wrote no speed.json."
        ),
        "## (e) Significance\n\n" + significance_table(evaluation, bootstrap_samples),
    ]
    if twins(evaluation):
        sections.append(
            "## (f) Training on predicted trees\n\n" + jackknife_section(evaluation, train_seconds, bootstrap_samples)
        )
    path = metrics / "report.md"
    write_linked_report(path, "\n\n".join(sections) + "\n")
    return path
