"""Significance tests over training seeds: a comparison of model A with
model B is tested once per seed (A of seed s against B of seed s, on the
same items), with a test of ``spacy_depner.evaluation.significance``, and
summarised by the LARGEST p-value over the seeds and the number of seeds
whose p-value is below ``ALPHA``.

The largest p is the conservative summary: max p < 0.05 says that every
seed's pair of models differs at the 5% level, whichever seed one had
trained. The tests do not say in which direction: a reader also needs the
number of seeds in which A scored higher (``a_better``), which is every
seed for a difference that does not depend on the seed."""

from typing import Callable, Dict, Mapping, Sequence, Tuple

import numpy as np

ALPHA = 0.05


def significance_per_seed(
    test: Callable, pairs: Mapping[str, Tuple[Sequence, Sequence]], **settings
) -> Dict[str, Dict]:
    """``test(a, b, **settings)`` (``paired_bootstrap`` or
    ``approximate_randomization``) for each seed's pair of (M, 3) count
    arrays ``pairs[seed] = (a, b)``; the results by seed."""
    return {seed: test(np.asarray(a), np.asarray(b), **settings) for seed, (a, b) in pairs.items()}


def over_seeds(results: Mapping[str, Dict]) -> Dict:
    """The summary of one comparison's per-seed test results (dicts with
    ``delta`` = F1(A) - F1(B) and ``p_value``): ``max_p`` (the largest
    p-value), ``significant`` (seeds with p < ALPHA), ``a_better`` (seeds
    with delta > 0), ``seeds`` (how many), and ``deltas`` / ``p_values``
    in the order of the seeds."""
    if not results:
        raise ValueError("no seed to summarise: test at least one seed's pair of models")
    p_values = [float(result["p_value"]) for result in results.values()]
    deltas = [float(result["delta"]) for result in results.values()]
    return {
        "seeds": len(results),
        "max_p": max(p_values),
        "significant": sum(p < ALPHA for p in p_values),
        "a_better": sum(delta > 0 for delta in deltas),
        "deltas": deltas,
        "p_values": p_values,
    }


def seed_count(count: int, seeds: int) -> str:
    """``count`` of ``seeds`` seeds as a cell: "2/3"."""
    return f"{count}/{seeds}"


def test_summary(evaluation: Dict, a: str, b: str, key: str, samples: int) -> Dict:
    """``over_seeds`` of a paired bootstrap (``samples`` resamples) per seed
    of model ``a`` against model ``b`` of an evaluation file
    (``{"seeds": [...], "models": {name: {seed: {key: {"sentence_counts": ...}}}}}``),
    on the per-sentence counts under ``key`` (e.g. "test_given")."""
    from spacy_depner.evaluation.significance import paired_bootstrap

    models = evaluation["models"]
    pairs = {
        str(s): (models[a][str(s)][key]["sentence_counts"], models[b][str(s)][key]["sentence_counts"])
        for s in evaluation["seeds"]
    }
    return over_seeds(significance_per_seed(paired_bootstrap, pairs, n_samples=samples))
