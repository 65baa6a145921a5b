"""The evaluation and the report of ``pretrained-first-stage``: every
trained model of every seed, and the pretrained pipeline's own ner mapped to
the corpus's labels without training, on whole documents of UNER
English-EWT dev and test (in domain) and of UD English-GUM test (out of
domain: GUM's named person, organization and place mentions as PER, ORG and
LOC, its other named mentions left out of the gold standard, since no model
here predicts their types), each scored per document (spaCy's rule, exact
match) so that a paired bootstrap can compare two models of one seed."""

import json
from pathlib import Path
from typing import Dict, List

from spacy.tokens import Span

from ..dgm.pretrained_ner import MappedEntities
from ..kit.outputs import write_file, write_json
from ..kit.seed_tests import seed_count, test_summary
from ..kit.tables import machine, mean_sd, seeds_caption, table

GUM_TO_UNER = {"person": "PER", "organization": "ORG", "place": "LOC"}
SPLITS = {
    "dev": "EWT dev",
    "test": "EWT test",
    "gum": "GUM test (out of domain)",
}
TRAINED_CANDIDATES = (
    "two_stage_ner_tok2vec",
    "two_stage_stacked",
    "two_stage_loo",
    "two_stage_stacked_loo",
)  # this project's, trained
POSTERIOR = "_posterior"  # a trained model's name + this: the same model, its posterior penalty tuned on dev
MAPPED = "sm_ner_mapped"  # the pipeline's own ner, mapped, no training
TITLES = {
    "ner": "spaCy ner from scratch on the pipeline's tok2vec",
    "ner_sourced": "spaCy ner sourced from the pipeline, fine-tuned",
    "ner_sourced_sentences": "the same, trained on one Doc per sentence (scored on the documents)",
    "two_stage": "two-stage: chain_ner CRF + dep over the pipeline's frozen ner (local label, majority features)",
    "two_stage_ner_tok2vec": "the same two-stage model, its tok2vec started from the ner's own tok2vec",
    "two_stage_stacked": "two_stage_ner_tok2vec over a second first stage too: ner_sourced_sentences "
    "(cross-validated on train, 5 folds)",
    "two_stage_loo": "two_stage_ner_tok2vec, its corpus features leaving each document's own entities out",
    "two_stage_stacked_loo": "two_stage_stacked, the corpus features of both first stages leaving each document's "
    "own entities out",
    **{
        f"{name}{POSTERIOR}": f"{name}, decoding by posterior, its penalty chosen on EWT dev (`find-threshold`)"
        for name in TRAINED_CANDIDATES
    },
    MAPPED: "the pipeline's own ner, mapped, no training",
}


def gum_as_uner(doc) -> None:
    """GUM's named mentions of ``doc`` relabelled PER, ORG, LOC; the others dropped."""
    doc.set_ents(
        [Span(doc, e.start, e.end, label=GUM_TO_UNER[e.label_]) for e in doc.ents if e.label_ in GUM_TO_UNER],
        default="outside",
    )


def split_examples(vocab, data: Path, split: str) -> List:
    """Examples of whole documents of a split: their input Docs have the data's
    tokens and sentence starts, no trees (the pipeline's parser gives them)."""
    from spacy_depner.readers.documents import document_examples, gum_named_examples

    if split == "gum":
        examples = gum_named_examples(vocab, data / "ud_gum" / "en_gum-ud-test.conllu", "predicted")
        for eg in examples:
            gum_as_uner(eg.reference)
        return examples
    return document_examples(
        vocab,
        data / "ud_ewt" / "r2.9" / f"en_ewt-ud-{split}.conllu",
        data / "uner_ewt" / f"en_ewt-ud-{split}.iob2",
        "predicted",
    )


def tune_posterior(model: Path, data: Path, output: Path, step: float) -> Dict:
    """The pipeline at ``model`` saved to ``output`` with its entity
    component decoding by posterior, its ``posterior_penalty`` the one of
    0, step, ..., 1 with the best F1 on whole EWT dev documents
    (``tune_posterior_penalty``: chosen on dev, as ``find-threshold``
    chooses it), or with its own decoding when that scores higher there
    (``chosen``: "before"); returns the search's ``tuned_*``, ``before_*``
    and ``chosen``."""
    import spacy

    from spacy_depner.evaluation.component_decoding import tunable_component
    from spacy_depner.evaluation.pipeline_output import save_pipeline
    from spacy_depner.evaluation.threshold_tuning import tune_component_setting

    nlp = spacy.load(model)
    name = tunable_component(nlp, model, None, "posterior_penalty")
    examples = split_examples(nlp.vocab, data, "dev")
    gold = [{(e.start, e.end, e.label_) for e in eg.reference.ents} for eg in examples]
    result, _, tuned = tune_component_setting(nlp, name, examples, gold, "posterior_penalty", step)
    save_pipeline(nlp, name, tuned, output)
    return result


def pipeline_scores(nlp, data: Path) -> Dict:
    """``score_docs`` of ``nlp`` on every split of SPLITS: {split: scores}."""
    from spacy_depner.evaluation.corpus_scores import score_docs

    scores = {}
    for split in SPLITS:
        examples = split_examples(nlp.vocab, data, split)
        scores[split] = score_docs(nlp, [eg.reference for eg in examples], [eg.predicted for eg in examples])
    return scores


def evaluate_study(models: Path, data: Path, pretrained: str, seeds: List[int], names: List[str]) -> Dict:
    """The scores of every model of every seed (OUTPUT/seed_<s>/<model>/model-best) and of the
    pretrained pipeline's own ner mapped: {"seeds", "models": {name: {seed: {split: scores}}}}."""
    import spacy

    results: Dict = {"seeds": seeds, "pretrained": pretrained, "models": {}}
    for name in names:
        results["models"][name] = {
            str(seed): pipeline_scores(spacy.load(models / f"seed_{seed}" / name / "model-best"), data)
            for seed in seeds
        }
    mapped = pipeline_scores(MappedEntities(spacy.load(pretrained)), data)
    results["models"][MAPPED] = {str(seed): mapped for seed in seeds}  # no training: the same for every seed
    return results


def best_on_dev(results: Dict, names: List[str]) -> str:
    """The model of the highest mean F1 on EWT dev (chosen on dev)."""
    seeds = [str(seed) for seed in results["seeds"]]

    def dev_f(name: str) -> float:
        return sum(results["models"][name][seed]["dev"]["f"] for seed in seeds) / len(seeds)

    return max(names, key=dev_f)


def report(results: Dict, candidates: List[str], baselines: List[str], samples: int = 1000) -> str:
    """The results page: F1 (P, R) per model and split, mean ± sd over the seeds,
    and the paired bootstrap of each of ``candidates`` (this project's
    pipelines, the one best on dev named) against every baseline per split."""
    seeds = results["seeds"]
    complete = {name for name, by_seed in results["models"].items() if all(str(s) in by_seed for s in seeds)}
    candidates = [name for name in candidates if name in complete]
    if not candidates:
        raise ValueError(f"no candidate scored for every seed {seeds}: score one with `evaluate --models-trained`")
    names = [name for name in [*baselines, MAPPED, *candidates] if name in complete]
    names += [name for name in results["models"] if name not in names and name in complete]
    rows = []
    for name in names:
        runs = [results["models"][name][str(seed)] for seed in seeds]
        rows.append(
            [
                name,
                TITLES.get(name, name),
                *[mean_sd([run[split]["f"] for run in runs], 100) for split in SPLITS],
                mean_sd([run["test"]["p"] for run in runs], 100),
                mean_sd([run["test"]["r"] for run in runs], 100),
                mean_sd([run["test"]["words_per_second"] for run in runs]),
            ]
        )
    header = ["model", "what", "dev F", "test F", "GUM test F", "test P", "test R", "words/s"]
    tests = []
    baselines = [name for name in baselines if name in complete]
    for candidate, baseline in [(c, b) for c in candidates for b in [*baselines, MAPPED]]:
        for split in SPLITS:
            summary = test_summary(results, candidate, baseline, split, samples)
            tests.append(
                [
                    f"{candidate} vs {baseline}",
                    SPLITS[split],
                    mean_sd(summary["deltas"], 100),
                    seed_count(summary["a_better"], summary["seeds"]),
                    ", ".join(f"{p:.3f}" for p in summary["p_values"]),
                    seed_count(summary["significant"], summary["seeds"]),
                ]
            )
    test_header = ["comparison", "data", "ΔF1", "seeds better", "p per seed", "seeds p < 0.05"]
    chosen, ours = best_on_dev(results, baselines), best_on_dev(results, candidates)
    return "\n\n".join(
        [
            "# Flat entities over a pretrained pipeline: the two-stage model against spaCy's baselines",
            f"Measured {machine()}. {seeds_caption(seeds)} Pipeline: `{results['pretrained']}` (its parser's "
            "trees, its tok2vec, its ner). Whole documents, the data's own tokens and sentences; every trained "
            "model has the same recipe and step budget (`python -m experiments pretrained-first-stage train`). "
            "F1, P, R in percent, mean ± sample standard deviation over the seeds; dev and test: UNER "
            "English-EWT; GUM test: UD English-GUM's named person, organization and place mentions as PER, ORG, "
            "LOC (out of domain). words/s: the test pass of the evaluation, the whole pipeline (parser and "
            "first stage included), one process, evaluations of two seeds run side by side on the 2 cores "
            "(noisy).",
            table(header, rows),
            f"Chosen on EWT dev: the best baseline `{chosen}`, and of this project's pipelines "
            f"({', '.join(f'`{name}`' for name in candidates)}) `{ours}`. Paired bootstrap ({samples} resamples "
            "of the documents), one test per seed; ΔF1 = candidate − baseline in points.",
            table(test_header, tests),
        ]
    )


def write_evaluation(path: Path, results: Dict) -> None:
    write_json(path, results)


def merged_evaluations(paths: List[Path]) -> Dict:
    """The evaluations of ``evaluate`` run on some seeds or models each (e.g. in parallel), as one: their
    seeds and models joined; a model scored twice for one seed is a ValueError."""
    merged: Dict = {"seeds": [], "models": {}}
    for path in paths:
        part = json.loads(Path(path).read_text())
        merged["seeds"] = sorted(set(merged["seeds"]) | set(part["seeds"]))
        merged["pretrained"] = part["pretrained"]
        for name, by_seed in part["models"].items():
            known = merged["models"].setdefault(name, {})
            twice = set(known) & set(by_seed)
            if twice and name != MAPPED:  # the mapped ner, untrained, is the same in every file
                raise ValueError(f"{path}: {name} of seeds {sorted(twice)} is also in another evaluation file")
            known.update(by_seed)
    return merged


def write_report(evaluations: List[Path], output: Path, candidates: List[str], baselines: List[str]) -> None:
    write_file(output, report(merged_evaluations(evaluations), candidates, baselines) + "\n")
