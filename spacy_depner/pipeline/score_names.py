"""The names of the span scores of the nested components in training logs.

spaCy's console logger cuts a column name longer than 13 characters to its
first 10 and "...", so ``spans_nested_ner_p``, ``_r`` and ``_f`` would all
read SPANS_NEST...; names that start with the metric stay apart when cut:
``p_KEY``, ``r_KEY``, ``f_KEY``. The nested scorer
(``evaluation/scorers.py``) reports the scores under both names."""

from typing import Dict

LOGGED_METRICS = ("f", "p", "r")


def log_keys(spans_key: str) -> Dict[str, str]:
    """The short name of each of ``spans_{key}_p``, ``_r``, ``_f``: ``p_{key}``, ``r_{key}``, ``f_{key}``."""
    return {f"spans_{spans_key}_{metric}": f"{metric}_{spans_key}" for metric in LOGGED_METRICS}


def nested_score_weights(spans_key: str) -> Dict[str, float]:
    """Score weights of a nested component writing ``doc.spans[spans_key]``:
    its F1 (the short names of ``log_keys``), with P and R shown, not weighted."""
    return {short: 1.0 if short.startswith("f_") else 0.0 for short in log_keys(spans_key).values()}
