"""Each tool's format has one home, read and written: every reader takes the
records of an export as well as its file (the Docs the same, errors naming
"record N" or "task N (id ID)"), and the reviewed region a writer puts in a
tool's task is the one its reader finds (``region_fields`` written,
``task_regions`` read, ``has_region`` for the task kind)."""

import pytest
from annotation_docs import ADA, NLP, prodigy_task
from test_annotation_fuzz import BASES, write

from spacy_depner.readers.annotation_tasks import has_region, region_fields, task_regions
from spacy_depner.readers.annotation_tools import ImportCounts, read_annotations
from spacy_depner.readers.doccano_format import doccano_task
from spacy_depner.readers.label_studio_format import label_studio_task
from spacy_depner.readers.prodigy_format import prodigy_task as prodigy_writer


def described(docs):
    """What a Doc holds, its meta's source (the file's or the record's place) left out."""
    return [
        (
            doc.text,
            [t.ent_iob_ or "-" for t in doc],
            [(e.start_char, e.end_char, e.label_) for e in doc.ents],
            sorted((s.start, s.end, s.label_) for s in doc.spans["incorrect_spans"]),
            {k: v for k, v in doc.user_data["meta"].items() if k not in ("source", "tasks")},
        )
        for doc in docs
    ]


@pytest.mark.parametrize("case", sorted(BASES))
def test_the_records_of_an_export_read_as_its_file(tmp_path, case):
    format, base, options = BASES[case]
    export = base()
    path = tmp_path / "export"
    write(format, export, path)
    from_file, from_records = ImportCounts(), ImportCounts()
    docs = read_annotations(format, path, NLP, options=options, counts=from_file)
    again = read_annotations(format, export, NLP, options=options, counts=from_records)
    assert described(again) == described(docs) and docs
    assert from_records.as_dict() == from_file.as_dict()
    assert all(str(path) not in doc.user_data["meta"]["source"] for doc in again)


def test_errors_in_records_name_the_record():
    manual = prodigy_task(ADA, [(0, 2, "PER")], "accept")
    with pytest.raises(ValueError, match=r"^record 2: answer None"):
        read_annotations("prodigy", [manual, {**manual, "answer": None}], NLP)
    with pytest.raises(ValueError, match=r"^record 1: .*no text"):
        read_annotations("doccano", [{"id": 1, "label": [[0, 3, "PER"]]}], NLP)
    with pytest.raises(ValueError, match=r'^task 2 \(id 7\): data has no "text"'):
        read_annotations("label-studio", [{"id": 6, "data": {"text": ADA}}, {"id": 7, "data": {"body": ADA}}], NLP)


def test_a_writer_puts_the_region_where_its_reader_finds_it():
    record = {
        "text": ADA,
        "spans": [{"start": 17, "end": 32, "label": "PER", "text": "Charles Babbage", "score": 0.5}],
        "score": 0.25,
        "region": [3, 7],
        "region_chars": [17, 42],
        "meta": {"region_chars": [17, 42], "unit": "region"},
    }
    assert region_fields(record) == {"region": [3, 7], "region_chars": [17, 42]}
    written = {
        "prodigy": prodigy_writer(record),
        "label-studio": label_studio_task(record)["data"],
        "doccano": doccano_task(record),
    }
    for format, task in written.items():
        assert has_region(task), format
        assert task_regions(task, format)[1] == (17, 42), format
    assert not has_region({"text": ADA, "meta": {"unit": "doc"}})
    assert has_region({"text": ADA, "meta": {"region": [0, 2]}})
    assert task_regions({"meta": {"region": [0, 2]}}, "x") == ((0, 2), None)
