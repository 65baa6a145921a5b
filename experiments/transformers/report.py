"""``python -m experiments transformer-report``: the models of both studies
on a fine-tuned transformer beside the same models on the CNN tok2vec: test
P/R/F (mean ± sd over the seeds each has), words/s and training minutes, and
the issue's targets (GENIA quadratic ``nested_ner`` against ``spancat`` and
against the CNN quadratic; EWT DGM+dep against ``ner``).

Reads, for the CNN (FOLDER = METRICS, MODELS) and the transformer (FOLDER =
METRICS/transformer, MODELS/transformer) alike: FOLDER/study/evaluation.json
and speed.json (``study evaluate``/``speed``), FOLDER/nested/evaluation.json
(``nested-study evaluate``), MODELS/{study,nested}/train_seconds.json. A
missing file leaves its rows out, and the report says which."""

import json
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import typer

from ..kit.outputs import write_linked_report
from ..kit.tables import cell, mean_sd, table

# (study, model name, title, the evaluation key of its test score)
GENIA = [
    ("nested", "genia_quadratic", "nested_ner quadratic", "genia_quadratic"),
    ("nested", "genia_cyk", "nested_ner cyk", "genia_cyk"),
    ("nested", "genia_hypergraph", "hypergraph_ner, penalty tuned on dev", "genia_hypergraph@tuned"),
    ("nested", "genia_spancat", "spaCy spancat", "genia_spancat"),
]
EWT = [
    ("study", "dgm+dep@pretrained", "dgm_ner DGM + dependency features", "dgm+dep@pretrained"),
    (
        "study",
        "semi_crf+dep@pretrained",
        "dgm_ner semi-Markov CRF (L=8) + dependency features",
        "semi_crf+dep@pretrained",
    ),
    (
        "study",
        "chain_crf+dep@pretrained",
        "chain_ner linear-chain CRF + dependency features",
        "chain_crf+dep@pretrained",
    ),
    ("study", "ner@pretrained", "spaCy ner", "ner@pretrained"),
]
# (title, corpus rows, better, worse, encoder of worse, the target gap in F1 points)
TARGETS = [
    (
        "GENIA: quadratic nested_ner vs spancat, both on the transformer",
        GENIA,
        "genia_quadratic",
        "genia_spancat",
        "transformer",
        1.5,
    ),
    (
        "GENIA: quadratic nested_ner on the transformer vs on the CNN",
        GENIA,
        "genia_quadratic",
        "genia_quadratic",
        "cnn",
        2.0,
    ),
    (
        "EWT: DGM+dep vs spaCy ner, both on the transformer and en_core_web_sm's trees",
        EWT,
        "dgm+dep@pretrained",
        "ner@pretrained",
        "transformer",
        2.0,
    ),
]
NOT_MEASURED = "not measured (a model is missing)"
HEADER = ["corpus", "model", "encoder", "steps", "seeds", "test P", "test R", "test F", "words/s", "training min"]


def read_json(path: Path, missing: List[str]) -> Optional[Dict]:
    if path.is_file():
        return json.loads(path.read_text(encoding="utf8"))
    missing.append(str(path))
    return None


def encoder_results(metrics: Path, models: Path, missing: List[str]) -> Dict[str, Dict]:
    """{study: {"evaluation", "speed", "seconds"}} of one encoder's folders."""
    return {
        study: {
            "evaluation": read_json(metrics / study / "evaluation.json", missing),
            "speed": read_json(metrics / study / "speed.json", missing) if study == "study" else None,
            "seconds": read_json(models / study / "train_seconds.json", missing),
        }
        for study in ("study", "nested")
    }


def test_scores(results: Dict, study: str, key: str) -> List[Dict]:
    """The test scores of ``key``, one per seed (none if not evaluated)."""
    evaluation = results[study]["evaluation"]
    by_seed = (evaluation or {}).get("models", {}).get(key, {})
    if study == "study":
        return [scores["test_pretrained"] for scores in by_seed.values() if "test_pretrained" in scores]
    return list(by_seed.values())


def row(corpus: str, title: str, encoder: str, results: Dict, study: str, name: str, key: str) -> Optional[List]:
    scores = test_scores(results, study, key)
    if not scores:
        return None
    seconds = results[study]["seconds"] or {}
    minutes = [by_seed[name] / 60 for by_seed in seconds.get("seconds", {}).values() if name in by_seed]
    if study == "study":
        speed = ((results[study]["speed"] or {}).get("models", {}).get(name) or {}).get("words_per_second")
    else:
        speed = scores[0].get("words_per_second")
    if seconds.get("transformer"):  # the encoder's name: the last part of its Hugging Face name or folder
        encoder = Path(str(seconds["transformer"]).rstrip("/")).name
    return [
        corpus,
        title,
        encoder,
        seconds.get("steps", "–"),
        len(scores),
        *(mean_sd([s[m] for s in scores], 100) for m in ("p", "r", "f")),
        "–" if speed is None else f"{speed:,.0f}",
        mean_sd(minutes) if minutes else "–",
    ]


def mean_f(results: Dict, rows: List[Tuple], name: str) -> Optional[float]:
    study, _, _, key = next(r for r in rows if r[1] == name)
    scores = test_scores(results, study, key)
    return 100 * sum(s["f"] for s in scores) / len(scores) if scores else None


def target_line(title: str, a: float, b: float, gap: float, source: str = "") -> str:
    """A target's line: F of the better model against the worse one (``source``: where a figure came from)."""
    where = f" ({source})" if source else ""
    return (
        f"- {title}: {a:.2f} vs {b:.2f}{where}, {a - b:+.2f} (target ≥ +{gap}: {'met' if a - b >= gap else 'missed'})"
    )


def report_text(by_encoder: Dict[str, Dict], missing: List[str]) -> str:
    rows = []
    for corpus, models in (("GENIA", GENIA), ("UNER EWT", EWT)):
        for study, name, title, key in models:
            for encoder, results in by_encoder.items():
                found = row(corpus, title, encoder, results, study, name, key)
                if found is not None:
                    rows.append(found)
    lines = [
        "# The models on a transformer encoder beside the CNN tok2vec",
        "",
        "Test P/R/F in %, mean ± sample sd over the seeds each has; EWT on en_core_web_sm's trees (the pretrained "
        "arm); words/s of `nlp.pipe` as `nested-study evaluate` (GENIA test) and `study speed` (EWT dev) measured them; "
        "training minutes of `spacy train`, two trainings at a time.",
        "",
        table(HEADER, [[cell(c) for c in r] for r in rows]),
        "",
        "## Targets",
        "",
    ]
    for title, models, better, worse, worse_encoder, gap in TARGETS:
        a, b = mean_f(by_encoder["transformer"], models, better), mean_f(by_encoder[worse_encoder], models, worse)
        lines.append(f"- {title}: {NOT_MEASURED}" if a is None or b is None else target_line(title, a, b, gap))
    if missing:
        lines += ["", "Not found (their rows are left out): " + ", ".join(missing)]
    return "\n".join(lines) + "\n"


def transformer_report_command(
    metrics: Path = typer.Option(
        ..., help="METRICS: the CNN's study/ and nested/ results, the transformer's under METRICS/transformer/"
    ),
    models: Path = typer.Option(
        ..., help="MODELS: the CNN's study/ and nested/ train_seconds.json, the transformer's under MODELS/transformer/"
    ),
    output: Path = typer.Option(..., help="The report (markdown) to write"),
) -> None:
    """Write the transformer-vs-CNN report to OUTPUT."""
    missing: List[str] = []
    by_encoder = {
        "transformer": encoder_results(metrics / "transformer", models / "transformer", missing),
        "cnn": encoder_results(metrics, models, missing),
    }
    typer.echo(write_linked_report(output, report_text(by_encoder, missing)))
