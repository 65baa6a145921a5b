"""Label Studio's format, read and written: its exports (a file, or the
exported tasks themselves) read as ``Task``s (``annotation_tasks.py``);
``rank``'s records and a served model's predictions written as the tasks,
predictions and ``labels`` results Label Studio imports; and what a labeling
config says they must look like (``labeling_config``).

* **JSON** (Export > JSON): one list of tasks ``{"id", "data": {TEXT_KEY,
  ...}, "annotations": [{"id", "completed_by", "ground_truth",
  "was_cancelled", "result": [{"from_name", "to_name", "type": "labels",
  "value": {"start", "end", "text", "labels"}}]}], "predictions"}``
  (Label Studio's "Export annotations" and "Label Studio JSON format of
  annotated tasks" docs). Predictions are not read.
* **JSON-MIN** (a list of flat records ``{"id", TEXT_KEY, FROM_NAME:
  [{"start", "end", "text", "labels"}], "annotator", "annotation_id",
  "created_at", "updated_at", "lead_time"}``) and **CSV** (the same columns,
  the label list a JSON cell): one record per annotation; records of one
  ``id`` are the annotations of one task. A record without its label list
  is a task no one annotated, or (with an ``annotation_id``) an annotation
  without a span of the control (each skipped, counted).

What this reader does with it: the text is ``data[--text-key]`` (an error
lists the data keys found). The NER control is the ``Labels`` control named
by ``--from-name``/``--to-name``, by default the only one in the export
(several: an error listing them). A cancelled annotation is ignored; an
annotation whose result holds no span of that control but other results
(choices, image, hypertext labels) is skipped, counted by reason, while an
empty result is a reviewed text with no entity. Of several annotations
``--annotators`` keeps the last, the first (as created: ``created_at``, else
the export's order), the ground truth, each (one Doc each) or the majority
(the spans more than half of them marked; each span's votes in
``meta["span_votes"]``); annotations not kept are counted.
With ``--annotators majority`` a span exactly half of the annotations
marked is a tie, not a decision: the tokens it touches are left unreviewed
(missing), the span counted and listed in ``meta["tied_spans"]``.
Offsets counted in UTF-16 code units (what the browser counts for text with
characters beyond U+FFFF) are detected where ``value.text`` is the text at
the UTF-16 offsets and not at the character offsets, and converted; with
``--offsets utf-16`` every offset is read so (``annotation_alignment.py``).

Writing (``rank --format label-studio``, ``serve``'s predictions;
https://labelstud.io/guide/predictions): a task's ``data`` holds the text
(with ``meta``, and the region as ``region`` and ``region_chars``) and one
prediction whose ``result`` items are ``labels`` regions with each span's
probability as ``score`` and whose ``score`` is the task's rank measure
(what Label Studio sorts the data manager by, "Prediction score").

A labeling config (XML, e.g. ``EXAMPLE_CONFIG``) names the ``Labels`` control
(``from_name``), its ``Text`` object (``to_name``), the data key of the text
(its ``value`` without ``$``) and the labels (https://labelstud.io/tags/labels).
"""

import json
import xml.etree.ElementTree as ElementTree
from collections import Counter
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Tuple

from ..util.text_lines import readable_file
from .annotation_alignment import utf16_offsets
from .annotation_tasks import (
    AdvisedError,
    ImportOptions,
    Task,
    TaskSpan,
    char_span,
    items,
    mapping,
    refuse_other_format,
    region_fields,
    task_regions,
    task_text,
)
from .export_files import csv_records, first_character, is_records, json_lines_format

NOT_KEPT = "annotation not kept (--annotators {})"  # the policy
TIED = "span tied between annotators: its tokens left unreviewed (--annotators majority)"
FLAT_ANNOTATION_KEYS = ("annotator", "annotation_id", "created_at", "updated_at", "lead_time")


def label_studio_export(source) -> List[Tuple[str, dict]]:
    """("FILE task N (id ID)" or "FILE:LINE", record) of each record of a
    Label Studio JSON, JSON-MIN or CSV export; of exported tasks given as
    records, ("task N (id ID)", record)."""
    if is_records(source):
        return exported_records(source, "")
    path = readable_file(source, "Label Studio")
    start = first_character(path)
    if path.suffix.lower() == ".csv" or start not in ("[", "{", ""):
        return [(f"{path}:{line}", record) for line, record in csv_records(path)]
    try:
        export = json.loads(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text; export the project again as JSON") from None
    except json.JSONDecodeError as error:
        if error.msg == "Extra data" and start == "{":
            raise ValueError(
                f"{path}: the file is {json_lines_format(path)}, not a Label Studio export (one JSON list of "
                "tasks: Export > JSON, JSON-MIN or CSV)"
            ) from None
        raise ValueError(
            f"{path}:{error.lineno}: not valid JSON ({error.msg} at column {error.colno}); "
            "a Label Studio export is one JSON list of tasks (Export > JSON)"
        ) from None
    return exported_records(items(export, str(path), "a Label Studio export (Export > JSON)"), f"{path} ")


def exported_records(export: list, name: str) -> List[Tuple[str, dict]]:
    """("NAMEtask N (id ID)", record) of each record of ``export``, a list of JSON objects."""
    records = []
    for index, record in enumerate(export, start=1):
        where = f"{name}task {index}"
        record = mapping(record, where, "a task")
        records.append((where + (f" (id {record['id']})" if "id" in record else ""), record))
    return records


def _label_lists(record: dict, options: ImportOptions) -> List[str]:
    if options.from_name is not None:
        return [options.from_name] if isinstance(record.get(options.from_name), list) else []
    return [
        key
        for key, value in record.items()
        if isinstance(value, list) and value and all(isinstance(v, dict) and "labels" in v for v in value)
    ]


def full_task(record: dict, where: str, options: ImportOptions) -> dict:
    """``record`` as a task of the JSON export: itself, or a JSON-MIN / CSV
    record with its label list as one annotation's ``labels`` results."""
    refuse_other_format(record, where, "Label Studio")
    if "data" in record:
        return record
    keys = _label_lists(record, options)
    if len(keys) > 1:
        raise ValueError(f"{where}: the record has label lists {', '.join(keys)}; choose one with --from-name")
    data = {key: value for key, value in record.items() if key not in keys and key not in FLAT_ANNOTATION_KEYS}
    task = {"id": record.get("id"), "data": data, "annotations": []}
    if keys:
        results = [{"type": "labels", "from_name": keys[0], "value": value} for value in record[keys[0]]]
    elif record.get("annotation_id") not in (None, ""):
        results = [{"type": "no label list in the record"}]  # annotated, but no span of a Labels control
    else:
        return task  # a task no one annotated
    annotation = {
        "id": record.get("annotation_id"),
        "completed_by": record.get("annotator"),
        "created_at": record.get("created_at"),
        "result": results,
    }
    task["annotations"].append(annotation)
    return task


def labels_controls(tasks: List[Tuple[str, dict]]) -> List[Tuple[str, Optional[str]]]:
    """The (from_name, to_name) of every ``labels`` result of the export, each once, in order."""
    found: Dict = {}
    for where, task in tasks:
        for annotation in items(task.get("annotations", []), where, '"annotations"'):
            for item in items(mapping(annotation, where, "an annotation").get("result", []), where, '"result"'):
                if mapping(item, where, "a result item").get("type") == "labels":
                    control = item.get("from_name"), item.get("to_name")
                    if not all(name is None or isinstance(name, str) for name in control):
                        raise ValueError(f"{where}: a labels result names its control {control!r}, not two names")
                    found.setdefault(control, None)
    return list(found)


def chosen_control(tasks, options: ImportOptions) -> Optional[Tuple[str, Optional[str]]]:
    """The NER control read: the one ``--from-name``/``--to-name`` name, or the only one."""
    controls = labels_controls(tasks)
    matching = [
        (name, target)
        for name, target in controls
        if options.from_name in (None, name) and (options.to_name is None or target in (None, options.to_name))
    ]
    listed = ", ".join(f"from_name {name!r} to_name {target!r}" for name, target in controls) or "none"
    if len(matching) > 1:
        raise AdvisedError(lambda fixes: f"The export has several Labels controls ({listed}): {fixes['controls'][1]}")
    if not matching and (options.from_name or options.to_name):
        raise ValueError(
            f"The export has no Labels control named from_name {options.from_name!r} to_name {options.to_name!r} "
            f"(it has {listed}); fix --from-name / --to-name"
        )
    return matching[0] if matching else None


def result_spans(items_: List[dict], text: str, where: str, offsets: str = "characters") -> List[TaskSpan]:
    """The spans of an annotation's ``labels`` results (one span per label);
    with ``offsets`` "characters", offsets in UTF-16 code units that the
    result's ``text`` shows to be so are converted (module docstring)."""
    spans = []
    astral = offsets == "characters" and any(ord(character) > 0xFFFF for character in text)
    for item in items_:
        value = mapping(item.get("value"), where, "a labels result's value")
        start, end, shown = value.get("start"), value.get("end"), value.get("text")
        if astral and isinstance(shown, str) and isinstance(start, int) and isinstance(end, int):
            if text[start:end] != shown:
                units = utf16_offsets(text)
                if start in units and end in units and text[units[start] : units[end]] == shown:
                    start, end = units[start], units[end]
        for label in items(value.get("labels"), where, '"labels"'):
            spans.append(char_span(label, start, end, where, shown))
    return spans


def annotator_of(annotation: dict):
    annotator = annotation.get("completed_by")
    if isinstance(annotator, dict):
        return annotator.get("email", annotator.get("id"))
    return annotator


def majority_spans(annotations: List[Tuple[dict, List[TaskSpan]]]) -> Tuple[List[TaskSpan], List[TaskSpan]]:
    """The spans that more than half of ``annotations`` marked, and those that
    exactly half marked (a tie: no decision), each with its votes."""
    votes = Counter()
    first: Dict = {}
    for _, spans in annotations:
        for span in {(s.start, s.end, s.label): s for s in spans}.values():
            votes[span.start, span.end, span.label] += 1
            first.setdefault((span.start, span.end, span.label), span)
    counted = [
        TaskSpan(span.label, span.start, span.end, text=span.text, votes=votes[key]) for key, span in first.items()
    ]
    return (
        [span for span in counted if 2 * span.votes > len(annotations)],
        [span for span in counted if 2 * span.votes == len(annotations)],
    )


def label_studio_tasks(source, options: Optional[ImportOptions] = None) -> Iterator[Task]:
    """The tasks of a Label Studio JSON, JSON-MIN or CSV export, a file or its records (module docstring)."""
    options = ImportOptions() if options is None else options
    merged: Dict = {}
    for where, record in label_studio_export(source):
        task = full_task(record, where, options)
        flat = "data" not in record and task["id"] is not None
        key = ("record of id", task["id"]) if flat else ("task", where)
        if key in merged:
            merged[key][1]["annotations"].extend(task["annotations"])
        else:
            merged[key] = (where, task)
    tasks = list(merged.values())
    control = chosen_control(tasks, options)
    for where, task in tasks:
        yield from _tasks_of(where, task, control, options)


def _tasks_of(where: str, record: dict, control, options: ImportOptions) -> Iterator[Task]:
    data = mapping(record.get("data"), where, '"data"')
    if options.text_key not in data:
        cause = f'{where}: data has no "{options.text_key}" (its keys: {", ".join(map(str, data)) or "none"})'
        raise AdvisedError(lambda fixes: f"{cause}; {fixes['text-key'][1]}")
    text = task_text(data[options.text_key], where, f'"data.{options.text_key}"')
    annotations = items(record.get("annotations", []), where, '"annotations"')
    kept, dropped = [], Counter()
    for annotation in annotations:
        annotation = mapping(annotation, where, "an annotation")
        if annotation.get("was_cancelled"):
            continue
        if "result" not in annotation:
            raise ValueError(f'{where}: an annotation without "result"; export the project again (Export > JSON)')
        result = [mapping(item, where, "a result item") for item in items(annotation["result"], where, '"result"')]
        labels = [
            item
            for item in result
            if item.get("type") == "labels"
            and control is not None
            and item.get("from_name") == control[0]
            and (control[1] is None or item.get("to_name") in (None, control[1]))
        ]
        for item in result:
            if control is not None and item.get("from_name") == control[0] and item.get("type") != "labels":
                raise ValueError(
                    f"{where}: a result of the Labels control {control[0]!r} has type {item.get('type')!r}, not "
                    '"labels"; export the project again or fix the result'
                )
        if result and not labels:
            kinds = sorted({str(item.get("type")) for item in result})
            dropped[f"annotation without a span of the labels control ({', '.join(kinds)})"] += 1
            continue
        kept.append((annotation, result_spans(labels, text, where, options.offsets)))
    if not kept:
        reason = "not annotated" if not annotations else None
        if reason is None and sum(dropped.values()) == 0:
            yield Task(where, "", "ignore")  # every annotation cancelled
            return
        yield Task(where, "", "ignore", skip=reason or next(iter(dropped)))
        return
    if all(isinstance(annotation.get("created_at"), str) for annotation, _ in kept):
        kept.sort(key=lambda item: item[0]["created_at"])  # ISO 8601 times: first and last as created
    chosen = _chosen(kept, options.annotators)
    if not chosen:
        yield Task(where, "", "ignore", skip="no ground-truth annotation (--annotators ground-truth)")
        return
    if len(chosen) < len(kept) and options.annotators != "majority":
        dropped[NOT_KEPT.format(options.annotators)] += len(kept) - len(chosen)
    region, region_chars = task_regions(data, where)
    meta = record.get("meta") or data.get("meta")
    meta = dict(meta) if isinstance(meta, dict) else {}
    for number, (annotation, spans) in enumerate(chosen):
        annotator, tied = annotator_of(annotation), []
        if options.annotators == "majority":
            spans, tied = majority_spans(kept)
            annotator = [annotator_of(a) for a, _ in kept]
            meta = {**meta, "annotators": len(kept), "span_votes": [[s.start, s.end, s.label, s.votes] for s in spans]}
            if tied:
                meta["tied_spans"] = [[s.start, s.end, s.label, s.votes] for s in tied]
                dropped[TIED] += len(tied)
        if annotation.get("id") is not None and options.annotators != "majority":
            meta = {**meta, "annotation_id": annotation["id"]}
        each = options.annotators == "each"
        yield Task(
            where + (f" annotation {annotation.get('id', number + 1)}" if each else ""),
            text,
            "accept",
            spans,
            region=region,
            region_chars=region_chars,
            group=f"text:{text}" + (f"\0annotation {where} {number}" if each else ""),
            meta=meta or None,
            task_id=record.get("id"),
            annotator=annotator,
            also_skipped=dict(dropped) if number == 0 else {},
            new_record=number == 0,
            undecided=tied,
        )


def _chosen(kept, policy: str):
    if policy == "first":
        return kept[:1]
    if policy == "last":
        return kept[-1:]
    if policy == "ground-truth":
        return [item for item in kept if item[0].get("ground_truth")][-1:]
    if policy == "majority":
        return kept[:1]  # one Task, its spans the majority's
    return kept


MODEL_VERSION = "spacy-depner"


def label_studio_result(spans, from_name: str = "label", to_name: str = "text") -> list:
    """Label Studio result items (type ``labels``) of ``spans`` (``rank``'s
    span records: ``start``, ``end``, ``text``, ``label``, ``score``), each
    with its probability as ``score`` and an ``id`` unique in the task."""
    return [
        {
            "id": f"s{index}",
            "from_name": from_name,
            "to_name": to_name,
            "type": "labels",
            "value": {"start": span["start"], "end": span["end"], "text": span["text"], "labels": [span["label"]]},
            "score": span["score"],
        }
        for index, span in enumerate(spans)
    ]


def label_studio_prediction(spans, score: float, from_name="label", to_name="text", version=MODEL_VERSION) -> Dict:
    """A prediction (module docstring): ``spans`` as ``labels`` results, ``score`` the task's."""
    return {"model_version": version, "score": score, "result": label_studio_result(spans, from_name, to_name)}


def label_studio_task(record: Dict[str, Any], from_name: str = "label", to_name: str = "text") -> Dict[str, Any]:
    """A ``rank`` record as Label Studio imports it (module docstring), its
    prediction for the ``Labels`` control ``from_name`` on the ``Text`` ``to_name``."""
    data = {"text": record["text"], "meta": record.get("meta", {}), **region_fields(record)}
    return {
        "data": data,
        "predictions": [label_studio_prediction(record["spans"], record["score"], from_name, to_name)],
    }


EXAMPLE_CONFIG = (
    '<View><Labels name="label" toName="text"><Label value="PER"/></Labels><Text name="text" value="$text"/></View>'
)


class LabelingConfig(NamedTuple):
    """The NER control of a labeling config (module docstring)."""

    from_name: str = "label"
    to_name: str = "text"
    text_key: str = "text"
    labels: Tuple[str, ...] = ()


def labeling_config(xml: Optional[str]) -> LabelingConfig:
    """The ``LabelingConfig`` of the first ``Labels`` control on a ``Text`` of
    ``xml`` (None or empty: the defaults); none, or not XML, is a ValueError saying what to add."""
    if not xml:
        return LabelingConfig()
    try:
        root = ElementTree.fromstring(xml)
    except ElementTree.ParseError as error:
        raise ValueError(f"The labeling config is not XML ({error}); give one such as {EXAMPLE_CONFIG}") from None
    objects = {element.get("name"): element for element in root.iter() if element.tag.lower() == "text"}
    for control in root.iter():
        if control.tag.lower() != "labels" or control.get("toName") not in objects:
            continue
        value = objects[control.get("toName")].get("value", "")
        if not value.startswith("$") or len(value) < 2:
            raise ValueError(
                f'The Text object "{control.get("toName")}" has value {value!r}: give the data key as value="$text"'
            )
        labels = tuple(label.get("value") for label in control.iter() if label.tag.lower() == "label")
        return LabelingConfig(control.get("name"), control.get("toName"), value[1:], labels)
    raise ValueError(f"The labeling config has no Labels control on a Text object: add one, e.g. {EXAMPLE_CONFIG}")
