"""Active learning, simulated on UNER English-EWT (``chain_ner``'s CRF) or on
GENIA's nested mentions (``nested_ner``, quadratic space, and beside it
spaCy's ``spancat`` trained on the same Docs, the twin): start from ``start``
training sentences drawn at random (per seed), then for ``rounds`` rounds
add ``step`` sentences of the rest of the training split (the pool, whose
gold entities play the annotator) and train again from scratch. The
sentences added are chosen at random, or by ``python -m spacy_depner rank``
with one of its measures (expected entity errors, entropy, least probable
mention) of the previous round's model, among ``candidates`` sentences of
the pool drawn at random each round (a subsampled pool, to keep a round's
ranking short). Two strategies review less than sentences (``review``):
``region`` annotates the most uncertain regions of tokens (``rank --unit
region``) until ``region_tokens`` tokens a round, the rest of their
sentences missing; ``binary`` accepts or rejects the ``decisions`` most
uncertain proposed entities a round (``rank --unit span``). The model reads
rejected entities (``incorrect_spans_key``) and marginalises missing tokens. Every training is ``spacy train`` of the recipe's
corpus's config on a DocBin of the labelled sentences, ``steps`` steps;
test F1 of model-best by ``spacy evaluate`` (the twin's in test_twin.json). Resumable: each
round's labelled set, pipeline and score are kept and reused.

Layout: OUTPUT/seed_<s>/round_0 (shared by every strategy), then
OUTPUT/seed_<s>/<strategy>/round_<r>/ with labelled.json (pool indices; for
region and binary the reviews by pool index, tokens reviewed and decisions
made so far), train.spacy, the pipeline and test.json.
"""

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import numpy as np
import typer
from spacy.tokens import Doc, DocBin
from thinc.api import Config

from spacy_depner.readers.docbins import genia_docs

from ..kit.outputs import write_json
from ..kit.runs import run_logged, train_command
from ..kit.seeds import parse_seeds, seed_folder
from ..partial.study import docbin_config, test_f1, uner_docs
from .report import CORPORA, STRATEGIES, report
from .review import ANNOTATED, REJECTED, UNITS, Review, answer_binary, answer_region, chosen_tasks, training_doc


def corpus_docs(corpus: str, data: Path, split: str, vocab) -> List[Doc]:
    """The reference Docs (one sentence each) of a split of the study's corpus."""
    if corpus == "ewt":
        return uner_docs(data, split)
    return genia_docs(vocab, data / "genia" / f"{split}.jsonl", CORPORA[corpus]["spans_key"])


def study_config(source: Path, target: Path, dev_limit: int, components: Optional[Dict[str, Dict]] = None) -> Path:
    """``source`` as TARGET: its train corpus the DocBin ``${paths.train_spacy}``
    (``docbin_config``), its dev corpus cut to ``dev_limit`` sentences (0:
    all), and the ``components`` settings (component -> settings) set."""
    docbin_config(source, target)
    config = Config().from_disk(target, interpolate=False)
    config["corpora"]["dev"]["limit"] = dev_limit
    for name, settings in (components or {}).items():
        config["components"][name].update(settings)
    config.to_disk(target)
    return target


class Study:
    """The settings and the shared data of one study run."""

    def __init__(
        self,
        output: Path,
        data: Path,
        configs: Path,
        start: int,
        step: int,
        rounds: int,
        candidates: int,
        steps: int,
        region_tokens: int = 1000,
        decisions: int = 200,
        corpus: str = "ewt",
        twins: Sequence[str] = ("region",),
        dev_limit: int = 0,
    ):
        self.output, self.data, self.start, self.step, self.rounds = output, data, start, step, rounds
        self.candidates, self.steps, self.corpus, self.twins = candidates, steps, corpus, tuple(twins)
        self.budgets = {"region": region_tokens, "binary": decisions}
        self.spans_key = CORPORA[corpus]["spans_key"]
        folder = output / "corpus"
        folder.mkdir(parents=True, exist_ok=True)
        import spacy

        self.vocab = spacy.blank("en").vocab
        if not (folder / "train.spacy").is_file():
            for split in ("test", "train"):
                DocBin(docs=corpus_docs(corpus, data, split, self.vocab)).to_disk(folder / f"{split}.spacy")
        self.pool = list(DocBin().from_disk(folder / "train.spacy").get_docs(self.vocab))
        self.test = folder / "test.spacy"
        settings = {"incorrect_spans_key": REJECTED}
        if self.spans_key is not None:
            settings["annotated_key"] = ANNOTATED
        self.config = study_config(
            configs / CORPORA[corpus]["config"],
            output / "configs" / f"{corpus}.cfg",
            dev_limit,
            {CORPORA[corpus]["component"]: settings},
        )
        self.twin = None
        if CORPORA[corpus]["twin"]:
            self.twin = study_config(
                configs / CORPORA[corpus]["twin"], output / "configs" / f"{corpus}_twin.cfg", dev_limit
            )

    def train(self, folder: Path, labelled, seed: int, docs: Optional[List[Doc]] = None, twin: bool = True) -> float:
        """Train on the pool sentences ``labelled`` (or on ``docs``, ``labelled``
        then the record of their reviews) into FOLDER (kept if done), and, if
        ``twin``, the corpus's twin on the same Docs into FOLDER/twin; the model's test F1."""
        folder.mkdir(parents=True, exist_ok=True)
        write_json(folder / "labelled.json", labelled)
        if not (folder / "train.spacy").is_file():
            DocBin(docs=[self.pool[i] for i in labelled] if docs is None else docs).to_disk(folder / "train.spacy")
        runs = [(self.config, "model", "test.json", "train.log")]
        if self.twin is not None and twin:
            runs.append((self.twin, "twin", "test_twin.json", "train_twin.log"))
        for config, model, result, log in runs:
            if (folder / result).is_file():
                continue
            command = train_command(
                config,
                folder / model,
                self.data,
                self.steps,
                0,
                ["--paths.train_spacy", str(folder / "train.spacy")],
                seed=seed,
            )
            run_logged(command, folder / log)
            test_f1(folder / model / "model-best", self.test, folder / result, CORPORA[self.corpus]["score"])
        return json.loads((folder / "test.json").read_text())[CORPORA[self.corpus]["score"]]

    def select(self, folder: Path, labelled: List[int], strategy: str, seed: int, round_: int) -> List[int]:
        """The ``step`` pool sentences to add after the model of FOLDER."""
        rng = np.random.default_rng([seed, round_, STRATEGIES.index(strategy)])
        rest = np.setdiff1d(np.arange(len(self.pool)), labelled)
        if strategy == "random":
            return sorted(rng.choice(rest, size=self.step, replace=False).tolist())
        drawn = rng.choice(rest, size=min(self.candidates, rest.shape[0]), replace=False)
        ranked = self.ranked(folder, drawn, strategy, self.step)
        return sorted(json.loads(line)["meta"]["index"] for line in ranked.read_text(encoding="utf8").splitlines())

    def ranked(self, folder: Path, drawn: np.ndarray, strategy: str, top: int) -> Path:
        """``rank`` of the pool sentences ``drawn`` by the model of FOLDER: the
        ``top`` most uncertain tasks of the strategy's measure or unit, a JSONL file."""
        candidates = folder / f"candidates_{strategy}.spacy"
        docs = []
        for i in drawn.tolist():
            doc = Doc(
                self.vocab, words=[t.text for t in self.pool[i]], spaces=[bool(t.whitespace_) for t in self.pool[i]]
            )
            doc.user_data["meta"] = {"index": i}
            docs.append(doc)
        DocBin(docs=docs, store_user_data=True).to_disk(candidates)
        ranked = folder / f"ranked_{strategy}.jsonl"
        how = ["--unit", UNITS[strategy]] if strategy in UNITS else ["--measure", strategy]
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
                    *how,
                    "--top",
                    str(top),
                    "--no-progress",
                ],
                folder / f"rank_{strategy}.log",
            )
        return ranked

    def review(self, seed: int, strategy: str) -> Dict[int, float]:
        """Rounds 1.. of a review strategy (region, binary) after the shared round 0: test F1 per round."""
        folder = seed_folder(self.output, seed)
        first = json.loads((folder / "round_0" / "labelled.json").read_text())
        reviews = {i: Review(regions=[[0, len(self.pool[i])]]) for i in first}
        record = {"reviews": {}, "tokens": sum(len(self.pool[i]) for i in first), "decisions": 0}
        scores, previous = {}, folder / "round_0"
        for round_ in range(1, self.rounds + 1):
            current = folder / strategy / f"round_{round_}"
            if (current / "labelled.json").is_file():
                record = json.loads((current / "labelled.json").read_text())
                reviews = {int(i): Review(**r) for i, r in record["reviews"].items()}
            else:
                rng = np.random.default_rng([seed, round_, STRATEGIES.index(strategy)])
                rest = np.setdiff1d(np.arange(len(self.pool)), sorted(reviews))
                drawn = rng.choice(rest, size=min(self.candidates, rest.shape[0]), replace=False)
                budget = self.budgets[strategy]
                lines = self.ranked(previous, drawn, strategy, budget).read_text(encoding="utf8").splitlines()
                for task in chosen_tasks([json.loads(line) for line in lines], strategy, budget):
                    index = task["meta"]["index"]
                    review = reviews.setdefault(index, Review())
                    if strategy == "region":
                        record["tokens"] += answer_region(self.pool[index], task, review, self.spans_key)
                    else:
                        answer_binary(self.pool[index], task, review, self.spans_key)
                        record["decisions"] += 1
                record["reviews"] = {str(i): r.as_dict() for i, r in sorted(reviews.items())}
            docs = [training_doc(self.pool[i], r, self.spans_key) for i, r in sorted(reviews.items())]
            scores[round_] = self.train(current, record, seed, docs, strategy in self.twins)
            previous = current
        return scores

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
            scores[round_] = self.train(current, labelled, seed, twin=strategy in self.twins)
            previous = current
        return scores


def active_learning_study(
    output: Path = typer.Argument(..., help="Folder of the rounds and the report"),
    data: Path = typer.Option(Path("../shared/data"), help="The data folder (ud_ewt, uner_ewt, genia)"),
    configs: Path = typer.Option(Path("configs"), help="The composed configs (chain_crf_ewt.cfg, genia_*.cfg)"),
    corpus: str = typer.Option("ewt", help="ewt (chain_ner CRF) or genia (nested_ner beside spancat)"),
    seeds: str = typer.Option("0,1,2", help="Seeds (initial set, draws and training)"),
    strategies: str = typer.Option(",".join(STRATEGIES), help="Selection strategies"),
    start: int = typer.Option(500, help="Sentences of round 0"),
    step: int = typer.Option(500, help="Sentences added per round"),
    rounds: int = typer.Option(5, help="Rounds after round 0"),
    candidates: int = typer.Option(3000, help="Pool sentences drawn each round for ranking"),
    steps: int = typer.Option(1000, help="Training steps of every model"),
    region_tokens: int = typer.Option(1000, help="Tokens reviewed a round by the region strategy"),
    decisions: int = typer.Option(200, help="Accept/reject decisions a round by the binary strategy"),
    twins: str = typer.Option("region", help="Strategies whose Docs also train the twin (genia: spancat)"),
    dev_limit: int = typer.Option(0, help="Dev sentences that choose model-best (0: all)"),
    jobs: int = typer.Option(2, help="Strategies trained at once"),
) -> None:
    """Simulate active learning on UNER English-EWT or GENIA and report learning curves."""
    seed_list = parse_seeds(seeds)
    if corpus not in CORPORA:
        raise typer.BadParameter(f"unknown corpus {corpus!r}: use {', '.join(CORPORA)}")
    study = Study(
        output,
        data,
        configs,
        start,
        step,
        rounds,
        candidates,
        steps,
        region_tokens,
        decisions,
        corpus,
        [s for s in twins.split(",") if s],
        dev_limit,
    )
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
        futures = [
            pool.submit(study.review if strategy in UNITS else study.chain, seed, strategy)
            for seed in seed_list
            for strategy in chosen
        ]
        for future in futures:
            future.result()
    print(report(output, seed_list, start, step, rounds, candidates, steps, study.budgets, corpus, dev_limit))
