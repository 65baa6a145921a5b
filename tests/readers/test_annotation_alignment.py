"""Spans placed on tokens as spaCy's Doc.char_span places them (strict,
contract, expand), whitespace at the ends of a selection dropped, every span
off token boundaries listed or skipped and counted, regions given as
characters mapped to the tokens of any tokenizer; and doccano's exports
(label and entities triples, files of another tool refused by name, doccano
1.x's "data"). Expected values are written by hand from the tasks."""

import json

import pytest
import spacy
from annotation_docs import ADA, GRACE, ents, group, iob, prodigy_task, write_lines
from spacy.tokenizer import Tokenizer

from spacy_depner.readers.annotation_tasks import ImportOptions
from spacy_depner.readers.annotation_tools import ImportCounts, read_doccano, read_prodigy


@pytest.mark.parametrize(
    "mode, expected",
    [("contract", [("Ada", "PER")]), ("expand", [("Ada Lovelace", "PER")])],
)
def test_alignment_modes(tmp_path, mode, expected):
    path = write_lines(tmp_path / "doccano.jsonl", [{"text": ADA, "label": [[0, 11, "PER"]]}])  # "Ada Lovelac"
    with pytest.raises(ValueError, match=r"span 'Ada Lovelac' \(PER, characters 0\.\.11\) does not fall on token"):
        read_doccano(path)
    (doc,) = read_doccano(path, options=ImportOptions(alignment_mode=mode))
    assert ents(doc) == expected


def test_whitespace_at_the_ends_of_a_selection_is_no_part_of_the_span(tmp_path):
    path = write_lines(tmp_path / "doccano.jsonl", [{"text": ADA, "label": [[16, 33, "PER"]]}])  # " Charles Babbage "
    (doc,) = read_doccano(path)
    assert ents(doc) == [("Charles Babbage", "PER")] and iob(doc) == "O O O B I O O O"


def test_every_misaligned_span_is_listed_or_skipped_and_counted(tmp_path):
    lines = [
        {"text": ADA, "label": [[0, 12, "PER"], [38, 42, "LOC"]]},  # "ndon"
        {"text": GRACE, "label": [[0, 5, "PER"], [23, 30, "ORG"]]},  # "Grace" (a token), "Harvard"
        {"text": "Lovelace's notes", "label": [[0, 9, "PER"]]},  # "Lovelace'"
    ]
    path = write_lines(tmp_path / "doccano.jsonl", lines)
    with pytest.raises(ValueError) as error:
        read_doccano(path)
    message = str(error.value)
    assert message.startswith("2 spans do not fall on token boundaries: ")
    assert f"{path}:1: span 'ndon' (LOC, characters 38..42)" in message and "['London']" in message
    assert f'{path}:3: span "Lovelace\'" (PER, characters 0..9)' in message and "--skip-misaligned" in message
    counts = ImportCounts()
    docs = read_doccano(path, options=ImportOptions(skip_misaligned=True), counts=counts)
    # line 1: its region is no longer known to hold no other entity: Ada Lovelace accepted, the rest missing
    assert [iob(doc) for doc in docs] == ["B I - - - - - -", "B O O O B O O O O", "- - -"]
    assert counts.skipped == {
        "misaligned span (--skip-misaligned)": 2,
        "region left unreviewed: one of its accepted spans misaligned": 2,
    }
    assert counts.tokens_reviewed == 9


def test_region_chars_map_to_the_tokens_of_any_tokenizer(tmp_path):
    text = "Ada Lovelace's notes on Babbage's engine."
    line = {"text": text, "label": [[24, 31, "PER"]], "meta": {"region_chars": [24, 40]}}  # "Babbage's engine"
    path = write_lines(tmp_path / "doccano.jsonl", [line])
    (blank,) = read_doccano(path)  # Babbage 's engine
    assert iob(blank) == "- - - - - B O O -"  # Ada Lovelace 's notes on Babbage 's engine .
    whitespace = spacy.blank("en")
    whitespace.tokenizer = Tokenizer(whitespace.vocab)
    with pytest.raises(ValueError, match="does not fall on token boundaries"):
        read_doccano(path, whitespace)
    (doc,) = read_doccano(path, whitespace, options=ImportOptions(alignment_mode="expand"))
    assert [t.text for t in doc][4:] == ["Babbage's", "engine."] and iob(doc) == "- - - - B O"


def test_a_token_region_must_agree_with_region_chars_on_the_tasks_own_tokens(tmp_path):
    task = prodigy_task(ADA, [(6, 7, "LOC")], "accept", region=[5, 8], region_chars=[33, 43])
    (doc,) = read_prodigy(write_lines(tmp_path / "tasks.jsonl", [task]))
    assert iob(doc) == "- - - - - O B O"
    task["region"] = [4, 8]
    with pytest.raises(ValueError, match=r"region \[4, 8\] \(tokens\) is not region_chars \[33, 43\), tokens 5\.\.7"):
        read_prodigy(write_lines(tmp_path / "tasks.jsonl", [task]))


def test_doccano_entities_as_triples_and_data_as_text(tmp_path):
    lines = [
        {
            "id": 1,
            "text": ADA,
            "entities": [[0, 12, "PER"], {"id": 3, "start_offset": 36, "end_offset": 42, "label": "LOC"}],
        },
        {"id": 2, "data": GRACE, "label": [[45, 54, "LOC"]], "user": 4},  # doccano 1.x
    ]
    path = write_lines(tmp_path / "doccano.jsonl", lines)
    docs = read_doccano(path)
    assert [ents(doc) for doc in docs] == [[("Ada Lovelace", "PER"), ("London", "LOC")], [("Cambridge", "LOC")]]
    assert docs[1].user_data["meta"] == {"source": f"{path}:2", "task_id": 2, "annotator": 4}
    (nested,) = read_doccano(write_lines(path, lines[:1]), mode="nested")
    assert group(nested, "annotated") == [(0, 8, "")]


@pytest.mark.parametrize(
    "record, message",
    [
        (prodigy_task(ADA, [(0, 2, "PER")], "accept"), r"looks like a Prodigy record .*import it as prodigy"),
        (
            {"id": 1, "data": {"text": ADA}, "annotations": [{"result": []}]},
            r"looks like a Label Studio record .*import it as label-studio",
        ),
        (
            {"id": 1, "text": ADA, "label": [{"start": 0, "end": 3, "labels": ["PER"]}], "annotation_id": 2},
            r"looks like a Label Studio record .*import it as label-studio",
        ),
    ],
)
def test_another_tools_record_given_as_doccano(tmp_path, record, message):
    with pytest.raises(ValueError, match=r"doccano\.jsonl:1: this " + message):
        read_doccano(write_lines(tmp_path / "doccano.jsonl", [record]))
    export = tmp_path / "export.json"
    export.write_text(json.dumps([record]), encoding="utf8")
    with pytest.raises(ValueError, match=r"the file is one JSON list"):
        read_doccano(export)


def test_contract_on_a_span_with_no_whole_token_inside_advises_expand(tmp_path):
    path = write_lines(tmp_path / "doccano.jsonl", [{"id": 7, "text": ADA, "label": [[5, 11, "PER"]]}])  # "ovelac"
    with pytest.raises(ValueError) as error:
        read_doccano(path, options=ImportOptions(alignment_mode="contract"))
    message = str(error.value)
    assert message.startswith(f"{path}:1 (task id 7): span 'ovelac' (PER, characters 5..11) holds no whole token")
    assert (
        "--alignment-mode expand" in message and "['Lovelace']" in message and "contract" not in message.split(";")[1]
    )
    (doc,) = read_doccano(path, options=ImportOptions(alignment_mode="expand"))  # the fix it gives works
    assert ents(doc) == [("Lovelace", "PER")]


def test_a_whitespace_only_span_is_dropped_and_counted_and_edge_whitespace_trimmed(tmp_path):
    """What a tool wrote over a double space (Ada0 Lovelace1 met2 " "3 Charles4 Babbage5 in6 London7 .8)."""
    text = "Ada Lovelace met  Charles Babbage in London."
    doccano = write_lines(tmp_path / "doccano.jsonl", [{"text": text, "label": [[16, 18, "PER"], [37, 43, "LOC"]]}])
    counts = ImportCounts()
    (doc,) = read_doccano(doccano, counts=counts)
    assert ents(doc) == [("London", "LOC")] and iob(doc) == "O O O O O O O B O"
    assert counts.skipped == {"whitespace-only span": 1} and counts.accepted == 1
    task = prodigy_task(text, [(3, 4, "PER"), (3, 6, "PER")], "accept")  # " " and " Charles Babbage"
    counts = ImportCounts()
    (doc,) = read_prodigy(write_lines(tmp_path / "prodigy.jsonl", [task]), counts=counts)
    assert ents(doc) == [("Charles Babbage", "PER")] and iob(doc) == "O O O O B I O O O"
    assert counts.skipped == {"whitespace-only span": 1}
