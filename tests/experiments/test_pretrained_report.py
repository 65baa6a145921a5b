"""The pretrained-first-stage report: each spaCy baseline in both units, the
best one chosen on dev (a run by sentence may win), and the targets stated
met or missed from the figures, not from the code's expectation."""

import numpy as np

from experiments.two_stage.pretrained_scores import BY_SENTENCE, MAPPED, report

SPLITS = ("dev", "test", "gum")


def run(tp: int, fp: int, fn: int, documents: int = 40, seed: int = 0) -> dict:
    """Scores of a model whose documents have about (tp, fp, fn) entities each, by document."""
    rng = np.random.default_rng(seed)
    counts = np.maximum(0, np.array([tp, fp, fn])[None, :] + rng.integers(-1, 2, size=(documents, 3)))
    total_tp, total_fp, total_fn = counts.sum(axis=0)
    p, r = total_tp / (total_tp + total_fp), total_tp / (total_tp + total_fn)
    return {"f": 2 * p * r / (p + r), "p": p, "r": r, "words_per_second": 1000.0, "sentence_counts": counts.tolist()}


def model(by_split: dict, seeds=(0, 1, 2)) -> dict:
    return {str(seed): {split: run(*by_split[split], seed=seed + 7) for split in SPLITS} for seed in seeds}


def results(ours_test: tuple, ours_gum: tuple) -> dict:
    weak, strong = {s: (6, 4, 4) for s in SPLITS}, {s: (7, 3, 3) for s in SPLITS}
    return {
        "seeds": [0, 1, 2],
        "pretrained": "en_core_web_sm",
        "models": {
            "ner_sourced_sentences": model(weak),
            "ner_sourced_sentences" + BY_SENTENCE: model(strong),  # better run by sentence
            MAPPED: model({"dev": (3, 7, 7), "test": (3, 7, 7), "gum": (8, 2, 2)}),
            MAPPED + BY_SENTENCE: model({"dev": (3, 8, 7), "test": (3, 8, 7), "gum": (8, 2, 3)}),
            "two_stage_sentences": model({"dev": (9, 1, 1), "test": ours_test, "gum": ours_gum}),
        },
    }


def test_the_baseline_is_chosen_on_dev_across_units_and_the_targets_follow_the_figures():
    page = report(results((9, 1, 1), (9, 1, 1)), ["two_stage_sentences"], ["ner_sourced_sentences"], samples=200)
    assert "the best spaCy baseline `ner_sourced_sentences_by_sentence`" in page
    assert "| ner_sourced_sentences_by_sentence |" in page and "| sentence |" in page
    assert "two_stage_sentences vs ner_sourced_sentences_by_sentence" in page
    assert "in 2 of 3: **met**" in page and "at least as high: **met**" in page
    # no better than the baseline in domain, below the mapped ner out of domain: both missed
    page = report(results((7, 3, 3), (6, 4, 4)), ["two_stage_sentences"], ["ner_sourced_sentences"], samples=200)
    assert "in 2 of 3: **missed**" in page and "at least as high: **missed**" in page
    assert f"the best baseline there, `{MAPPED}`" in page


def test_gum_minimal_spans_are_a_column_and_a_comparison_only_where_every_run_has_them():
    scored = results((9, 1, 1), (6, 4, 4))
    page = report(scored, ["two_stage_sentences"], ["ner_sourced_sentences"], samples=200)
    assert "minimal spans" not in page.split("\n\n")[2]  # the table: no run was scored on them
    for name, by_seed in scored["models"].items():
        for seed, runs in by_seed.items():
            runs["gum_minspan"] = run(9, 1, 1) if name == "two_stage_sentences" else run(5, 5, 5)
    page = report(scored, ["two_stage_sentences"], ["ner_sourced_sentences"], samples=200)
    table_text, comparisons = page.split("\n\n")[2], page.split("\n\n")[4]
    assert "| dev F | test F | GUM test F | GUM minimal spans F |" in table_text.splitlines()[0]
    assert any("GUM test, minimal spans" in line and "| 3/3 |" in line for line in comparisons.splitlines())
    assert "at least as high: **missed**" in page  # the target stays the whole mentions' figure
    assert "On GUM's minimal spans (not a target): `two_stage_sentences`" in page
