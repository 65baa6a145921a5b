"""The active-learning study's report: learning curves by round, what a person
reviewed for them (tokens; decisions for binary review), and how much of
random selection's review each strategy needs to reach random's last F1."""

import json
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np
from spacy.tokens import DocBin

from spacy_depner.pipeline.uncertainty import MEASURES

from ..kit.outputs import save_curves, write_linked_report
from ..kit.seeds import seed_folder
from ..kit.tables import mean_sd, table
from .review import UNITS

STRATEGIES = ("random", *MEASURES, *UNITS)
NAMES = {"random": "random sentences", "region": "rank --unit region", "binary": "rank --unit span (accept/reject)"}
CORPORA = {
    "ewt": {
        "title": "UNER English-EWT, chain_ner CRF",
        "config": "chain_crf_ewt.cfg",
        "component": "chain_ner",
        "spans_key": None,
        "score": "ents_f",
        "dev_score": "ents_f",  # the name of the F1 in model-best's meta.json performance
        "twin": None,
    },
    "genia": {
        "title": "GENIA nested mentions, nested_ner beside spancat",
        "config": "genia_nested.cfg",
        "component": "nested_ner",
        "spans_key": "nested_ner",
        "score": "spans_nested_ner_f",
        "dev_score": "f_nested_ner",
        "twin": "genia_spancat.cfg",
    },
}
TWIN = " · spancat"  # the twin's rows: spaCy's spancat trained on the strategy's Docs


def round_folder(output: Path, seed: int, strategy: str, round_: int) -> Path:
    return seed_folder(output, seed) / ("round_0" if round_ == 0 else f"{strategy}/round_{round_}")


def learning_curves(
    output: Path, seeds: List[int], rounds: int, corpus: str = "ewt", split: str = "test"
) -> Dict[str, Dict[int, List[Optional[float]]]]:
    """Test F1 (``split="dev"``: model-best's dev F1, which chose it) per
    strategy (and per strategy's twin, named strategy + TWIN), round and
    seed (None where missing)."""
    key = CORPORA[corpus]["score"]

    def score(path: Path):
        if not path.is_file():
            return None
        record = json.loads(path.read_text())
        return record["performance"][CORPORA[corpus]["dev_score"]] if split == "dev" else record[key]

    if split == "dev":
        files = {"": "model/model-best/meta.json", TWIN: "twin/model-best/meta.json"}
    else:
        files = {"": "test.json", TWIN: "test_twin.json"}
    if not CORPORA[corpus]["twin"]:
        del files[TWIN]
    return {
        strategy + suffix: {
            r: [score(round_folder(output, s, strategy, r) / name) for s in seeds] for r in range(rounds + 1)
        }
        for strategy in STRATEGIES
        for suffix, name in files.items()
    }


def reviewed(output: Path, seeds: List[int], rounds: int, what: str = "tokens") -> Dict[str, Dict[int, List]]:
    """Per strategy, round and seed: the tokens a person reviewed so far (the
    words of whole sentences; a review strategy's own count), or with
    ``what="decisions"`` the accept/reject decisions (0 for the others); None where missing."""
    import spacy

    lengths = np.array(
        [len(doc) for doc in DocBin().from_disk(output / "corpus" / "train.spacy").get_docs(spacy.blank("en").vocab)]
    )

    def count(path: Path):
        if not path.is_file():
            return None
        record = json.loads(path.read_text())
        if isinstance(record, dict):
            return int(record[what])
        return int(lengths[record].sum()) if what == "tokens" else 0

    return {
        strategy: {
            r: [count(round_folder(output, s, strategy, r) / "labelled.json") for s in seeds] for r in range(rounds + 1)
        }
        for strategy in STRATEGIES
    }


def share_needed(curve: List[Optional[float]], sizes: List[int], target: float) -> Optional[float]:
    """The size (interpolated linearly between rounds) at which ``curve``
    first reaches ``target``, as a share of the last size; None if never."""
    for r in range(len(curve)):
        if curve[r] is not None and curve[r] >= target:
            if r == 0 or curve[r - 1] is None:
                return sizes[r] / sizes[-1]
            gain = curve[r] - curve[r - 1]
            at = sizes[r - 1] + (sizes[r] - sizes[r - 1]) * ((target - curve[r - 1]) / gain if gain > 0 else 1.0)
            return at / sizes[-1]
    return None


def shares_of_random(curves, tokens, ran, rounds: int, random_tokens: Optional[float]) -> List[str]:
    """Per strategy that reviews (not random, binary or a twin): the tokens it
    needs to reach random's last F1 of ``curves`` (mean curves, linear
    between rounds), as a share of random's ``random_tokens``."""
    target = mean(curves["random"][rounds])
    shares = []
    for strategy in [s for s in ran if s not in ("random", "binary") and not s.endswith(TWIN)]:
        curve = [mean(curves[strategy][r]) for r in range(rounds + 1)]
        sizes = [mean(tokens[strategy][r]) for r in range(rounds + 1)]
        if target is None or random_tokens is None or None in curve or None in sizes:
            shares.append(f"{strategy}: not complete")
            continue
        share = share_needed(curve, sizes, target)
        shares.append(
            f"{strategy}: "
            + ("not reached" if share is None else f"{share * sizes[-1] / random_tokens:.0%} of random's tokens")
        )
    return shares


def mean(values) -> Optional[float]:
    found = [v for v in values if v is not None]
    return float(np.mean(found)) if values and len(found) == len(values) else None


def report(
    output: Path,
    seeds: List[int],
    start: int,
    step: int,
    rounds: int,
    candidates: int,
    steps: int,
    budgets: Optional[Dict[str, int]] = None,
    corpus: str = "ewt",
    dev_limit: int = 0,
) -> str:
    """OUTPUT/report.md and OUTPUT/learning_curves.png."""
    budgets = budgets or {}
    curves = learning_curves(output, seeds, rounds, corpus)
    tokens = reviewed(output, seeds, rounds)
    decisions = reviewed(output, seeds, rounds, "decisions")
    tokens.update({s + TWIN: tokens[s] for s in STRATEGIES})
    ran = [s for s in curves if any(v is not None for r in range(1, rounds + 1) for v in curves[s][r])]

    def cell(values):
        done = sum(v is not None for v in values)
        return mean_sd(values, 100) if done == len(values) else f"{done}/{len(values)} seeds done"

    def count(values):
        return "–" if None in values else f"{np.mean(values):,.0f}"

    random_tokens = mean(tokens["random"][rounds])
    dev = learning_curves(output, seeds, rounds, corpus, "dev")
    shares = shares_of_random(curves, tokens, ran, rounds, random_tokens)
    dev_shares = shares_of_random(dev, tokens, ran, rounds, random_tokens)
    per_thousand = []
    for strategy, counts, unit in (("binary", decisions, "decisions"), ("region", tokens, "reviewed tokens")):
        if strategy not in ran:
            continue
        first, last = mean(curves[strategy][0]), mean(curves[strategy][rounds])
        spent = (
            None
            if None in (mean(counts[strategy][rounds]), mean(counts[strategy][0]))
            else (mean(counts[strategy][rounds]) - mean(counts[strategy][0]))
        )
        if None in (first, last, spent) or not spent:
            per_thousand.append(f"{strategy}: not complete")
            continue
        per_thousand.append(
            f"{strategy}: {100 * (last - first) * 1000 / spent:+.2f} F1 points per 1,000 {unit} "
            f"({100 * first:.2f} → {100 * last:.2f} over {spent:,.0f} {unit} after round 0)"
        )
    budget_text = "".join(
        f" {name} reviews {budgets[key]} {unit} a round."
        for key, name, unit in (
            ("region", "Region review", "tokens (its regions until then)"),
            ("binary", "Binary review", "accept/reject decisions"),
        )
        if key in budgets and key in ran
    )
    twin_text = (
        f" Rows ending in `{TWIN.strip()}` are spaCy's `spancat` (the `{CORPORA[corpus]['twin']}` recipe) trained on "
        "the same Docs as the strategy's model; it has no notion of a missing token, so it reads a reviewed "
        "sentence's unreviewed tokens as holding no mention."
        if CORPORA[corpus]["twin"]
        else ""
    )
    text = (
        f"# Active learning, simulated ({CORPORA[corpus]['title']})\n\n"
        f"Test F1 (%, mean ± sd over seeds {', '.join(map(str, seeds))}) by round: {start} random sentences, then "
        f"per round {step} more sentences, chosen at random or as the most uncertain of {candidates} pool "
        "sentences drawn at random by `python -m spacy_depner rank --measure M`, or the most uncertain regions "
        "or proposed entities of such a draw (`rank --unit region|span`), the rest of their sentences missing, "
        f"rejected entities read by `incorrect_spans_key`; every model trained from scratch, {steps} steps"
        + (f", model-best chosen on the first {dev_limit} dev sentences." if dev_limit else ".")
        + f"{budget_text}{twin_text}\n\n"
        + table(
            ["strategy", *[f"round {r}" for r in range(rounds + 1)]],
            [[s] + [cell(curves[s][r]) for r in range(rounds + 1)] for s in ran],
        )
        + "\n\nTokens a person reviewed, so far (mean over the seeds; whole sentences count every word):\n\n"
        + table(
            ["strategy", *[f"round {r}" for r in range(rounds + 1)]],
            [[s] + [count(tokens[s][r]) for r in range(rounds + 1)] for s in ran],
        )
        + (
            "\n\nAccept/reject decisions, so far (binary review; round 0's sentences were annotated whole):\n\n"
            + table(
                ["strategy", *[f"round {r}" for r in range(rounds + 1)]],
                [["binary"] + [count(decisions["binary"][r]) for r in range(rounds + 1)]],
            )
            if "binary" in ran
            else ""
        )
        + f"\n\nReview each strategy needs to reach random selection's round-{rounds} F1 (mean curves, linear "
        "between rounds), as a share of the tokens random selection reviewed: "
        + "; ".join(shares)
        + ". The same on dev (model-best's dev F1, what chose it): "
        + "; ".join(dev_shares)
        + ".\n\nF1 gained after round 0, per 1,000 decisions (binary) and per 1,000 reviewed tokens (region): "
        + ("; ".join(per_thousand) or "not run")
        + ".\n\n![Learning curves: test F1 by tokens reviewed](learning_curves.png)\n"
    )
    save_curves(
        output / "learning_curves.png",
        {
            NAMES.get(s.removesuffix(TWIN), f"rank --measure {s.removesuffix(TWIN)}")
            + (TWIN if s.endswith(TWIN) else ""): [(mean(tokens[s][r]) or 0.0, curves[s][r]) for r in range(rounds + 1)]
            for s in ran
            if not s.startswith("binary")
        },
        "tokens reviewed",
        f"Active learning, {CORPORA[corpus]['title'].split(',')[0]}",
    )
    write_linked_report(output / "report.md", text)
    return text
