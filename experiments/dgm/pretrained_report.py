"""The opening section of the DGM study's report: the models a spaCy user
chooses between when adding entity recognition to a pretrained pipeline
(the pretrained arms of ``models``), beside the same models on the
study's own parser's trees and on the gold trees: P/R/F (mean ± sd over the
seeds), each DGM model against spaCy's ner on the same encoder and trees
(paired bootstrap per seed, every seed's p), lattice coverage and spans per
token under each kind of trees, and words/s."""

from typing import Dict, List, Optional

from ..kit.seed_tests import ALPHA, seed_count, test_summary
from ..kit.seeds import seed_keys
from ..kit.tables import cell, mean_sd, p_value, seeds_caption, table
from .models import BY_NAME, PRETRAINED_ARMS, PRETRAINED_MODELS, TITLES, gold_trained

ENCODERS = {"": "own CNN tok2vec", "parser": "own CNN tok2vec", "tok2vec": "pretrained tok2vec, fine-tuned"}
TREES = {"given": "gold (UD)", "predicted": "own parser", "pretrained": "pretrained parser"}


def arm(name: str) -> str:
    """The pretrained arm of a model ("parser", "tok2vec"), "" for the study's own models."""
    return BY_NAME[name].pretrained


def model_title(name: str) -> str:
    base = gold_trained(name)
    return TITLES[base.replace("+dep", "")] + (" + dependency features" if base.endswith("+dep") else "")


def rows_of(evaluation: Dict, parser_uas: str) -> List[List]:
    """One row per (model, trees at test): the pretrained arms on their
    parser's trees, then the study's own models on their parser's and on the
    gold trees; then the pretrained pipeline's own ner, mapped."""
    seeds, models = seed_keys(evaluation["seeds"]), evaluation["models"]
    speed_seed = seeds[0]
    rows = []
    ordered = [m.name for m in PRETRAINED_MODELS if m.name in models] + [
        name for name in models if not arm(name) and not BY_NAME[name].jackknife
    ]
    for name in ordered:
        for trees in ("pretrained",) if arm(name) else ("predicted", "given"):
            by_seed = models[name]
            f = lambda split, k: mean_sd([by_seed[s][f"{split}_{trees}"][k] for s in seeds], 100)  # noqa: E731
            label = TREES[trees] + (f" (UAS {parser_uas})" if trees == "predicted" else "")
            rows.append(
                [
                    name,
                    model_title(name),
                    ENCODERS[arm(name)],
                    label,
                    f("dev", "f"),
                    f("test", "p"),
                    f("test", "r"),
                    f("test", "f"),
                    by_seed[speed_seed][f"test_{trees}"]["words_per_second"],
                ]
            )
    mapped = evaluation.get("pretrained_ner")
    if mapped:
        rows.append(
            [
                "pretrained ner, mapped",
                "the pretrained pipeline's own ner, no training",
                "pretrained",
                TREES["pretrained"],
                100 * mapped["dev"]["f"],
                100 * mapped["test"]["p"],
                100 * mapped["test"]["r"],
                100 * mapped["test"]["f"],
                mapped["test"]["words_per_second"],
            ]
        )
    return rows


def comparisons(evaluation: Dict) -> List[tuple]:
    """(model, ner of the same encoder and trees, trees): every entity model
    of the study that has spaCy's ner beside it."""
    models = evaluation["models"]
    pairs = []
    for name in models:
        suffix = PRETRAINED_ARMS.get(arm(name), "")
        reference = "ner" + suffix
        if gold_trained(name) == "ner" or reference not in models or BY_NAME[name].jackknife:
            continue
        for trees in ("pretrained",) if arm(name) else ("predicted", "given"):
            pairs.append((name, reference, trees))
    return pairs


def significance_rows(evaluation: Dict, samples: int) -> List[List]:
    """Each comparison of ``comparisons``: the F1 difference (mean ± sd), the
    seeds in which the model beats ner, every seed's p (paired bootstrap,
    one-sided in that seed's direction) and the seeds with p < ALPHA."""
    seeds = seed_keys(evaluation["seeds"])
    rows = []
    for a, b, trees in comparisons(evaluation):
        summary = test_summary(evaluation, a, b, f"test_{trees}", samples)
        rows.append(
            [
                f"{a} vs {b}",
                TREES[trees],
                mean_sd(summary["deltas"], 100),
                seed_count(summary["a_better"], len(seeds)),
                ", ".join(p_value(p) for p in summary["p_values"]),
                seed_count(summary["significant"], len(seeds)),
            ]
        )
    return rows


def coverage_rows(coverage: Dict) -> List[List]:
    """DGM-S and DGM coverage and spans per token on test under the gold
    trees, the own parsers' (mean ± sd over the seeds) and the pretrained parser's."""
    test = coverage["test"]
    seeds = list(test["predicted"])
    rows = []
    for lattice in ("dgm_s", "dgm"):
        row = [
            lattice,
            test["gold"]["coverage"][lattice],
            mean_sd([test["predicted"][s]["coverage"][lattice] for s in seeds]),
            test["pretrained"]["coverage"][lattice] if "pretrained" in test else None,
            test["gold"]["spans_per_token"][lattice],
            mean_sd([test["predicted"][s]["spans_per_token"][lattice] for s in seeds]),
            test["pretrained"]["spans_per_token"][lattice] if "pretrained" in test else None,
        ]
        rows.append(row)
    return rows


def pretrained_section(
    evaluation: Dict, coverage: Dict, pipeline: Optional[str], samples: int, own_models: bool = True
) -> str:
    """The report's opening section (markdown); ``own_models``: the run has the study's own models beside."""
    parser = evaluation["parser"]
    uas = cell(mean_sd([by_split["test"]["uas"] for by_split in parser.values()], 100))
    seeds = evaluation["seeds"]
    header = [
        "model",
        "family",
        "encoder",
        "trees at test",
        "dev F",
        "test P",
        "test R",
        "test F",
        f"words/s (test, seed {seed_keys(seeds)[0]})",
    ]
    mapping = evaluation.get("pretrained_ner", {}).get("mapping")
    mapped_line = (
        ""
        if not mapping
        else " The pretrained pipeline's own ner is scored with its types mapped, "
        + ", ".join(f"{k}→{v}" for k, v in mapping.items())
        + ", the others dropped."
    )
    return (
        f"The models a spaCy user chooses between when adding entity recognition to the pretrained pipeline "
        f"`{pipeline or '?'}`: NAME@pretrained reads that pipeline's trees (its parser sourced, frozen and annotating, so "
        f"the model trains and is tested on them) with the study's own CNN tok2vec; NAME@pretrained-tok2vec also shares "
        f"that pipeline's tok2vec, fine-tuned (the parser keeps its own copy). "
        + (
            "Beside them, the study's models trained on gold trees, tested on the trees of the study's own parser "
            f"(trained here, test UAS {uas}) and on the gold trees. "
            if own_models
            else ""
        )
        + f"The data keep their own tokens and sentences. {seeds_caption(seeds)} Words/s: one test pass while evaluating, "
        f"the pipeline's parser included for the pretrained arms.{mapped_line}\n\n"
        + table(header, rows_of(evaluation, uas))
        + f"\n\nEach model against spaCy's ner on the same encoder and trees, on test: paired bootstrap per seed "
        f"({samples} resamples of the test sentences, one-sided in the direction of that seed's difference), every "
        f"seed's p in seed order, and the seeds with p < {ALPHA}.\n\n"
        + table(
            [
                "comparison (test)",
                "trees",
                "F1 difference",
                "model higher (seeds)",
                "p per seed",
                f"seeds with p < {ALPHA}",
            ],
            significance_rows(evaluation, samples),
        )
        + "\n\nLattice coverage (percent of test entities that are candidate spans) and candidate spans per token under "
        "each kind of trees (own parsers: mean ± sd over the seeds).\n\n"
        + table(
            [
                "lattice",
                "coverage, gold trees",
                "coverage, own parser",
                "coverage, pretrained parser",
                "spans/token, gold",
                "spans/token, own parser",
                "spans/token, pretrained parser",
            ],
            coverage_rows(coverage),
        )
    )
