"""The markdown report of the nested-mention experiments, from the JSON and
markdown files that ``python -m spacy_depner coverage``, ``python -m
experiments nested-study evaluate`` and ``bench-nested`` write in the
metrics folder (P/R/F and UAS/LAS as fractions; the report prints percents)."""
import json
from pathlib import Path
from typing import Dict, List

from .nested_models import CORPORA, MODELS, SPLITS
from .outputs import write_file
from .tables import machine, percent, table

SPACES = ("flat", "nested", "quadratic", "dgm")


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
            rows.append([corpus, split, report["sentences"], report["mentions"],
                         *(report["coverage"].get(space) for space in SPACES),
                         report["spans_per_token"].get("all"), report["spans_per_token"].get("dgm")])
    return table(["corpus", "split", "sentences", "mentions", *(f"{s} %" for s in SPACES), "spans/token", "DGM spans/token"], rows)


def results_table(evaluation: Dict, seconds: Dict[str, float]) -> str:
    """P/R/F (percent) and words/s of every model on the evaluated split; for
    a model that finds heads, F1 of boundaries + type + head."""
    rows = []
    for model in sorted(MODELS, key=lambda m: list(CORPORA).index(m.corpus)):
        for key in (model.name, model.name + "@predicted", model.name + "@tuned"):
            result = evaluation["models"].get(key)
            if result is None:
                continue
            trees = result["trees"] if model.guided else "–"  # the other models read no tree
            title = model.title + (", penalty tuned on dev (MH (F))" if key.endswith("@tuned") else "")
            rows.append([model.corpus, title, trees, percent(result["p"]), percent(result["r"]),
                         percent(result["f"]), percent(result.get("head_f")), result["words_per_second"],
                         seconds.get(model.name)])
    return table(["corpus", "model", "trees", "P", "R", "F", "F with heads", "words/s", "training s"], rows)


def guidance_table(evaluation: Dict) -> str:
    """GUM: the quadratic structure over every span vs over the DGM valid spans."""
    models = evaluation["models"]
    plain = models.get("gum_quadratic")
    rows = []
    for key, trees in (("gum_quadratic_dgm", "given"), ("gum_quadratic_dgm@predicted", "predicted")):
        guided = models.get(key)
        if plain is None or guided is None:
            continue
        rows.append([trees, percent(plain["f"]), percent(guided["f"]), round(100.0 * (guided["f"] - plain["f"]), 2),
                     plain["words_per_second"], guided["words_per_second"],
                     round(guided["words_per_second"] / max(plain["words_per_second"], 1e-9), 2),
                     percent(guided.get("parser", {}).get("uas")), percent(guided.get("parser", {}).get("las"))])
    return table(["trees", "F every span", "F DGM spans", "ΔF", "words/s every span", "words/s DGM spans", "speed ratio",
                  "parser UAS", "parser LAS"], rows)


def write_nested_report(metrics: Path, models: Path) -> Path:
    evaluation = json.loads((metrics / "evaluation.json").read_text())
    train_file = models / "train_seconds.json"
    seconds = json.loads(train_file.read_text())["seconds"] if train_file.exists() else {}
    decode = metrics / "decode.md"
    parts: List[str] = [
        f"# Nested mentions: GENIA and UD English-GUM ({machine()})",
        "UD English-GUM is CC BY-NC-SA 4.0: non-commercial use only.",
        "## Coverage of the mentions by each search space (Corro 2023, Table 5)",
        coverage_table(metrics),
        f"## P/R/F on {evaluation['split']} (percent) and words/s (one thread, the parser's time excluded)",
        results_table(evaluation, seconds),
        "## GUM: quadratic structure over every span vs over the DGM valid spans of the trees",
        guidance_table(evaluation),
    ]
    if decode.exists():
        parts.append(decode.read_text().replace("# Nested MAP decoding", "## Nested MAP decoding", 1))
    types = metrics / "types.md"
    if types.exists():
        parts.append("#" + types.read_text().strip())  # its title one level down
    path = metrics / "report.md"
    write_file(path, "\n\n".join(parts) + "\n")
    return path
