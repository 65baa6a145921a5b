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
from typing import Dict, List, Tuple

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
    "gum_minspan": "GUM test, minimal spans (out of domain)",
}
COLUMNS = {"dev": "dev", "test": "test", "gum": "GUM test", "gum_minspan": "GUM minimal spans"}  # table headings
GUM_EXTENTS = {"gum": "mention", "gum_minspan": "minspan"}  # what a GUM reference entity covers
TRAINED_CANDIDATES = (
    "two_stage_ner_tok2vec",
    "two_stage_stacked",
    "two_stage_loo",
    "two_stage_stacked_loo",
    "two_stage_sentences",
    "two_stage_sentences_dropout",
    "two_stage_trained",
    "two_stage_shared",
    "two_stage_sentences_shared",
    "two_stage_shared_window",
    "two_stage_sentences_shared_window",
    "two_stage_sentences_shared_window2",
    "two_stage_pretrained_window",
    "two_stage_sentences_shared_window_other_types",
)  # this project's, trained
POSTERIOR = "_posterior"  # a trained model's name + this: the same model, its posterior penalty tuned on dev
MAPPED = "sm_ner_mapped"  # the pipeline's own ner, mapped, no training
BY_SENTENCE = "_by_sentence"  # a baseline's name + this: the same pipeline run on one Doc per sentence
SPACY_BASELINES = ("ner", "ner_sourced", "ner_sourced_sentences", MAPPED)  # each scored in both units
TITLES = {
    "ner": "spaCy ner from scratch on the pipeline's tok2vec",
    "ner_sourced": "spaCy ner sourced from the pipeline, fine-tuned",
    "ner_sourced_sentences": "the same, trained on one Doc per sentence",
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
    "two_stage_sentences": "two_stage_stacked_loo whose two first stages run one sentence at a time (sentence_ner), "
    "in the cross-validated records and at run time",
    "two_stage_sentences_dropout": "two_stage_sentences, each first stage's features dropped for a training "
    "document with probability 0.2",
    "two_stage_trained": "two_stage_sentences without the pipeline's own ner: its trained first stage alone",
    "two_stage_shared": "two_stage_trained whose chain_ner reads the pipeline's own tok2vec (frozen), not one of "
    "its own",
    "two_stage_sentences_shared": "two_stage_sentences whose chain_ner reads the pipeline's own tok2vec (frozen), "
    "not one of its own",
    "two_stage_shared_window": "two_stage_shared, a trained window layer (spaCy's MaxoutWindowEncoder, one "
    "word each side) over its features",
    "two_stage_sentences_shared_window": "two_stage_sentences_shared, a trained window layer (spaCy's "
    "MaxoutWindowEncoder, one word each side) over its features",
    "two_stage_sentences_shared_window2": "two_stage_sentences_shared_window with two window layers",
    "two_stage_pretrained_window": "two_stage_shared_window over the pipeline's own ner (run on documents) instead "
    "of the trained first stage: one ner, nothing cross-validated",
    "two_stage_sentences_shared_window_other_types": "two_stage_sentences_shared_window whose features of the "
    "pipeline's own ner count only its types that UNER's PER, ORG and LOC do not cover (dates, numbers, NORP, ...)",
}
TITLES.update({f"{name}{BY_SENTENCE}": f"{TITLES[name]}; run on one Doc per sentence" for name in SPACY_BASELINES})


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

    if split in GUM_EXTENTS:
        path = data / "ud_gum" / "en_gum-ud-test.conllu"
        examples = gum_named_examples(vocab, path, "predicted", extent=GUM_EXTENTS[split])
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


def pipeline_scores(nlp, data: Path, unit: str = "document") -> Dict:
    """``score_by_unit`` of ``nlp`` on every split of SPLITS, run on whole
    documents or one Doc per sentence (``unit``), counts by document: {split: scores}."""
    from spacy_depner.evaluation.scoring_units import score_by_unit

    scores = {}
    for split in SPLITS:
        examples = split_examples(nlp.vocab, data, split)
        scores[split] = score_by_unit(nlp, [eg.reference for eg in examples], [eg.predicted for eg in examples], unit)
    return scores


def evaluate_study(models: Path, data: Path, pretrained: str, seeds: List[int], names: List[str]) -> Dict:
    """The scores of every model of every seed (OUTPUT/seed_<s>/<model>/model-best) and of the
    pretrained pipeline's own ner mapped: {"seeds", "models": {name: {seed: {split: scores}}}}."""
    import spacy

    results: Dict = {"seeds": seeds, "pretrained": pretrained, "models": {}}
    for name in names:
        for unit in ("document", "sentence") if name in SPACY_BASELINES else ("document",):
            results["models"][name + (BY_SENTENCE if unit == "sentence" else "")] = {
                str(seed): pipeline_scores(spacy.load(models / f"seed_{seed}" / name / "model-best"), data, unit)
                for seed in seeds
            }
    for unit in ("document", "sentence"):
        mapped = pipeline_scores(MappedEntities(spacy.load(pretrained)), data, unit)
        name = MAPPED + (BY_SENTENCE if unit == "sentence" else "")
        results["models"][name] = {str(seed): mapped for seed in seeds}  # no training: the same for every seed
    return results


def mean_f(results: Dict, name: str, split: str) -> float:
    """The F1 of model ``name`` on ``split``, mean over the seeds."""
    seeds = [str(seed) for seed in results["seeds"]]
    return sum(results["models"][name][seed][split]["f"] for seed in seeds) / len(seeds)


def best_on_dev(results: Dict, names: List[str]) -> str:
    """The model of the highest mean F1 on EWT dev (chosen on dev)."""
    return max(names, key=lambda name: mean_f(results, name, "dev"))


def unit_of(name: str) -> str:
    return "sentence" if name.endswith(BY_SENTENCE) else "document"


def scored_on(results: Dict, names: List[str], split: str) -> bool:
    """Whether every seed of every model of ``names`` was scored on ``split``."""
    return all(split in results["models"][name][str(seed)] for name in names for seed in results["seeds"])


def against_best(results: Dict, ours: str, baselines: List[str], split: str) -> Tuple[str, float, float]:
    """The baseline of the highest mean F1 on ``split`` (of ``baselines``), ``ours``'s mean F1 and its."""
    best = max(baselines, key=lambda name: mean_f(results, name, split))
    return best, mean_f(results, ours, split), mean_f(results, best, split)


def targets(results: Dict, ours: str, baseline: str, baselines: List[str], samples: int) -> str:
    """The study's two targets, met or missed: on EWT test the pipeline
    chosen on dev at least 1.5 F1 above the baseline chosen on dev, p < 0.05
    in two seeds of three; on GUM at least the best of every baseline there."""
    summary = test_summary(results, ours, baseline, "test", samples)
    delta = sum(summary["deltas"]) / len(summary["deltas"])
    significant = summary["significant"]
    in_domain = delta >= 0.015 and significant >= 2
    gum_best, gum, gum_baseline = against_best(results, ours, baselines, "gum")
    minimal = ""
    if scored_on(results, [ours, *baselines], "gum_minspan"):
        best, ours_minimal, best_minimal = against_best(results, ours, baselines, "gum_minspan")
        minimal = (
            f" On GUM's minimal spans (not a target): `{ours}` {ours_minimal * 100:.2f} against the best baseline "
            f"there, `{best}`, {best_minimal * 100:.2f} ({(ours_minimal - best_minimal) * 100:+.2f})."
        )
    return (
        f"Targets. EWT test: `{ours}` − `{baseline}` = {delta * 100:+.2f} F1 (mean over the seeds), "
        f"p < 0.05 in {significant}/{len(summary['deltas'])} seeds; sought +1.50 in 2 of 3: "
        f"**{'met' if in_domain else 'missed'}**. GUM (out of domain): `{ours}` {gum * 100:.2f} against the best "
        f"baseline there, `{gum_best}`, {gum_baseline * 100:.2f} ({(gum - gum_baseline) * 100:+.2f}); sought at "
        f"least as high: **{'met' if gum >= gum_baseline else 'missed'}**.{minimal}"
    )


def report(results: Dict, candidates: List[str], baselines: List[str], samples: int = 1000) -> str:
    """The results page: F1 (P, R) per model and split, mean ± sd over the
    seeds, each spaCy baseline run on whole documents and on one Doc per
    sentence (``<name>_by_sentence``), this project's pipelines on documents;
    the paired bootstrap (over documents) of each of ``candidates`` against
    the trained baseline best on dev and the mapped ner best on dev; the targets."""
    seeds = results["seeds"]
    complete = {name for name, by_seed in results["models"].items() if all(str(s) in by_seed for s in seeds)}
    candidates = [name for name in candidates if name in complete]
    if not candidates:
        raise ValueError(f"no candidate scored for every seed {seeds}: score one with `evaluate --models-trained`")
    trained = [name for base in baselines for name in (base, base + BY_SENTENCE) if name in complete]
    mapped = [name for name in (MAPPED, MAPPED + BY_SENTENCE) if name in complete]
    if not trained or not mapped:
        raise ValueError("the evaluation holds no trained spaCy baseline or no mapped ner: score them with `evaluate`")
    names = [*trained, *mapped, *candidates]
    names += [name for name in results["models"] if name not in names and name in complete]
    splits = [split for split in SPLITS if scored_on(results, names, split)]
    rows = []
    for name in names:
        runs = [results["models"][name][str(seed)] for seed in seeds]
        rows.append(
            [
                name,
                TITLES.get(name, name),
                unit_of(name),
                *[mean_sd([run[split]["f"] for run in runs], 100) for split in splits],
                mean_sd([run["test"]["p"] for run in runs], 100),
                mean_sd([run["test"]["r"] for run in runs], 100),
                mean_sd([run["test"]["words_per_second"] for run in runs]),
            ]
        )
    header = ["model", "what", "unit", *[f"{COLUMNS[split]} F" for split in splits], "test P", "test R", "words/s"]
    chosen, chosen_mapped, ours = (
        best_on_dev(results, trained),
        best_on_dev(results, mapped),
        best_on_dev(results, candidates),
    )
    tests = []
    for candidate, baseline in [(c, b) for c in candidates for b in (chosen, chosen_mapped)]:
        for split in splits:
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
    return "\n\n".join(
        [
            "# Flat entities over a pretrained pipeline: the two-stage model against spaCy's baselines",
            f"Measured {machine()}. {seeds_caption(seeds)} Pipeline: `{results['pretrained']}` (its parser's "
            "trees, its tok2vec, its ner). Every trained model has the same recipe and step budget "
            "(`python -m experiments pretrained-first-stage train`). Every F1 is spaCy's rule (exact boundaries "
            "and label) on the same reference Docs with the data's own tokens, in percent, mean ± sample "
            "standard deviation over the seeds. Unit: each spaCy baseline runs on whole documents (the data's "
            "sentence starts) and, as `<name>_by_sentence`, on one Doc per sentence, which is what "
            "`spacy evaluate --gold-preproc` does with a DocBin of one sentence per Doc; this project's "
            "pipelines run on whole documents, as their docs tell a user to run them. Dev and test: UNER "
            "English-EWT; GUM test: UD English-GUM's named person, organization and place mentions as PER, ORG, "
            "LOC (out of domain); GUM's reference entities are its whole mentions (determiners, modifiers, appositions and "
            'relative clauses included: "the Berlin music critic Louis Ehlert"), and, in "minimal spans", each '
            'mention\'s minimal span (GUM\'s minspan: "Western United States" of "the Western United States"), '
            "closer to what an ner marks. words/s: the test pass of the evaluation, the whole pipeline (parser and "
            "first stages included), one process, beside other work on the 2 cores (noisy; the speed page has "
            "the quiet comparison). Every run here reads the data's tokens and sentence starts; on raw text, "
            "with the tokenizer's tokens and the parser's sentences (`spacy evaluate` without `--gold-preproc` "
            "on a DocBin of documents), every pipeline scores lower, the two-stage ones, whose first stages run "
            "on those sentences, by several points.",
            table(header, rows),
            f"Chosen on EWT dev: the best spaCy baseline `{chosen}` (of {', '.join(f'`{n}`' for n in trained)}), "
            f"the best unit of the mapped ner `{chosen_mapped}`, and of this project's pipelines "
            f"({', '.join(f'`{name}`' for name in candidates)}) `{ours}`. Paired bootstrap ({samples} resamples "
            "of the documents; a run by sentence counts each document's sentences together), one test per seed; "
            "ΔF1 = candidate − baseline in points.",
            table(test_header, tests),
            targets(results, ours, chosen, [*trained, *mapped], samples),
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
            if twice and not name.startswith(MAPPED):  # the mapped ner, untrained, is the same in every file
                raise ValueError(f"{path}: {name} of seeds {sorted(twice)} is also in another evaluation file")
            known.update(by_seed)
    return merged


def write_report(evaluations: List[Path], output: Path, candidates: List[str], baselines: List[str]) -> None:
    write_file(output, report(merged_evaluations(evaluations), candidates, baselines) + "\n")
