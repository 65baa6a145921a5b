"""The markdown report and the speed chart of the DGM study, from the JSON
files that ``python -m experiments study`` writes (P/R/F and UAS/LAS as
fractions; the report prints percents)."""
import json
from pathlib import Path
from typing import Dict

import numpy as np

from spacy_depner.evaluation.significance import paired_bootstrap

from .dgm_models import FAMILIES, MODELS, TITLES
from .outputs import save_figure, write_file
from .tables import machine, percent, table


def title(name: str) -> str:
    return TITLES[name.replace("+dep", "")]


def prf_tables(evaluation: Dict) -> str:
    """Tables 2 (with dependency features) and 3 (without) of the paper: P/R/F
    (percent) on dev and test, gold ("given") and predicted trees."""
    parts = []
    for heading, dep in (("Table 2: with dependency features", True), ("Table 3: without dependency features", False)):
        rows = []
        for trees in ("given", "predicted"):
            names = [m.name for m in MODELS if m.dependency_features is dep] + ([] if dep else ["ner"])
            for name in names:
                scores = evaluation["models"][name]
                rows.append([trees, title(name)] + [percent(scores[f"{split}_{trees}"][k]) for split in ("dev", "test") for k in ("p", "r", "f")])
        parts.append(f"### {heading}\n\n" + table(["trees", "model", "dev P", "dev R", "dev F", "test P", "test R", "test F"], rows))
    return "\n\n".join(parts)


def coverage_table(coverage: Dict) -> str:
    """Table 1: entities each lattice holds (percent), gold and predicted trees."""
    rows = []
    for split, by_trees in coverage.items():
        gold = by_trees["gold"]
        row = [split, gold["sentences"], gold["entities"]]
        for trees in ("gold", "predicted"):
            row += [by_trees[trees]["coverage"]["dgm_s"], by_trees[trees]["coverage"]["dgm"]]
        rows.append(row)
    return table(["split", "sentences", "entities", "DGM-S % (gold trees)", "DGM % (gold trees)",
                  "DGM-S % (predicted trees)", "DGM % (predicted trees)"], rows)


def spans_table(coverage: Dict) -> str:
    """Table 4: candidate spans (segments an entity may take) per token."""
    rows = [["linear-chain CRF / perceptron (one tag per token)", 1.0, 1.0]]
    for name, key, _, _, lattice in FAMILIES:
        if lattice:
            rows.append([name] + [coverage["test"][trees]["spans_per_token"][lattice] for trees in ("gold", "predicted")])
    return table(["model", "spans/token (test, gold trees)", "spans/token (test, predicted trees)"], rows)


def speed_table(speed: Dict, train_seconds: Dict) -> str:
    base = speed["models"]["semi_crf"]["seconds_per_iteration"]
    rows = [
        [name, title(name), row["seconds_per_iteration"], row["seconds_per_iteration"] / base if base else None, row["words_per_second"],
         train_seconds.get("seconds", {}).get(name)]
        for name, row in speed["models"].items()
    ]
    return table(["model", "", "s / training iteration", "ratio vs semi-CRF", "words/s (dev)", "wall time of `study train` (s)"], rows)


def speed_chart(speed: Dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [m.name for m in MODELS if m.name in speed["models"]]
    values = [speed["models"][n]["seconds_per_iteration"] for n in names]
    figure, axis = plt.subplots(figsize=(8, 4))
    axis.bar(range(len(names)), values, color=["#4c72b0" if "dgm" in n else "#999999" for n in names])
    axis.set_xticks(range(len(names)), names, rotation=45, ha="right")
    axis.set_ylabel("seconds per training iteration")
    axis.set_title("Training time per iteration (one pass over EWT train)")
    figure.tight_layout()
    save_figure(figure, path)


def significance_table(evaluation: Dict, samples: int) -> str:
    """Paired bootstrap (Koehn 2004) of DGM against the semi-CRF and spaCy's ner, on test."""
    rows = []
    for dgm, other in (("dgm", "semi_crf"), ("dgm+dep", "semi_crf+dep"), ("dgm", "ner"), ("dgm+dep", "ner")):
        for trees in ("given", "predicted"):
            a = np.asarray(evaluation["models"][dgm][f"test_{trees}"]["sentence_counts"])
            b = np.asarray(evaluation["models"][other][f"test_{trees}"]["sentence_counts"])
            test = paired_bootstrap(a, b, n_samples=samples)
            rows.append([f"{dgm} vs {other}", trees, 100 * test["delta"], test["better"] or "tie", test["p_value"]])
    return table(["comparison (test)", "trees", "F1 difference", "better", "p (paired bootstrap)"], rows)


def write_report(metrics: Path, models: Path, bootstrap_samples: int = 1000) -> Path:
    coverage = json.loads((metrics / "coverage.json").read_text())
    evaluation = json.loads((metrics / "evaluation.json").read_text())
    speed = json.loads((metrics / "speed.json").read_text())
    train_seconds_path = models / "train_seconds.json"
    train_seconds = json.loads(train_seconds_path.read_text()) if train_seconds_path.exists() else {}
    speed_chart(speed, metrics / "speed.png")
    parser = {split: {k: percent(v) for k, v in scores.items()} for split, scores in evaluation["parser"].items()}
    sections = [
        "# DGM study on UD English-EWT r2.9 + UNER English-EWT",
        f"Measured {machine()}, no GPU; "
        f"{train_seconds.get('steps', '?')} training steps per NER model, {train_seconds.get('parser_steps', '?')} for the parser. "
        "Every NER model is trained with the gold trees; the predicted rows give it the trees of the study's parser "
        f"(UAS/LAS dev {parser['dev']['uas']}/{parser['dev']['las']}, test {parser['test']['uas']}/{parser['test']['las']}). "
        "Tag-based and semi-CRF models without dependency features, and spaCy's ner, do not read the trees: their given and predicted rows are the same.",
        "## (a) P/R/F\n\n" + prf_tables(evaluation),
        "## (b) Coverage (Table 1)\n\n" + coverage_table(coverage),
        "## (c) Candidate spans per token (Table 4)\n\n" + spans_table(coverage),
        "## (d) Speed (Figure 6: `speed.png`)\n\n" + speed_table(speed, train_seconds) + "\n\n![speed](speed.png)",
        "## (e) Significance\n\n" + significance_table(evaluation, bootstrap_samples),
    ]
    path = metrics / "report.md"
    write_file(path, "\n\n".join(sections) + "\n")
    return path
