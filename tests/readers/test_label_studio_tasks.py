"""Label Studio's exports as its docs describe them (JSON, JSON-MIN, CSV; the
annotation result format): the text under another data key, the NER control
chosen by from_name/to_name, annotations without a labels result skipped and
counted, several annotators by policy, UTF-16 offsets, and a JSON-lines file
refused by name. Expected values are written by hand from the tasks."""

import csv
import json

import pytest
from annotation_docs import ADA, GRACE, ents, group, iob

from spacy_depner.readers.annotation_tasks import ImportOptions
from spacy_depner.readers.annotation_tools import ImportCounts, read_label_studio


def labels(start, end, text, label, from_name="label", to_name="text") -> dict:
    return {
        "id": f"r{start}",
        "from_name": from_name,
        "to_name": to_name,
        "type": "labels",
        "origin": "manual",
        "value": {"start": start, "end": end, "text": text, "labels": [label]},
    }


def annotation(number, *result, annotator=1, **extra) -> dict:
    return {"id": number, "completed_by": annotator, "result": list(result), "was_cancelled": False, **extra}


def export(tmp_path, tasks, name="export.json"):
    path = tmp_path / name
    path.write_text(json.dumps(tasks, indent=2), encoding="utf8")
    return path


ADA_PER = labels(0, 12, "Ada Lovelace", "PER")
ADA_LOC = labels(36, 42, "London", "LOC")
ADA_ORG = labels(17, 32, "Charles Babbage", "ORG")


def test_the_text_under_another_data_key(tmp_path):
    path = export(tmp_path, [{"id": 1, "data": {"ner": ADA, "source": "web"}, "annotations": [annotation(1, ADA_PER)]}])
    with pytest.raises(ValueError, match=r'task 1 \(id 1\): data has no "text" \(its keys: ner, source\).*--text-key'):
        read_label_studio(path)
    (doc,) = read_label_studio(path, options=ImportOptions(text_key="ner"))
    assert ents(doc) == [("Ada Lovelace", "PER")] and iob(doc) == "B I O O O O O O"
    assert doc.user_data["meta"] == {
        "source": f"{path} task 1 (id 1)",
        "task_id": 1,
        "annotator": 1,
        "annotation_id": 1,
    }


def min_records():
    return [
        {
            "id": 7,
            "text": ADA,
            "label": [
                {"start": 0, "end": 12, "text": "Ada Lovelace", "labels": ["PER"]},
                {"start": 36, "end": 42, "text": "London", "labels": ["LOC"]},
            ],
            "annotator": 2,
            "annotation_id": 30,
            "created_at": "2024-01-05T10:00:00.000000Z",
            "updated_at": "2024-01-05T10:00:00.000000Z",
            "lead_time": 12.5,
        },
        {"id": 8, "text": GRACE},  # no annotation: no label list
    ]


def test_json_min_export(tmp_path):
    counts = ImportCounts()
    (doc,) = read_label_studio(export(tmp_path, min_records()), counts=counts)
    assert iob(doc) == "B I O O O O B O" and doc.user_data["meta"]["annotator"] == 2
    assert counts.skipped == {"not annotated": 1} and counts.docs == 1


def test_csv_export(tmp_path):
    path = tmp_path / "export.csv"
    columns = ["text", "id", "label", "annotator", "annotation_id", "created_at", "updated_at", "lead_time"]
    with path.open("w", encoding="utf8", newline="") as out:
        writer = csv.DictWriter(out, columns)
        writer.writeheader()
        for record in min_records():
            writer.writerow({**record, "label": json.dumps(record["label"])} if "label" in record else record)
    counts = ImportCounts()
    (doc,) = read_label_studio(path, counts=counts)
    assert iob(doc) == "B I O O O O B O" and doc.user_data["meta"]["source"] == f"{path}:2"
    assert counts.skipped == {"not annotated": 1}


def test_an_annotation_without_labels_is_skipped_and_an_empty_one_is_all_outside(tmp_path):
    choices = {"from_name": "topic", "to_name": "text", "type": "choices", "value": {"choices": ["news"]}}
    tasks = [
        {"id": 1, "data": {"text": ADA}, "annotations": [annotation(1, choices)]},
        {"id": 2, "data": {"text": GRACE}, "annotations": [annotation(2)]},  # submitted with nothing marked
        {"id": 3, "data": {"text": ADA + " Again."}, "annotations": [annotation(3, ADA_PER)]},
    ]
    counts = ImportCounts()
    docs = read_label_studio(export(tmp_path, tasks), counts=counts)
    assert [iob(doc) for doc in docs] == ["O O O O O O O O O", "B I O O O O O O O O"]
    assert counts.skipped == {"annotation without a span of the labels control (choices)": 1}


def test_the_labels_control_by_from_name(tmp_path):
    other = labels(0, 12, "Ada Lovelace", "PERSON_ROLE", from_name="roles")
    path = export(tmp_path, [{"id": 1, "data": {"text": ADA}, "annotations": [annotation(1, ADA_PER, ADA_LOC, other)]}])
    with pytest.raises(
        ValueError, match=r"several Labels controls \(from_name 'label' .*from_name 'roles'.*--from-name"
    ):
        read_label_studio(path)
    (doc,) = read_label_studio(path, options=ImportOptions(from_name="roles"))
    assert ents(doc) == [("Ada Lovelace", "PERSON_ROLE")]
    (doc,) = read_label_studio(path, options=ImportOptions(from_name="label", to_name="text"))
    assert ents(doc) == [("Ada Lovelace", "PER"), ("London", "LOC")]
    with pytest.raises(ValueError, match=r"no Labels control named from_name 'ner'.*it has from_name 'label'"):
        read_label_studio(path, options=ImportOptions(from_name="ner"))


THREE_ANNOTATORS = [
    {
        "id": 5,
        "data": {"text": ADA},
        "annotations": [
            annotation(1, ADA_PER, ADA_LOC, annotator=11),
            annotation(2, ADA_PER, ADA_ORG, annotator=12, ground_truth=True),
            annotation(3, ADA_PER, annotator=13),
            {**annotation(4, ADA_LOC, annotator=14), "was_cancelled": True},
        ],
    }
]


@pytest.mark.parametrize(
    "policy, expected, skipped",
    [
        ("last", [[("Ada Lovelace", "PER")]], {"annotation not kept (--annotators last)": 2}),
        ("first", [[("Ada Lovelace", "PER"), ("London", "LOC")]], {"annotation not kept (--annotators first)": 2}),
        (
            "ground-truth",
            [[("Ada Lovelace", "PER"), ("Charles Babbage", "ORG")]],
            {"annotation not kept (--annotators ground-truth)": 2},
        ),
        ("majority", [[("Ada Lovelace", "PER")]], {}),
        (
            "each",
            [
                [("Ada Lovelace", "PER"), ("London", "LOC")],
                [("Ada Lovelace", "PER"), ("Charles Babbage", "ORG")],
                [("Ada Lovelace", "PER")],
            ],
            {},
        ),
    ],
)
def test_several_annotators(tmp_path, policy, expected, skipped):
    counts = ImportCounts()
    docs = read_label_studio(
        export(tmp_path, THREE_ANNOTATORS), options=ImportOptions(annotators=policy), counts=counts
    )
    assert [ents(doc) for doc in docs] == expected
    assert counts.skipped == skipped and counts.ignored == 0
    if policy == "majority":
        meta = docs[0].user_data["meta"]
        assert meta["annotator"] == [11, 12, 13] and meta["annotators"] == 3
        assert meta["span_votes"] == [[0, 12, "PER", 3]]
        assert iob(docs[0]) == "B I O O O O O O"  # London (1 of 3), Charles Babbage (1 of 3): not entities
    if policy == "each":
        assert [doc.user_data["meta"]["annotator"] for doc in docs] == [11, 12, 13]


def test_no_ground_truth_is_skipped(tmp_path):
    tasks = [{"id": 1, "data": {"text": ADA}, "annotations": [annotation(1, ADA_PER)]}]
    counts = ImportCounts()
    docs = read_label_studio(export(tmp_path, tasks), options=ImportOptions(annotators="ground-truth"), counts=counts)
    assert docs == [] and counts.skipped == {"no ground-truth annotation (--annotators ground-truth)": 1}


def test_utf16_offsets_are_converted(tmp_path):
    text = "\U0001f600 Ada Lovelace met Charles Babbage in London."  # the emoji: 1 character, 2 UTF-16 code units
    tasks = [
        {
            "id": 1,
            "data": {"text": text},
            "annotations": [annotation(1, labels(3, 15, "Ada Lovelace", "PER"), labels(39, 45, "London", "LOC"))],
        }
    ]
    (doc,) = read_label_studio(export(tmp_path, tasks))
    assert ents(doc) == [("Ada Lovelace", "PER"), ("London", "LOC")]
    tasks[0]["annotations"][0]["result"] = [labels(2, 14, "Ada Lovelace", "PER")]  # character offsets stay
    (doc,) = read_label_studio(export(tmp_path, tasks))
    assert ents(doc) == [("Ada Lovelace", "PER")]
    tasks[0]["annotations"][0]["result"] = [labels(4, 16, "Ada Lovelace", "PER")]  # neither: an error
    with pytest.raises(ValueError, match=r"span text 'Ada Lovelace' is not the text at its place, 'a Lovelace m'"):
        read_label_studio(export(tmp_path, tasks))


def test_region_chars_and_tasks_of_one_text(tmp_path):
    tasks = [
        {
            "id": 1,
            "data": {"text": GRACE, "region_chars": [23, 54]},
            "annotations": [annotation(1, labels(45, 54, "Cambridge", "LOC"))],
        },
        {"id": 2, "data": {"text": GRACE}, "annotations": [annotation(2, labels(0, 12, "Grace Hopper", "PER"))]},
    ]
    with pytest.raises(
        ValueError, match=r"task 1 \(id 1\): span 'Cambridge' .* accepted here, but .*task 2 \(id 2\) reviewed"
    ):
        read_label_studio(export(tmp_path, tasks))
    tasks[1]["data"]["region_chars"] = [0, 13]  # "Grace Hopper " (the space is no part of the region)
    counts = ImportCounts()
    (doc,) = read_label_studio(export(tmp_path, tasks), counts=counts, mode="nested")
    assert group(doc, "annotated") == [(0, 2, ""), (4, 8, "")]
    assert group(doc, "nested_ner") == [(0, 2, "PER"), (7, 8, "LOC")] and counts.tokens_reviewed == 6


def test_json_lines_given_as_label_studio(tmp_path):
    path = tmp_path / "teach.jsonl"
    path.write_text(json.dumps({"text": ADA, "spans": [], "answer": "accept"}) + "\n" + "{}\n", encoding="utf8")
    with pytest.raises(ValueError, match=r"teach\.jsonl: the file is Prodigy JSON lines \(import it as prodigy\)"):
        read_label_studio(path)


def test_json_min_records_of_one_task_are_its_annotations_as_created(tmp_path):
    """JSON-MIN writes one record per annotation, not in the order they were
    made; a record with an annotation_id and no label list is an annotation
    without a span (here a choice only)."""
    common = {"id": 2, "text": GRACE, "lead_time": None}
    records = [
        {
            **common,
            "label": [{"start": 45, "end": 54, "text": "Cambridge", "labels": ["LOC"]}],
            "annotator": 1,
            "annotation_id": 3,
            "created_at": "2024-01-05T10:00:09.000000Z",
        },
        {
            **common,
            "label": [{"start": 0, "end": 12, "text": "Grace Hopper", "labels": ["PER"]}],
            "annotator": 1,
            "annotation_id": 2,
            "created_at": "2024-01-05T10:00:01.000000Z",
        },
        {"id": 3, "text": ADA, "topic": "news", "annotator": 1, "annotation_id": 4, "created_at": "2024-01-05T10:01"},
    ]
    counts = ImportCounts()
    (doc,) = read_label_studio(export(tmp_path, records), counts=counts)
    assert ents(doc) == [("Cambridge", "LOC")] and doc.user_data["meta"]["annotation_id"] == 3
    assert counts.skipped == {
        "annotation not kept (--annotators last)": 1,
        "annotation without a span of the labels control (no label list in the record)": 1,
    }
    (doc,) = read_label_studio(export(tmp_path, records), options=ImportOptions(annotators="first"))
    assert ents(doc) == [("Grace Hopper", "PER")]


def test_utf16_offsets_without_text_are_named_and_read_with_offsets_utf16(tmp_path):
    """Offsets that fit the tokens as UTF-16 code units and not as characters: no
    snapping is advised (expand would make 'Bob in' of 'Bob'), none is done."""
    text = "\U0001f600\U0001f600 Bob in Paris."  # Bob: characters 3..6, UTF-16 code units 5..8
    result = {**labels(5, 8, None, "PER"), "value": {"start": 5, "end": 8, "labels": ["PER"]}}
    tasks = [{"id": 4, "data": {"text": text}, "annotations": [annotation(1, result)]}]
    path = export(tmp_path, tasks)
    for mode in ("strict", "contract", "expand"):
        with pytest.raises(ValueError) as error:
            read_label_studio(path, options=ImportOptions(alignment_mode=mode))
        message = str(error.value)
        assert f"{path} task 1 (id 4): span 'b i' (PER, characters 5..8)" in message, message
        assert "UTF-16 code units" in message and "'Bob'" in message and "--offsets utf-16" in message
        assert "--alignment-mode" not in message
    (doc,) = read_label_studio(path, options=ImportOptions(offsets="utf-16"))
    assert ents(doc) == [("Bob", "PER")] and iob(doc) == "O O B O O O"
    counts = ImportCounts()
    (doc,) = read_label_studio(path, options=ImportOptions(skip_misaligned=True), counts=counts)
    assert iob(doc) == "- - - - - -" and counts.skipped == {
        "span offsets in UTF-16 code units (--offsets utf-16)": 1,
        "region left unreviewed: one of its accepted spans misaligned": 1,
    }
    tasks[0]["annotations"][0]["result"][0]["value"].update(start=6, end=8)  # splits no pair, but no token either
    with pytest.raises(ValueError, match=r"span 'ob' \(PER, characters 4\.\.6\) does not fall on token boundaries"):
        read_label_studio(export(tmp_path, tasks), options=ImportOptions(offsets="utf-16"))
    tasks[0]["annotations"][0]["result"][0]["value"].update(start=1, end=4)  # inside the first emoji's pair
    with pytest.raises(ValueError, match=r"task 1 \(id 4\): span 'PER' at UTF-16 code units 1\.\.4 splits a char"):
        read_label_studio(export(tmp_path, tasks), options=ImportOptions(offsets="utf-16"))


def test_majority_of_two_annotators_leaves_a_tie_unreviewed_and_counts_it(tmp_path):
    """A span one of two annotators marked is a tie, not a decision: its tokens are missing."""
    tasks = [{"id": 5, "data": {"text": ADA}, "annotations": [annotation(1, ADA_PER, ADA_LOC), annotation(2, ADA_PER)]}]
    counts = ImportCounts()
    (doc,) = read_label_studio(export(tmp_path, tasks), options=ImportOptions(annotators="majority"), counts=counts)
    assert ents(doc) == [("Ada Lovelace", "PER")] and iob(doc) == "B I O O O O - O"
    assert counts.skipped == {"span tied between annotators: its tokens left unreviewed (--annotators majority)": 1}
    assert counts.tokens_reviewed == 7
    assert doc.user_data["meta"]["span_votes"] == [[0, 12, "PER", 2]]
    assert doc.user_data["meta"]["tied_spans"] == [[36, 42, "LOC", 1]]
    (nested,) = read_label_studio(export(tmp_path, tasks), options=ImportOptions(annotators="majority"), mode="nested")
    assert group(nested, "annotated") == [(0, 6, ""), (7, 8, "")] and group(nested, "nested_ner") == [(0, 2, "PER")]
    four = [annotation(1, ADA_PER, ADA_ORG), annotation(2, ADA_PER, ADA_ORG), annotation(3, ADA_PER), annotation(4)]
    tasks[0]["annotations"] = four  # Charles Babbage: 2 of 4, a tie
    (doc,) = read_label_studio(export(tmp_path, tasks), options=ImportOptions(annotators="majority"))
    assert iob(doc) == "B I O - - O O O"
