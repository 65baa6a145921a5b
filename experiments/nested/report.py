"""The markdown report of the nested-mention experiments, from the JSON and
markdown files that ``python -m spacy_depner coverage``, ``python -m
experiments nested-study evaluate`` and ``bench-nested`` write in the
metrics folder (P/R/F and UAS/LAS as fractions, per model and seed; the
report prints percents, mean ± sd over the seeds, and words/s of the
first seed's pipelines only)."""

import json
from pathlib import Path
from typing import Dict, List, Optional

from ..kit.outputs import write_linked_report
from ..kit.seeds import seed_keys
from ..kit.tables import machine, mean_sd, seeds_caption, table, wall_seconds
from .models import CORPORA, MODELS, SPLITS

SPACES = ("flat", "nested", "quadratic", "dgm")

TUNED_TITLE = ", penalty tuned on dev (MH (F))"  # the row title of a hypergraph model after tuning its penalty


def demoted(markdown: str) -> str:
    """A markdown file's text with every heading one level down (# -> ##), to be a section of the report."""
    return "\n".join("#" + line if line.startswith("#") else line for line in markdown.splitlines())


def coverage_table(metrics: Path) -> str:
    """The paper's Table 5: percent of the mentions each search space holds,
    per corpus and split (DGM: valid spans of GUM's gold trees)."""
    rows = []
    for corpus in CORPORA:
        for split in SPLITS:
            path = metrics / f"coverage_{corpus}_{split}.json"
            if not path.exists():
                continue
            report = json.loads(path.read_text())
            rows.append(
                [
                    corpus,
                    split,
                    report["sentences"],
                    report["mentions"],
                    *(report["coverage"].get(space) for space in SPACES),
                    report["spans_per_token"].get("all"),
                    report["spans_per_token"].get("dgm"),
                ]
            )
    return table(
        ["corpus", "split", "sentences", "mentions", *(f"{s} %" for s in SPACES), "spans/token", "DGM spans/token"],
        rows,
    )


def results_table(evaluation: Dict, seconds: Dict[str, Dict[str, float]], dev: Optional[Dict] = None) -> str:
    """P/R/F (percent, mean ± sd over the seeds) of every model on the
    evaluated split; with ``dev`` (``nested-study evaluate --split dev``'s
    output for the same seeds), F on dev first; for a model that finds
    heads, F1 of boundaries + type + head; words/s of the first seed's
    pipeline; training wall seconds (``seconds[seed][name]``), mean ± sd over the seeds."""
    seeds = seed_keys(evaluation["seeds"])
    if dev is not None and seed_keys(dev["seeds"]) != seeds:
        raise ValueError(
            f"the dev evaluation has seeds {dev['seeds']}, the {evaluation['split']} one {evaluation['seeds']}: "
            "evaluate both splits with the same --seeds"
        )
    rows = []
    for model in sorted(MODELS, key=lambda m: list(CORPORA).index(m.corpus)):
        for key in (model.name, model.name + "@predicted", model.name + "@tuned"):
            by_seed = evaluation["models"].get(key)
            if by_seed is None:
                continue
            results = [by_seed[s] for s in seeds]
            trees = results[0]["trees"] if model.guided or model.pretrained else "–"  # the other models read no tree
            title = model.title + (TUNED_TITLE if key.endswith("@tuned") else "")
            on_dev = (
                []
                if dev is None
                else [mean_sd([dev["models"][key][s]["f"] for s in seeds] if key in dev["models"] else [], 100)]
            )
            rows.append(
                [
                    model.corpus,
                    title,
                    trees,
                    *on_dev,
                    *(mean_sd([r.get(k) for r in results], 100) for k in ("p", "r", "f", "head_f")),
                    results[0]["words_per_second"],
                    wall_seconds([by_name.get(model.name) for by_name in seconds.values()]),
                ]
            )
    trained = "" if list(seconds) in ([], seeds) else " " + seeds_caption(list(seconds), "Training s")
    split = evaluation["split"]
    return f"{seeds_caption(evaluation['seeds'])} words/s: the pipelines of seed {seeds[0]} only.{trained}\n\n" + table(
        [
            "corpus",
            "model",
            "trees",
            *([] if dev is None else ["dev F"]),
            f"{split} P",
            f"{split} R",
            f"{split} F",
            f"{split} F with heads",
            f"words/s (seed {seeds[0]})",
            "training s",
        ],
        rows,
    )


def guidance_table(evaluation: Dict) -> str:
    """GUM: the quadratic structure over every span vs over the DGM valid
    spans, per seed (mean ± sd over the seeds; ΔF of the same seed's pair);
    words/s and their ratio of the first seed's pipelines."""
    seeds = seed_keys(evaluation["seeds"])
    models = evaluation["models"]
    plain = models.get("gum_quadratic")
    rows = []
    for key, trees in (
        ("gum_quadratic_dgm", "given"),
        ("gum_quadratic_dgm@predicted", "predicted"),
        ("gum_quadratic_dgm@pretrained", "the pretrained pipeline's parser (its time included)"),
    ):
        guided = models.get(key)
        if plain is None or guided is None:
            continue
        first_plain, first_guided = plain[seeds[0]]["words_per_second"], guided[seeds[0]]["words_per_second"]
        parsers = [guided[s].get("parser", {}) for s in seeds]
        rows.append(
            [
                trees,
                mean_sd([plain[s]["f"] for s in seeds], 100),
                mean_sd([guided[s]["f"] for s in seeds], 100),
                mean_sd([guided[s]["f"] - plain[s]["f"] for s in seeds], 100),
                first_plain,
                first_guided,
                round(first_guided / max(first_plain, 1e-9), 2),
                mean_sd([parser.get("uas") for parser in parsers], 100),
                mean_sd([parser.get("las") for parser in parsers], 100),
            ]
        )
    return (
        f"{seeds_caption(evaluation['seeds'])} words/s and speed ratio: the pipelines of seed {seeds[0]} only.\n\n"
        + table(
            [
                "trees",
                "F every span",
                "F DGM spans",
                "ΔF",
                f"words/s every span (seed {seeds[0]})",
                f"words/s DGM spans (seed {seeds[0]})",
                "speed ratio",
                "parser UAS",
                "parser LAS",
            ],
            rows,
        )
    )


def write_nested_report(metrics: Path, models: Path) -> Path:
    evaluation = json.loads((metrics / "evaluation.json").read_text())
    dev_file = metrics / "evaluation_dev.json"  # nested-study evaluate --split dev
    dev = json.loads(dev_file.read_text()) if dev_file.exists() else None
    train_file = models / "train_seconds.json"
    seconds = json.loads(train_file.read_text())["seconds"] if train_file.exists() else {}
    decode = metrics / "decode.md"
    parts: List[str] = [
        f"# Nested mentions: GENIA and UD English-GUM ({machine()})",
        "UD English-GUM is CC BY-NC-SA 4.0: non-commercial use only.",
        "## Coverage of the mentions by each search space (Corro 2023, Table 5)",
        coverage_table(metrics),
        f"## P/R/F on {evaluation['split']} (percent) and words/s (one thread, the parser's time excluded but for "
        "the models of a pretrained pipeline, NAME@pretrained, which parse with its parser)",
        results_table(evaluation, seconds, dev),
        "## GUM: quadratic structure over every span vs over the DGM valid spans of the trees",
        guidance_table(evaluation),
    ]
    if decode.exists():
        parts.append(decode.read_text().replace("# Nested MAP decoding", "## Nested MAP decoding", 1))
    types = metrics / "types.md"
    if types.exists():
        parts.append(demoted(types.read_text().strip()))
    path = metrics / "report.md"
    write_linked_report(path, "\n\n".join(parts) + "\n")
    return path
