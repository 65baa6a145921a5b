"""The partial-annotation study on UNER English-EWT: a fraction of the
training entities is removed at random (per seed), and four ways to train
on what is left are compared on test:

* ``outside``: the removed entities' tokens are ``O`` (what a user gets who
  ignores the gap);
* ``marginal``: their tokens are missing (``ent_iob_ == ""``) and
  ``chain_ner`` maximises the probability of the analyses consistent with
  the rest (log Z over them - log Z);
* ``ner``: spaCy's ``ner`` on the same Docs with missing tokens;
* ``complete``: ``chain_ner`` on the sentences that lost no entity only.

Each (fraction, seed) writes its DocBins to OUTPUT/corpus/, every run is
``spacy train`` of the recipe's linear-chain CRF (or ner) config with the
train corpus replaced by a DocBin (``spacy.Corpus.v1``), one thread, two at
a time, resumable; test scores come from ``spacy evaluate`` on model-best.
"""

import json
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import numpy as np
import spacy
import typer
from spacy.tokens import DocBin
from thinc.api import Config

from ..kit.outputs import save_curves, write_json, write_linked_report
from ..kit.runs import finished, run_pool, train_command
from ..kit.seeds import parse_seeds, seed_folder
from ..kit.tables import mean_sd, table

VARIANTS = ("outside", "marginal", "ner", "complete")
CORPUS_OF = {"outside": "outside", "marginal": "missing", "ner": "missing", "complete": "complete"}
LEGEND = {
    "outside": "chain_ner, removed entities' tokens O",
    "marginal": "chain_ner, their tokens missing (marginalised)",
    "ner": "spaCy ner, their tokens missing",
    "complete": "chain_ner, sentences that lost none",
}
CONFIG_OF = {"outside": "chain", "marginal": "chain", "ner": "ner", "complete": "chain"}


def uner_docs(data: Path, split: str) -> List:
    """The reference Docs (one sentence each) of a UNER English-EWT split."""
    reader = spacy.registry.readers.get("spacy_depner.UNERCorpus.v1")(
        conllu=data / "ud_ewt" / "r2.9" / f"en_ewt-ud-{split}.conllu",
        iob2=data
        / "uner_ewt"
        / (f"en_ewt-ud-{split}.legacy-2022-12.iob2" if split == "train" else f"en_ewt-ud-{split}.iob2"),
    )
    return [eg.reference for eg in reader(spacy.blank("en"))]


def remove_entities(docs: Sequence, fraction: float, seed: int) -> Tuple[List, List, List]:
    """The training Docs with ``round(fraction x entities)`` entities chosen at
    random (``seed``) removed, three ways: their tokens ``O``, their tokens
    missing, and only the Docs that lost none."""
    where = [(d, e) for d, doc in enumerate(docs) for e in range(len(doc.ents))]
    rng = np.random.default_rng(seed)
    chosen = rng.choice(len(where), size=int(round(fraction * len(where))), replace=False)
    removed: Dict[int, set] = {}
    for i in chosen.tolist():
        d, e = where[i]
        removed.setdefault(d, set()).add(e)
    outside, missing, complete = [], [], []
    for d, doc in enumerate(docs):
        gone = removed.get(d, set())
        kept = [ent for e, ent in enumerate(doc.ents) if e not in gone]
        as_o, partial = doc.copy(), doc.copy()
        as_o.set_ents(kept, default="outside")
        partial.set_ents(kept, missing=[ent for e, ent in enumerate(doc.ents) if e in gone], default="outside")
        outside.append(as_o)
        missing.append(partial)
        if not gone:
            complete.append(doc)
    return outside, missing, complete


def write_corpora(data: Path, output: Path, fractions: Sequence[float], seeds: Sequence[int]) -> None:
    """OUTPUT/corpus/test.spacy and, per fraction and seed, its three training DocBins (kept if present)."""
    corpus = output / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    if not (corpus / "test.spacy").is_file():
        DocBin(docs=uner_docs(data, "test"), store_user_data=False).to_disk(corpus / "test.spacy")
    train = None
    for fraction in fractions:
        for seed in seeds:
            folder = corpus / f"f{int(fraction * 100)}_s{seed}"
            if (folder / "complete.spacy").is_file():
                continue
            train = train if train is not None else uner_docs(data, "train")
            folder.mkdir(parents=True, exist_ok=True)
            for name, docs in zip(("outside", "missing", "complete"), remove_entities(train, fraction, seed)):
                DocBin(docs=docs).to_disk(folder / f"{name}.spacy")


def docbin_config(source: Path, target: Path) -> None:
    """``source`` with its train corpus read from the DocBin ``${paths.train_spacy}``."""
    config = Config().from_disk(source, interpolate=False)
    config["paths"]["train_spacy"] = None
    config["corpora"]["train"] = {"@readers": "spacy.Corpus.v1", "path": "${paths.train_spacy}", "limit": 0}
    target.parent.mkdir(parents=True, exist_ok=True)
    config.to_disk(target)


def run_name(variant: str, fraction: float) -> str:
    return f"{variant}_f{int(fraction * 100)}"


def plan(output: Path, data: Path, configs: Path, fractions, seeds, variants, steps: int) -> Dict:
    """Every (seed, run name) -> (title, spacy train command, log)."""
    docbin_config(configs / "chain_crf_ewt.cfg", output / "configs" / "chain.cfg")
    docbin_config(configs / "ner_ewt.cfg", output / "configs" / "ner.cfg")
    runs = {}
    for seed in seeds:
        folder = seed_folder(output, seed)
        for fraction in fractions:
            for variant in variants if fraction > 0 else [v for v in variants if v in ("outside", "ner")]:
                name = run_name(variant, fraction)
                if finished(folder, name):
                    continue
                train = output / "corpus" / f"f{int(fraction * 100)}_s{seed}" / f"{CORPUS_OF[variant]}.spacy"
                command = train_command(
                    output / "configs" / f"{CONFIG_OF[variant]}.cfg",
                    folder / name,
                    data,
                    steps,
                    0,
                    ["--paths.train_spacy", str(train)],
                    seed=seed,
                )
                runs[seed, name] = (f"{name} (seed {seed})", command, folder / "logs" / f"{name}.log")
    return runs


def test_f1(model: Path, test: Path, result: Path, key: str = "ents_f") -> float:
    """``spacy evaluate`` of MODEL on the DocBin TEST, its scores kept in RESULT (its folder made: spacy
    evaluate does not make it); the F1 under ``key`` (entities by default)."""
    result.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "spacy", "evaluate", str(model), str(test), "--output", str(result)],
        check=True,
        capture_output=True,
    )
    return json.loads(result.read_text())[key]


def evaluate_all(output: Path, seeds) -> Dict[str, Dict[str, float]]:
    """``spacy evaluate`` of each finished run's model-best on test (kept in NAME/test.json)."""
    scores: Dict[str, Dict[str, float]] = {}
    for seed in seeds:
        folder = seed_folder(output, seed)
        for model in sorted(folder.glob("*/model-best")):
            name = model.parent.name
            result = model.parent / "test.json"
            if not result.is_file() and finished(folder, name):
                test_f1(model, output / "corpus" / "test.spacy", result)
            if result.is_file():
                scores.setdefault(name, {})[str(seed)] = json.loads(result.read_text())["ents_f"]
    return scores


def report(output: Path, scores: Dict[str, Dict[str, float]], fractions, seeds, steps: int) -> str:
    """OUTPUT/report.md (test F1 mean ± sd per variant and fraction, the
    share of the loss recovered) and OUTPUT/partial.png."""

    def values(variant, fraction):
        # with nothing removed, outside, marginal and complete are one training: the chain on everything
        name = run_name("outside" if fraction == 0 and variant != "ner" else variant, fraction)
        return [scores.get(name, {}).get(str(s)) for s in seeds]

    def mean(variant, fraction):
        found = [v for v in values(variant, fraction) if v is not None]
        return float(np.mean(found)) if found else None

    shown = [f for f in fractions if f > 0]
    rows = [[variant] + [mean_sd(values(variant, f), 100) for f in [0.0, *shown]] for variant in VARIANTS]
    recovered = []
    for f in shown:
        full, as_o, marginal = mean("outside", 0.0), mean("outside", f), mean("marginal", f)
        known = None not in (full, as_o, marginal) and full > as_o
        recovered.append(f"{(marginal - as_o) / (full - as_o):.0%}" if known else "–")
    text = (
        f"# Training on partial annotation (UNER English-EWT, chain_ner CRF; spaCy ner)\n\n"
        f"Test F1 (%, mean ± sd over seeds {', '.join(map(str, seeds))}), {steps} steps each, "
        "by the fraction of training entities removed (0 %: the full training set; the three chain_ner trainings are "
        "then one, run once per seed).\n\n"
        + table(["training", "0 %", *[f"{f:.0%} removed" for f in shown]], rows)
        + "\n\nShare of the F1 lost by `outside` that `marginal` recovers: "
        + ", ".join(f"{f:.0%} removed: {r}" for f, r in zip(shown, recovered))
        + "\n\n![Test F1 by the fraction of training entities removed](partial.png)\n"
    )
    save_curves(
        output / "partial.png",
        {LEGEND[variant]: [(100 * f, values(variant, f)) for f in [0.0, *shown]] for variant in VARIANTS},
        "training entities removed (%)",
        "Partial annotation, UNER English-EWT",
    )
    write_linked_report(output / "report.md", text)
    return text


def partial_study(
    output: Path = typer.Argument(..., help="Folder of the corpora, runs and report"),
    data: Path = typer.Option(Path("../shared/data"), help="The data folder (ud_ewt, uner_ewt)"),
    configs: Path = typer.Option(Path("configs"), help="The composed configs (chain_crf_ewt.cfg, ner_ewt.cfg)"),
    fractions: str = typer.Option("0.25,0.5,0.75", help="Fractions of the training entities removed"),
    seeds: str = typer.Option("0,1,2", help="Seeds (entity removal and training)"),
    variants: str = typer.Option(",".join(VARIANTS), help="Which trainings to run"),
    steps: int = typer.Option(2000, help="Training steps of every run"),
    jobs: int = typer.Option(2, help="Trainings at once"),
) -> None:
    """Train on partially annotated UNER English-EWT and report test F1."""
    fraction_list = [0.0] + [float(f) for f in fractions.split(",")]
    seed_list = parse_seeds(seeds)
    write_corpora(data, output, fraction_list, seed_list)
    runs = plan(output, data, configs, fraction_list, seed_list, [v for v in variants.split(",") if v], steps)
    if runs:
        run_pool(runs, jobs)
    scores = evaluate_all(output, seed_list)
    write_json(output / "scores.json", scores)
    print(report(output, scores, fraction_list, seed_list, steps))
