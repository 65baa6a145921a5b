"""The two-stage consistency counts on documents small enough to count by hand."""

import pytest

from experiments.two_stage.consistency import (
    consistency_bound,
    feature_agreement,
    majority_vote,
    occurrences,
    repetition,
    token_labels,
)


def test_occurrences_are_the_other_starts_of_the_same_sequence():
    words = ["a", "b", "a", "b", "a"]
    assert occurrences(words, 0, 2) == [2]
    assert occurrences(words, 2, 3) == [0, 4]
    assert occurrences(words, 1, 3) == [3]  # "b a" at 1 and 3
    assert occurrences(words, 3, 5) == [1]


def test_a_tie_for_first_place_is_no_majority():
    assert majority_vote(["ORG", "O"]) is None
    assert majority_vote([]) is None
    assert majority_vote(["ORG", "O", "ORG"]) == "ORG"


def test_repetition_counts_mentions_repeated_in_their_document_and_in_training():
    gold = [
        (["Paris", "is", "in", "paris", "and", "Acme"], [(0, 1, "LOC"), (3, 4, "LOC"), (5, 6, "ORG")]),
        (["Paris", "Hilton"], [(0, 2, "PER")]),
    ]
    training = [(["Acme", "Paris"], [(0, 1, "PER"), (1, 2, "LOC")])]
    result = repetition(gold, training)
    assert result["mentions"] == 4
    assert result["repeated_in_document"] == 0.5  # the two "paris" of the first document
    assert result["same_label_in_document"] == 1.0
    assert result["seen_in_training"] == 0.75  # paris, paris, acme; not "paris hilton"
    assert result["same_label_in_training"] == pytest.approx(2 / 3, abs=1e-4)  # acme is PER in training


def test_a_mention_missed_once_but_found_elsewhere_in_its_document_is_fixable():
    tokens = ["Acme", "sued", "acme", "and", "acme"]
    gold = [(tokens, [(0, 1, "ORG"), (2, 3, "ORG"), (4, 5, "ORG")])]
    predicted = [(tokens, [(0, 1, "ORG"), (2, 3, "ORG")])]
    for voters in ("first", "gold"):
        result = consistency_bound(gold, predicted, voters)
        assert result["first_stage"]["r"] == pytest.approx(2 / 3)
        assert result["bound"] == {"p": 1.0, "r": 1.0, "f": 1.0}
        assert (result["fixable_missed"], result["fixable_wrong"], result["errors"]) == (1, 0, 1)


def test_a_wrong_label_is_fixed_only_when_the_voters_label_the_other_occurrences_right():
    tokens = ["Apple", "said", "that", "apple", "won"]
    gold = [(tokens, [(0, 1, "ORG"), (3, 4, "ORG")])]
    consistent_error = [(tokens, [(0, 1, "PER"), (3, 4, "PER")])]
    one_error = [(tokens, [(0, 1, "PER"), (3, 4, "ORG")])]
    # The first stage repeats its error: its own votes fix nothing, the oracle's fix both.
    assert consistency_bound(gold, consistent_error, "first")["bound"]["f"] == 0.0
    oracle = consistency_bound(gold, consistent_error, "gold")
    assert oracle["bound"]["f"] == 1.0 and (oracle["fixable_missed"], oracle["fixable_wrong"]) == (2, 2)
    # One occurrence right: its vote fixes the other.
    assert consistency_bound(gold, one_error, "first")["bound"]["f"] == 1.0


def test_a_false_entity_is_removed_when_its_other_occurrences_are_outside_entities():
    tokens = ["May", "came", "in", "may", "and", "may"]
    gold = [(tokens, [])]
    predicted = [(tokens, [(0, 1, "PER")])]
    result = consistency_bound(gold, predicted, "first")
    assert result["fixable_wrong"] == 1 and result["bound"]["p"] == 0.0  # nothing left, nothing wrong
    assert consistency_bound(gold, predicted, "first")["bound"]["f"] == 0.0
    tied = [(["May", "may"], [(0, 1, "PER")])]
    # one other occurrence, outside entities: O beats PER
    assert consistency_bound([(tied[0][0], [])], tied, "first")["fixable_wrong"] == 1
    # an error whose text never recurs cannot be fixed
    assert consistency_bound([(["Zed"], [(0, 1, "PER")])], [(["Zed"], [])], "gold")["fixable_missed"] == 0


def test_voters_must_be_named():
    with pytest.raises(ValueError, match="voters"):
        consistency_bound([], [], "silver")


def test_token_labels_take_the_longest_covering_span():
    assert token_labels(4, [(0, 3, "ORG"), (1, 2, "LOC")]).tolist() == ["ORG", "ORG", "ORG", "O"]


def test_feature_agreement_on_wrong_and_right_tokens():
    # Token 2 is missed; the document's single-token entity "acme" names ORG there: the feature points to the fix.
    tokens = ["acme", "x", "acme"]
    fixes = feature_agreement([(tokens, [(0, 1, "ORG"), (2, 3, "ORG")])], [(tokens, [(0, 1, "ORG")])], ["ORG"])
    assert fixes == {
        "wrong_tokens": 1,
        "feature_names_gold_where_wrong": 1.0,
        "any_document_feature_names_gold_where_wrong": 1.0,
        "right_tokens": 2,
        "feature_names_other_where_right": 0.0,
    }
    # A false entity: the two right O tokens "acme" get the feature ORG, which misleads.
    tokens = ["acme", "acme", "acme"]
    misleads = feature_agreement([(tokens, [])], [(tokens, [(0, 1, "ORG")])], ["ORG"])
    assert misleads["wrong_tokens"] == 1 and misleads["feature_names_gold_where_wrong"] == 0.0
    assert misleads["feature_names_other_where_right"] == 1.0
    # Found once in three: token-majority is O (two O votes, value 0), entity-majority ORG names the gold label.
    tokens = ["acme", "acme", "acme"]
    gold = [(tokens, [(0, 1, "ORG"), (1, 2, "ORG"), (2, 3, "ORG")])]
    result = feature_agreement(gold, [(tokens, [(0, 1, "ORG")])], ["ORG"])
    assert result["wrong_tokens"] == 2
    assert result["feature_names_gold_where_wrong"] == 1.0
    # Found twice in three: token-majority ORG names it too, and so does "any".
    result = feature_agreement(gold, [(tokens, [(0, 1, "ORG"), (1, 2, "ORG")])], ["ORG"])
    assert result["any_document_feature_names_gold_where_wrong"] == 1.0


def test_the_report_section_shows_each_corpus_bound_over_its_seeds():
    from experiments.two_stage.consistency import measures, report_section

    tokens = ["Acme", "sued", "acme", "and", "acme"]
    gold = {"train": [(tokens, [(0, 1, "ORG"), (2, 3, "ORG"), (4, 5, "ORG")])]}
    gold["split"] = gold["train"]
    first = {
        seed: {name: [(tokens, [(0, 1, "ORG"), (2, 3, "ORG")][: 2 - seed])] for name in ("train", "split")}
        for seed in (0, 1)
    }
    result = {"corpus": "gum", "split": "test", **measures(gold, first, ["ORG"])}
    text = report_section([result])
    row = next(line for line in text.splitlines() if line.startswith("| gum | test | 0, 1"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    # first F: seed 0 finds 2 of 3 (80.0), seed 1 1 of 3 (50.0). First-stage votes fix seed 0's miss (100) but
    # not seed 1's: each missed "acme" has one ORG and one O vote, a tie (50). Oracle votes fix all (100).
    assert cells[4] == "65.00 ± 21.21"
    assert cells[5] == "75.00 ± 35.36"
    assert cells[6] == "100.00 ± 0.00"
    reading = text.split("Reading (gum, test): ")[1]
    assert reading.startswith("the first stage's F1 is 65.00 (recall 50.00). ")
    assert "at most 75.00 (+10.00) with the first stage's own labels there, and 100.00 (+35.00)" in reading


def test_the_reading_says_when_the_first_stage_labels_nothing_wrong():
    from experiments.two_stage.consistency import measures, report_section

    tokens = ["Acme", "sued", "acme"]
    gold = {"train": [(tokens, [(0, 1, "ORG"), (2, 3, "ORG")])]}
    gold["split"] = gold["train"]
    first = {0: {name: gold["train"] for name in ("train", "split")}}  # every token right
    text = report_section([{"corpus": "gum", "split": "test", **measures(gold, first, ["ORG"])}])
    assert "the first stage's F1 is 100.00" in text
    assert "labels no token wrong here, so the features have nothing to fix" in text


def test_the_gain_reading_takes_the_variant_best_on_dev_and_measures_its_test_gain_against_the_goal():
    from experiments.two_stage.consistency import gain_reading

    deltas = [
        ("genia", "test", "hard votes", 0.11),
        ("genia", "dev", "hard votes", 0.46),
        ("genia", "test", "soft votes", 0.57),
        ("genia", "dev", "soft votes", 0.08),
        ("gum", "test", "hard votes", 0.9),  # no dev row: no reading
    ]
    bound = {"first": {"first_stage": {"f": 0.70}, "bound": {"f": 0.73}}}
    results = [{"corpus": "genia", "split": "test", "seeds": {"0": {"bound": bound}, "1": {"bound": bound}}}]
    (text,) = gain_reading(deltas, results)
    assert "chosen on dev, hard votes (dev +0.46)" in text and "on test +0.11" in text
    assert "0.39 short of the +0.5" in text and "soft votes +0.57" in text and "at most +3.00" in text
    (met,) = gain_reading([("genia", "dev", "soft votes", 0.2), ("genia", "test", "soft votes", 0.6)], [])
    assert "at least the +0.5" in met and "room" not in met
