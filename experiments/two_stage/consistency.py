"""Where the two-stage model (Krishnan & Manning 2006) can gain: how often a
corpus repeats its entities, and how much of the first stage's error its
non-local evidence could correct, by counting, without training.

A document is ``(tokens, spans)``: token texts and entities as
``(start, end_exclusive, label)`` (as in ``spacy_depner.ml.majority_labels``);
texts are compared lowercased, as the features do.

- ``repetition``: of the gold mentions of a split, the share whose lowercased
  text is another gold mention of the same document, and of those the share
  whose other occurrences' majority label is its own; the same against the
  training corpus's gold mentions.
- ``consistency_bound``: the first stage's errors that *document consistency
  could fix*. An error is a missed gold mention g or a predicted span p that is
  not gold. Every other occurrence of the error's text in the document (the
  same lowercased token sequence elsewhere) votes with the label the *voters*
  give that exact span (O if none); a missed g is fixable when that majority is
  g's label, a wrong p when the majority is not p's label (a tie fixes
  nothing). Voters ``gold``: the *oracle first stage*, every other occurrence
  labelled right; it bounds what any evidence from other occurrences can give.
  Voters ``first``: the first stage's own output, what the document-level
  features actually carry. Both bounds assume a second stage that knows when to
  trust the vote; the real one can only do worse.

The oracle cannot be had by training the second stage on gold first-stage
entities: the entity-majority feature of a mention counts the mention's own
label (module docstring of ``majority_labels``), so gold input gives away the
answer. The bound leaves each occurrence's own label out instead.

- ``feature_agreement``: on the tokens where the first stage's label (of the
  entity covering the token, or O) is wrong, the share whose document
  entity-majority feature (``nonlocal_features`` column 1, from the first
  stage's spans) names the gold label; on the tokens where it is right, the
  share where the feature names another label. Measured on train (each
  document labelled by the fold model that did not see it, what the second
  stage learns from) and on test (by the first stage trained on all of train),
  it shows whether the training features are as reliable as the test ones.
"""

from collections import Counter
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from spacy_depner.evaluation.metrics import prf
from spacy_depner.ml.majority_labels import nonlocal_features

Span = Tuple[int, int, str]
Document = Tuple[Sequence[str], Sequence[Span]]
OUTSIDE = "O"


def lowered(tokens: Sequence[str]) -> List[str]:
    return [text.lower() for text in tokens]


def occurrences(words: Sequence[str], start: int, end: int) -> List[int]:
    """Starts of every occurrence of ``words[start:end]`` in ``words`` other than the one at ``start``."""
    key, width = list(words[start:end]), end - start
    first = key[0]
    return [
        i
        for i in range(len(words) - width + 1)
        if i != start and words[i] == first and list(words[i : i + width]) == key
    ]


def majority_vote(votes: Iterable[str]) -> Optional[str]:
    """The most frequent vote, None for no vote or a tie for first place."""
    ranked = Counter(votes).most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def _labels_at(spans: Sequence[Span]) -> Dict[Tuple[int, int], str]:
    return {(start, end): label for start, end, label in spans}


def repetition(gold: Sequence[Document], training: Sequence[Document] = ()) -> Dict[str, float]:
    """Mentions of ``gold`` repeated as gold mentions in their own document and
    in ``training``'s gold mentions; shares of all mentions, and label agreement
    (the majority label of the other occurrences is the mention's) of the repeated."""
    seen: Dict[str, Counter] = {}
    for tokens, spans in training:
        words = lowered(tokens)
        for start, end, label in spans:
            seen.setdefault(" ".join(words[start:end]), Counter())[label] += 1
    mentions = in_document = agree_document = in_training = agree_training = 0
    for tokens, spans in gold:
        words = lowered(tokens)
        by_text: Dict[str, List[Span]] = {}
        for span in spans:
            by_text.setdefault(" ".join(words[span[0] : span[1]]), []).append(span)
        for text, same in by_text.items():
            for span in same:
                mentions += 1
                others = [other[2] for other in same if other is not span]
                if others:
                    in_document += 1
                    agree_document += majority_vote(others) == span[2]
                if text in seen:
                    in_training += 1
                    agree_training += majority_vote(seen[text].elements()) == span[2]
    return {
        "mentions": mentions,
        "repeated_in_document": _share(in_document, mentions),
        "same_label_in_document": _share(agree_document, in_document),
        "seen_in_training": _share(in_training, mentions),
        "same_label_in_training": _share(agree_training, in_training),
    }


def consistency_bound(gold: Sequence[Document], predicted: Sequence[Document], voters: str) -> Dict:
    """(TP, FP, FN) of the first stage, and of its output with every error
    fixable by document consistency fixed (module docstring), voters ``gold`` or ``first``."""
    if voters not in ("gold", "first"):
        raise ValueError(f"voters must be 'gold' or 'first', not {voters!r}")
    first = np.zeros(3, dtype=np.int64)
    fixed = np.zeros(3, dtype=np.int64)
    fixable = {"missed": 0, "wrong": 0}
    for (tokens, gold_spans), (_, predicted_spans) in zip(gold, predicted):
        words = lowered(tokens)
        gold_set, predicted_set = set(map(tuple, gold_spans)), set(map(tuple, predicted_spans))
        labels_at = _labels_at(gold_spans if voters == "gold" else predicted_spans)

        def vote(start: int, end: int) -> Optional[str]:
            width = end - start
            return majority_vote(labels_at.get((i, i + width), OUTSIDE) for i in occurrences(words, start, end))

        missed = {g for g in gold_set - predicted_set if vote(g[0], g[1]) == g[2]}
        wrong = {p for p in predicted_set - gold_set if vote(p[0], p[1]) not in (None, p[2])}
        fixable["missed"] += len(missed)
        fixable["wrong"] += len(wrong)
        corrected = (predicted_set - wrong) | missed
        for counts, output in ((first, predicted_set), (fixed, corrected)):
            tp = len(output & gold_set)
            counts += (tp, len(output) - tp, len(gold_set) - tp)
    return {
        "voters": voters,
        "first_stage": _prf(first),
        "bound": _prf(fixed),
        "fixable_missed": fixable["missed"],
        "fixable_wrong": fixable["wrong"],
        "errors": int(first[1] + first[2]),
    }


def token_labels(n_tokens: int, spans: Sequence[Span]) -> np.ndarray:
    """(n,) object: the label of the longest span covering each token (first start on ties), O outside."""
    out = np.full(n_tokens, OUTSIDE, dtype=object)
    for start, end, label in sorted(spans, key=lambda span: (span[1] - span[0], -span[0])):
        out[start:end] = label
    return out


def feature_agreement(gold: Sequence[Document], predicted: Sequence[Document], labels: Sequence[str]) -> Dict:
    """On tokens the first stage labels wrong: share whose document entity-majority
    feature names the gold label, and share for which any of the three document
    features (token-, entity-, superentity-majority) does; on tokens it labels
    right: share whose entity-majority feature names another label (0, "no
    feature", names none). Module docstring."""
    names = np.array([OUTSIDE, *labels], dtype=object)
    wrong = wrong_fixed = any_fixed = right = right_misled = 0
    for (tokens, gold_spans), (_, predicted_spans) in zip(gold, predicted):
        spans = [span for span in predicted_spans if span[2] in labels]
        features = nonlocal_features(list(tokens), spans, labels)[:, :3]
        truth = token_labels(len(tokens), gold_spans)
        guess = token_labels(len(tokens), spans)
        names_gold = (features > 0) & (names[features] == truth[:, None])
        feature, is_wrong = features[:, 1], truth != guess
        wrong += int(is_wrong.sum())
        wrong_fixed += int((is_wrong & names_gold[:, 1]).sum())
        any_fixed += int((is_wrong & names_gold.any(axis=1)).sum())
        right += int((~is_wrong).sum())
        right_misled += int((~is_wrong & (feature > 0) & (names[feature] != truth)).sum())
    return {
        "wrong_tokens": wrong,
        "feature_names_gold_where_wrong": _share(wrong_fixed, wrong),
        "any_document_feature_names_gold_where_wrong": _share(any_fixed, wrong),
        "right_tokens": right,
        "feature_names_other_where_right": _share(right_misled, right),
    }


def _share(part: int, whole: int) -> Optional[float]:
    return round(part / whole, 4) if whole else None


def _prf(counts: np.ndarray) -> Dict[str, float]:
    return prf(*(int(v) for v in counts))


def measures(
    gold: Dict[str, List[Document]], first: Dict[int, Dict[str, List[Document]]], labels: Sequence[str]
) -> Dict:
    """Every measure of a corpus: ``gold`` documents of train and of the
    evaluated split (``"train"``, ``"split"``), ``first`` the first stage's
    documents by seed and split (may be empty: repetition only)."""
    result: Dict = {"repetition": repetition(gold["split"], gold["train"]), "seeds": {}}
    for seed, by_split in first.items():
        result["seeds"][str(seed)] = {
            "bound": {
                voters: consistency_bound(gold["split"], by_split["split"], voters) for voters in ("gold", "first")
            },
            "first_stage_train_cross_validated": consistency_bound(gold["train"], by_split["train"], "first")[
                "first_stage"
            ],
            "feature_agreement": {
                name: feature_agreement(gold[name], by_split[name], labels) for name in ("train", "split")
            },
        }
    return result


def report_section(results: Sequence[Dict]) -> str:
    """Markdown of ``consistency`` results (one per corpus and split): repetition, and per corpus the bounds
    and feature agreement as mean ± sd over the seeds."""
    from ..kit.tables import mean_sd, table

    repeated = [
        [r["corpus"], r["split"], r["repetition"]["mentions"]]
        + [mean_sd([r["repetition"][key]], 100) for key in REPETITION_COLUMNS]
        for r in results
    ]
    rows = []
    for r in results:
        seeds = list(r["seeds"].values())
        if not seeds:
            continue

        def over(get):
            return mean_sd([get(s) for s in seeds], 100)

        rows.append(
            [
                r["corpus"],
                r["split"],
                ", ".join(r["seeds"]),
                over(lambda s: s["first_stage_train_cross_validated"]["f"]),
                over(lambda s: s["bound"]["first"]["first_stage"]["f"]),
                over(lambda s: s["bound"]["first"]["bound"]["f"]),
                over(lambda s: s["bound"]["gold"]["bound"]["f"]),
                over(
                    lambda s: _share(
                        s["bound"]["gold"]["fixable_missed"] + s["bound"]["gold"]["fixable_wrong"],
                        s["bound"]["gold"]["errors"],
                    )
                ),
                over(lambda s: s["feature_agreement"]["train"]["feature_names_gold_where_wrong"]),
                over(lambda s: s["feature_agreement"]["split"]["feature_names_gold_where_wrong"]),
                over(lambda s: s["feature_agreement"]["train"]["any_document_feature_names_gold_where_wrong"]),
                over(lambda s: s["feature_agreement"]["split"]["any_document_feature_names_gold_where_wrong"]),
                over(lambda s: s["feature_agreement"]["train"]["feature_names_other_where_right"]),
                over(lambda s: s["feature_agreement"]["split"]["feature_names_other_where_right"]),
            ]
        )
    parts = [
        "## Where the second stage can gain",
        "Counted without training (`python -m experiments two-stage consistency`; definitions in "
        "experiments/two_stage/consistency.py). Repetition: shares (%) of the split's gold mentions whose "
        "lowercased text is another gold mention of the same document, of those the share whose other "
        "occurrences' majority label is theirs, and the same against the training corpus's gold mentions.",
        table(["corpus", "split", "mentions", *REPETITION_HEADERS], repeated),
    ]
    if rows:
        parts += [
            "Bounds (F1 %): the first stage's output with every error fixed that the majority label of the error "
            "text's other occurrences in its document would fix, the other occurrences labelled by the first "
            "stage itself (what the document features carry) or by the gold annotation (the oracle first stage: "
            "its own label left out, as training on gold input would give it away). Feature agreement (%): on "
            "tokens the first stage labels wrong, the share whose document entity-majority feature names the gold "
            "label, and the share for which any document feature (token-, entity-, superentity-majority) does; on tokens it labels right, the share whose feature names another label; train documents "
            "are labelled by the fold model that did not see them, as the second stage learns from them.",
            table(
                [
                    "corpus",
                    "split",
                    "seeds",
                    "first F train (cross-validated)",
                    "first F",
                    "bound, first-stage votes",
                    "bound, oracle votes",
                    "errors fixable by oracle votes",
                    "entity feature names gold where wrong, train",
                    "same, split",
                    "any document feature names gold where wrong, train",
                    "same, split",
                    "feature misleads where right, train",
                    "same, split",
                ],
                rows,
            ),
        ]
        parts += [reading(r) for r in results if r["seeds"]]
    return "\n\n".join(parts)


def seed_mean(result: Dict, get) -> Optional[float]:
    """The mean over a consistency result's seeds of ``get(seed's result)``, in
    percent; None when some seed has none."""
    values = [get(s) for s in result["seeds"].values()]
    return None if None in values else 100 * float(np.mean(values))


def reading(result: Dict) -> str:
    """What the counts of one corpus say about the second stage, in words (means over its seeds)."""

    def mean(get) -> Optional[float]:
        return seed_mean(result, get)

    first = mean(lambda s: s["bound"]["first"]["first_stage"]["f"])
    recall = mean(lambda s: s["bound"]["first"]["first_stage"]["r"])
    own = mean(lambda s: s["bound"]["first"]["bound"]["f"])
    oracle = mean(lambda s: s["bound"]["gold"]["bound"]["f"])
    entity = mean(lambda s: s["feature_agreement"]["split"]["feature_names_gold_where_wrong"])
    any_feature = mean(lambda s: s["feature_agreement"]["split"]["any_document_feature_names_gold_where_wrong"])
    train = mean(lambda s: s["first_stage_train_cross_validated"]["f"])
    folds = f"{result['folds']} folds" if result.get("folds") else "its folds"
    if entity is None or any_feature is None:
        features = "In some seed the first stage labels no token wrong here, so the features have nothing to fix. "
    else:
        features = (
            "The second stage sees it through the majority features only, and on the tokens the first stage labels "
            f"wrong the entity-majority feature names the gold label for {entity:.1f}% of them (any document "
            f"feature: {any_feature:.1f}%)"
            + (
                ": a token the first stage missed counts as O in its own vote and in the votes of the other "
                "occurrences it also missed, so the features seldom point to the fix. "
                if any_feature < 25
                else ". "
            )
        )
    return (
        f"Reading ({result['corpus']}, {result['split']}): the first stage's F1 is {first:.2f} (recall {recall:.2f}). "
        f"Fixing every error whose text recurs in its document by the majority of its other occurrences would "
        f"give at most {own:.2f} ({own - first:+.2f}) with the first stage's own labels there, and {oracle:.2f} "
        f"({oracle - first:+.2f}) with gold labels there (the oracle first stage): the ceiling of document "
        "consistency. "
        + features
        + f"On train the cross-validated first stage ({folds}, each fold's model trained on the rest) scores "
        f"{train:.2f}, "
        + (
            f"{first - train:.2f} below its score here: the second stage learns how far to trust the features "
            "from output noisier than the one it meets at test."
            if train < first
            else f"{train - first:.2f} above its score here."
        )
    )


GAIN_SOUGHT = 0.5  # F1 points over the first stage that the second stage is meant to add


def gain_reading(deltas: Sequence[Tuple[str, str, str, float]], results: Sequence[Dict]) -> List[str]:
    """Per corpus with dev and test rows: the variant (votes, corpus counts)
    with the largest mean dev gain, its test gain against ``GAIN_SOUGHT``,
    and the room the bound with the first stage's own votes leaves on test.
    ``deltas``: (corpus, split, variant, mean F1 gain in points) per
    evaluation; ``results``: the consistency results (``reading``'s)."""
    readings = []
    for corpus in dict.fromkeys(corpus for corpus, *_ in deltas):
        gains = {split: {v: d for c, s, v, d in deltas if c == corpus and s == split} for split in ("dev", "test")}
        shared = [variant for variant in gains["dev"] if variant in gains["test"]]
        if not shared:
            continue
        chosen = max(shared, key=gains["dev"].get)
        test = gains["test"][chosen]
        others = ", ".join(f"{v} {d:+.2f}" for v, d in gains["test"].items() if v != chosen)
        verdict = f"{GAIN_SOUGHT - test:.2f} short of" if test < GAIN_SOUGHT else "at least"
        text = (
            f"Gain ({corpus}): chosen on dev, {chosen} (dev {gains['dev'][chosen]:+.2f}); on test "
            f"{test:+.2f} F1 over the first stage, {verdict} the +{GAIN_SOUGHT} sought"
            + (f" (the other variants on test: {others})" if others else "")
            + "."
        )
        bounds = [r for r in results if r["corpus"] == corpus and r["split"] == "test"]
        if bounds:
            room = seed_mean(
                bounds[0], lambda s: s["bound"]["first"]["bound"]["f"] - s["bound"]["first"]["first_stage"]["f"]
            )
            text += (
                f" Document consistency leaves room for at most {room:+.2f} with the first stage's own votes "
                f"(bounds below): the features reach the fix for few of the errors, as the reading below says."
            )
        readings.append(text)
    return readings


REPETITION_COLUMNS = ("repeated_in_document", "same_label_in_document", "seen_in_training", "same_label_in_training")
REPETITION_HEADERS = (
    "repeated in its document",
    "same label there",
    "seen in training",
    "same label in training",
)
