"""doccano's sequence-labelling format, read and written: its JSON-lines
export (a file or its records) read as ``Task``s (``annotation_tasks.py``),
and ``rank``'s records written as the JSONL doccano imports
(``doccano_task``).

A line is ``{"id", "text", "label": [[start, end, "LABEL"], ...]}``, or
``{"id", "text", "entities": [{"id", "start_offset", "end_offset",
"label"}], "relations": [...]}`` (the relation-labelling export; its
entities may be ``[start, end, "LABEL"]`` triples too), doccano 1.x writing
the text under ``"data"`` (doccano's "Export" docs). Every record is an
accepted manual annotation of its text. A record with no span (``"label":
[]``, which the per-user export writes for every example the user did not
label) is skipped and counted with ``--unlabelled skip`` (the default), or
read as reviewed with no entity with ``--unlabelled outside``.

Writing (``rank --format doccano``,
https://doccano.github.io/doccano/tutorial/#import-dataset): ``text`` and
``label`` as ``[start_char, end_char, label]`` triples, the record's region
as ``region_chars`` (doccano keeps every other key as metadata, and exports
it back), ``score`` and ``meta``.
"""

from typing import Any, Dict, Iterator, List, Optional

from .annotation_tasks import (
    ImportOptions,
    Task,
    TaskSpan,
    char_span,
    items,
    mapping,
    refuse_other_format,
    skipped,
    task_regions,
    task_text,
)
from .export_files import json_line_records

UNLABELLED = "unlabelled record (--unlabelled skip)"


def doccano_span(entity, where: str) -> TaskSpan:
    """An entity: ``{"start_offset", "end_offset", "label"}`` or ``[start, end, "LABEL"]``."""
    if isinstance(entity, list):
        if len(entity) != 3:
            raise ValueError(
                f'{where}: entity {entity!r} is not [start, end, "LABEL"] nor an object: export a '
                "sequence-labelling project"
            )
        return char_span(entity[2], entity[0], entity[1], where)
    entity = mapping(entity, where, "an entity")
    return char_span(entity.get("label"), entity.get("start_offset"), entity.get("end_offset"), where)


def doccano_spans(record: dict, where: str) -> List[TaskSpan]:
    """The spans of a doccano record (module docstring)."""
    if "entities" in record:
        return [doccano_span(entity, where) for entity in items(record["entities"], where, '"entities"')]
    triples = items(record.get("label", []), where, '"label"')
    if any(not isinstance(triple, list) for triple in triples):
        raise ValueError(
            f'{where}: "label" {triples!r} is not a list of [start, end, "LABEL"]: export a sequence-labelling project'
        )
    return [doccano_span(triple, where) for triple in triples]


def doccano_tasks(source, options: Optional[ImportOptions] = None) -> Iterator[Task]:
    """The tasks of a doccano JSON-lines export, a file or its records (module docstring), all accepted."""
    options = ImportOptions() if options is None else options
    for where, value in json_line_records(source, "doccano"):
        refuse_other_format(value, where, "doccano")
        record = mapping(value, where, "a doccano record")
        text = record.get("text", record.get("data") if isinstance(record.get("data"), str) else None)
        text = task_text(text, where, '"text"')
        spans = doccano_spans(record, where)
        if not spans and options.unlabelled == "skip":
            yield skipped(where, UNLABELLED)
            continue
        region, region_chars = task_regions(record, where)
        meta = record.get("meta")
        yield Task(
            where,
            text,
            "accept",
            spans,
            region=region,
            region_chars=region_chars,
            meta=meta if isinstance(meta, dict) else None,
            task_id=record.get("id"),
            annotator=record.get("user", record.get("annotator")),
        )


def doccano_task(record: Dict[str, Any]) -> Dict[str, Any]:
    """A ``rank`` record as doccano's sequence-labelling JSONL line (module docstring)."""
    task = {"text": record["text"], "label": [[span["start"], span["end"], span["label"]] for span in record["spans"]]}
    region = {"region_chars": record["region_chars"]} if "region_chars" in record else {}
    return {**task, **region, "score": record["score"], "meta": record.get("meta", {})}
