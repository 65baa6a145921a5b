"""Active learning, simulated on UNER English-EWT: start from ``start``
training sentences drawn at random (per seed), then for ``rounds`` rounds
add ``step`` sentences of the rest of the training split (the pool, whose
gold entities play the annotator) and train again from scratch. The
sentences added are chosen at random, or by ``python -m spacy_depner rank``
with one of its measures (expected entity errors, entropy, least probable
mention) of the previous round's model, among ``candidates`` sentences of
the pool drawn at random each round (a subsampled pool, to keep a round's
ranking short). Every training is ``spacy train`` of the recipe's
linear-chain CRF config on a DocBin of the labelled sentences, ``steps``
steps; test F1 of model-best by ``spacy evaluate``. Resumable: each
round's labelled set, pipeline and score are kept and reused.

Layout: OUTPUT/seed_<s>/round_0 (shared by every strategy), then
OUTPUT/seed_<s>/<strategy>/round_<r>/ with labelled.json (pool indices),
train.spacy, the pipeline and test.json.
"""

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np
import typer
from spacy.tokens import Doc, DocBin

from spacy_depner.pipeline.uncertainty import MEASURES

from ..kit.outputs import save_curves, write_json, write_linked_report
from ..kit.runs import run_logged, train_command
from ..kit.seeds import parse_seeds, seed_folder
from ..kit.tables import mean_sd, table
from ..partial.study import docbin_config, test_f1, uner_docs

STRATEGIES = ("random", *MEASURES)


class Study:
    """The settings and the shared data of one study run."""

    def __init__(
        self, output: Path, data: Path, configs: Path, start: int, step: int, rounds: int, candidates: int, steps: int
    ):
        self.output, self.data, self.start, self.step, self.rounds = output, data, start, step, rounds
        self.candidates, self.steps = candidates, steps
        corpus = output / "corpus"
        corpus.mkdir(parents=True, exist_ok=True)
        if not (corpus / "train.spacy").is_file():
            DocBin(docs=uner_docs(data, "train")).to_disk(corpus / "train.spacy")
            DocBin(docs=uner_docs(data, "test")).to_disk(corpus / "test.spacy")
        import spacy

        self.vocab = spacy.blank("en").vocab
        self.pool = list(DocBin().from_disk(corpus / "train.spacy").get_docs(self.vocab))
        self.test = corpus / "test.spacy"
        self.config = output / "configs" / "chain.cfg"
        docbin_config(configs / "chain_crf_ewt.cfg", self.config)

    def train(self, folder: Path, labelled: List[int], seed: int) -> float:
        """Train on the pool sentences ``labelled`` into FOLDER (kept if done); its test F1."""
        folder.mkdir(parents=True, exist_ok=True)
        write_json(folder / "labelled.json", labelled)
        if not (folder / "test.json").is_file():
            DocBin(docs=[self.pool[i] for i in labelled]).to_disk(folder / "train.spacy")
            command = train_command(
                self.config,
                folder / "model",
                self.data,
                self.steps,
                0,
                ["--paths.train_spacy", str(folder / "train.spacy")],
                seed=seed,
            )
            run_logged(command, folder / "train.log")
            test_f1(folder / "model" / "model-best", self.test, folder / "test.json")
        return json.loads((folder / "test.json").read_text())["ents_f"]

    def select(self, folder: Path, labelled: List[int], strategy: str, seed: int, round_: int) -> List[int]:
        """The ``step`` pool sentences to add after the model of FOLDER."""
        rng = np.random.default_rng([seed, round_, STRATEGIES.index(strategy)])
        rest = np.setdiff1d(np.arange(len(self.pool)), labelled)
        if strategy == "random":
            return sorted(rng.choice(rest, size=self.step, replace=False).tolist())
        drawn = rng.choice(rest, size=min(self.candidates, rest.shape[0]), replace=False)
        candidates = folder / "candidates.spacy"
        docs = []
        for i in drawn.tolist():
            doc = Doc(
                self.vocab, words=[t.text for t in self.pool[i]], spaces=[bool(t.whitespace_) for t in self.pool[i]]
            )
            doc.user_data["meta"] = {"index": i}
            docs.append(doc)
        DocBin(docs=docs, store_user_data=True).to_disk(candidates)
        ranked = folder / f"ranked_{strategy}.jsonl"
        if not ranked.is_file():
            run_logged(
                [
                    sys.executable,
                    "-m",
                    "spacy_depner",
                    "rank",
                    str(folder / "model" / "model-best"),
                    str(candidates),
                    str(ranked),
                    "--measure",
                    strategy,
                    "--top",
                    str(self.step),
                    "--no-progress",
                ],
                folder / f"rank_{strategy}.log",
            )
        return sorted(json.loads(line)["meta"]["index"] for line in ranked.read_text(encoding="utf8").splitlines())

    def chain(self, seed: int, strategy: str) -> Dict[int, float]:
        """Rounds 1.. of one strategy after the shared round 0: test F1 per round."""
        folder = seed_folder(self.output, seed)
        labelled = json.loads((folder / "round_0" / "labelled.json").read_text())
        scores, previous = {}, folder / "round_0"
        for round_ in range(1, self.rounds + 1):
            current = folder / strategy / f"round_{round_}"
            if (current / "labelled.json").is_file():
                labelled = json.loads((current / "labelled.json").read_text())
            else:
                labelled = sorted(labelled + self.select(previous, labelled, strategy, seed, round_))
            scores[round_] = self.train(current, labelled, seed)
            previous = current
        return scores


def learning_curves(output: Path, seeds: List[int], rounds: int) -> Dict[str, Dict[int, List[Optional[float]]]]:
    """Test F1 per strategy, round and seed (None where missing)."""

    def score(path: Path):
        return json.loads(path.read_text())["ents_f"] if path.is_file() else None

    curves = {}
    for strategy in STRATEGIES:
        curves[strategy] = {0: [score(seed_folder(output, s) / "round_0" / "test.json") for s in seeds]}
        for round_ in range(1, rounds + 1):
            curves[strategy][round_] = [
                score(seed_folder(output, s) / strategy / f"round_{round_}" / "test.json") for s in seeds
            ]
    return curves


def annotated_words(output: Path, seeds: List[int], rounds: int) -> Dict[str, Dict[int, List[Optional[int]]]]:
    """The words of each strategy's labelled sentences per round and seed
    (what annotation costs when it is paid by the word)."""
    import spacy

    lengths = np.array(
        [len(doc) for doc in DocBin().from_disk(output / "corpus" / "train.spacy").get_docs(spacy.blank("en").vocab)]
    )

    def words(path: Path):
        return int(lengths[json.loads(path.read_text())].sum()) if path.is_file() else None

    return {
        strategy: {
            round_: [
                words(
                    seed_folder(output, s)
                    / ("round_0" if round_ == 0 else f"{strategy}/round_{round_}")
                    / "labelled.json"
                )
                for s in seeds
            ]
            for round_ in range(rounds + 1)
        }
        for strategy in STRATEGIES
    }


def share_needed(curve: List[Optional[float]], sizes: List[int], target: float) -> Optional[float]:
    """The sentences (interpolated linearly between rounds) at which ``curve``
    first reaches ``target``, as a share of the last size; None if never."""
    for r in range(len(curve)):
        if curve[r] is not None and curve[r] >= target:
            if r == 0 or curve[r - 1] is None:
                return sizes[r] / sizes[-1]
            gain = curve[r] - curve[r - 1]
            at = sizes[r - 1] + (sizes[r] - sizes[r - 1]) * ((target - curve[r - 1]) / gain if gain > 0 else 1.0)
            return at / sizes[-1]
    return None


def report(output: Path, seeds: List[int], start: int, step: int, rounds: int, candidates: int, steps: int) -> str:
    """OUTPUT/report.md and OUTPUT/learning_curves.png."""
    curves = learning_curves(output, seeds, rounds)
    words = annotated_words(output, seeds, rounds)
    sizes = [start + step * r for r in range(rounds + 1)]

    def mean(values):
        found = [v for v in values if v is not None]
        return float(np.mean(found)) if len(found) == len(values) else None

    def cell(values):
        done = sum(v is not None for v in values)
        return mean_sd(values, 100) if done == len(values) else f"{done}/{len(values)} seeds done"

    rows = [[strategy] + [cell(curves[strategy][r]) for r in range(rounds + 1)] for strategy in STRATEGIES]
    target = mean(curves["random"][rounds])
    shares = []
    for strategy in MEASURES:
        curve = [mean(curves[strategy][r]) for r in range(rounds + 1)]
        if target is None or None in curve:
            shares.append(f"{strategy}: not run")
            continue
        share = share_needed(curve, sizes, target)
        word_sizes = [float(np.mean(words[strategy][r])) for r in range(rounds + 1)]
        word_share = share_needed(curve, word_sizes, target)
        word_share = (
            None if word_share is None else word_share * word_sizes[-1] / float(np.mean(words["random"][rounds]))
        )
        shares.append(
            f"{strategy}: {'not reached' if share is None else f'{share:.0%}'} of the sentences"
            + ("" if word_share is None else f", {word_share:.0%} of the words")
        )
    text = (
        f"# Active learning, simulated (UNER English-EWT, chain_ner CRF)\n\n"
        f"Test F1 (%, mean ± sd over seeds {', '.join(map(str, seeds))}) by round: {start} random sentences, then "
        f"{step} more per round, chosen at random or as the most uncertain of {candidates} pool sentences drawn "
        f"at random by `python -m spacy_depner rank --measure M`; every model trained from scratch, {steps} "
        "steps.\n\n"
        + table(["strategy", *[f"round {r} ({n})" for r, n in enumerate(sizes)]], rows)
        + "\n\nAnnotated words (mean over the seeds; the measures pick longer sentences):\n\n"
        + table(
            ["strategy", *[f"round {r}" for r in range(rounds + 1)]],
            [
                [strategy]
                + [
                    ("–" if None in words[strategy][r] else f"{np.mean(words[strategy][r]):,.0f}")
                    for r in range(rounds + 1)
                ]
                for strategy in STRATEGIES
            ],
        )
        + f"\n\nShare of random selection's {sizes[-1]} sentences (and of its words) each measure needs to reach "
        f"its round-{rounds} F1 (mean curves, linear between rounds): "
        + "; ".join(shares)
        + "\n\n![Learning curves: test F1 by annotated training sentences](learning_curves.png)\n"
    )
    save_curves(
        output / "learning_curves.png",
        {
            "random" if strategy == "random" else f"rank --measure {strategy}": [
                (n, curves[strategy][r]) for r, n in enumerate(sizes)
            ]
            for strategy in STRATEGIES
        },
        "annotated training sentences",
        "Active learning, UNER English-EWT",
    )
    write_linked_report(output / "report.md", text)
    return text


def active_learning_study(
    output: Path = typer.Argument(..., help="Folder of the rounds and the report"),
    data: Path = typer.Option(Path("../shared/data"), help="The data folder (ud_ewt, uner_ewt)"),
    configs: Path = typer.Option(Path("configs"), help="The composed configs (chain_crf_ewt.cfg)"),
    seeds: str = typer.Option("0,1,2", help="Seeds (initial set, draws and training)"),
    strategies: str = typer.Option(",".join(STRATEGIES), help="Selection strategies"),
    start: int = typer.Option(500, help="Sentences of round 0"),
    step: int = typer.Option(500, help="Sentences added per round"),
    rounds: int = typer.Option(5, help="Rounds after round 0"),
    candidates: int = typer.Option(3000, help="Pool sentences drawn each round for ranking"),
    steps: int = typer.Option(1000, help="Training steps of every model"),
    jobs: int = typer.Option(2, help="Strategies trained at once"),
) -> None:
    """Simulate active learning on UNER English-EWT and report learning curves."""
    seed_list = parse_seeds(seeds)
    study = Study(output, data, configs, start, step, rounds, candidates, steps)
    chosen = [s for s in strategies.split(",") if s]
    for strategy in chosen:
        if strategy not in STRATEGIES:
            raise typer.BadParameter(f"unknown strategy {strategy!r}: use {', '.join(STRATEGIES)}")

    def first_round(seed: int) -> float:
        rng = np.random.default_rng(seed)
        return study.train(
            seed_folder(output, seed) / "round_0",
            sorted(rng.choice(len(study.pool), size=start, replace=False).tolist()),
            seed,
        )

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(first_round, seed_list))
        futures = [pool.submit(study.chain, seed, strategy) for seed in seed_list for strategy in chosen]
        for future in futures:
            future.result()
    print(report(output, seed_list, start, step, rounds, candidates, steps))
