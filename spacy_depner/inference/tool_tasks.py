"""``rank``'s task records (``review_tasks``) in each annotation tool's own
import format (``rank --format``):

* ``records``: the records as they are (Prodigy-like: ``text``, ``tokens``,
  ``spans`` with probabilities, ``score``, ``meta``).
* ``prodigy``: Prodigy's task format (https://prodi.gy/docs/api-interfaces):
  a ``span`` task is a binary ``ner`` task (``"_view_id": "ner"``, as
  ``ner.teach`` streams it: one proposed span, its probability as ``score``,
  accept or reject), a ``doc`` or ``region`` task a ``ner_manual`` one; every
  task has ``_input_hash`` (of its text: tasks on one text share it) and
  ``_task_hash`` (of the text, the spans and the region), signed 32-bit
  integers as Prodigy's are (not Prodigy's own values: Prodigy keeps hashes
  it is given).
* ``label-studio``: Label Studio's task import format
  (https://labelstud.io/guide/predictions): ``data`` holds the text (with
  ``meta``, and the region as ``region`` and ``region_chars``), one
  prediction whose ``result`` items are ``labels`` regions with each span's
  probability as ``score`` and whose ``score`` is the task's rank measure
  (what Label Studio sorts the data manager by, "Prediction score").
* ``doccano``: doccano's sequence-labelling JSONL import
  (https://doccano.github.io/doccano/tutorial/#import-dataset): ``text`` and
  ``label`` as ``[start_char, end_char, label]`` triples; every other key is
  kept by doccano as metadata.

A region task carries ``"region_chars": [start_char, end_char_exclusive]``
(character offsets of the task's own text: at the top level and in ``meta``
for Prodigy and doccano, in ``data`` for Label Studio) besides the token
``region``, so that an importer maps it back by characters whatever its
tokenizer. Label Studio and doccano have no accept/reject task for one
proposed span: ``--unit span`` is for Prodigy (and the records) only."""

import hashlib
import json
from typing import Any, Callable, Dict

TASK_FORMATS = ("records", "prodigy", "label-studio", "doccano")
BINARY_FORMATS = ("records", "prodigy")  # the formats with an accept/reject task (rank --unit span)
MODEL_VERSION = "spacy-depner"


def check_task_format(format: str, unit: str) -> None:
    """A ValueError naming the fix for an unknown ``format`` or a ``unit`` its tool cannot review."""
    if format not in TASK_FORMATS:
        raise ValueError(f"Unknown task format {format!r}: use one of {', '.join(TASK_FORMATS)}")
    if unit == "span" and format not in BINARY_FORMATS:
        raise ValueError(
            f"--format {format} with --unit span: {format} has no accept/reject task for one proposed span; "
            "use --unit region (annotate the uncertain stretch) or --format prodigy (binary ner tasks)"
        )


def signed_hash(value: Any) -> int:
    """A signed 32-bit integer hash of ``value``'s canonical JSON (the range of Prodigy's hashes)."""
    payload = json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf8")
    return int.from_bytes(hashlib.blake2b(payload, digest_size=4).digest(), "big", signed=True)


def prodigy_task(record: Dict[str, Any]) -> Dict[str, Any]:
    """A record as a Prodigy task (module docstring): a span task stays a
    binary ``ner`` task, the others become ``ner_manual`` tasks."""
    input_hash = signed_hash({"text": record["text"]})
    view = record.get("_view_id", "ner_manual")
    spans = [[span["start"], span["end"], span["label"]] for span in record["spans"]]
    task_hash = signed_hash({"input": input_hash, "spans": spans, "region": record.get("region_chars"), "view": view})
    return {**record, "_input_hash": input_hash, "_task_hash": task_hash, "_view_id": view}


def label_studio_result(spans, from_name: str = "label", to_name: str = "text") -> list:
    """Label Studio result items (type ``labels``) of a record's ``spans``,
    each with its probability as ``score`` and an ``id`` unique in the task."""
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


def label_studio_prediction(record: Dict[str, Any], from_name: str = "label", to_name: str = "text") -> Dict:
    """The prediction of a record: its spans as ``labels`` results, its ``score`` the record's."""
    return {
        "model_version": MODEL_VERSION,
        "score": record["score"],
        "result": label_studio_result(record["spans"], from_name, to_name),
    }


def label_studio_task(record: Dict[str, Any], from_name: str = "label", to_name: str = "text") -> Dict[str, Any]:
    """A record as Label Studio imports it: ``data`` the text (with the
    region and meta), one prediction (``label_studio_prediction``) for the
    labeling config's ``Labels`` control ``from_name`` on its ``Text``
    object ``to_name``."""
    data = {"text": record["text"], "meta": record.get("meta", {})}
    for key in ("region", "region_chars"):
        if key in record:
            data[key] = record[key]
    return {"data": data, "predictions": [label_studio_prediction(record, from_name, to_name)]}


def doccano_task(record: Dict[str, Any]) -> Dict[str, Any]:
    """A record as doccano's sequence-labelling JSONL line (module docstring)."""
    task = {"text": record["text"], "label": [[span["start"], span["end"], span["label"]] for span in record["spans"]]}
    if "region_chars" in record:
        task["region_chars"] = record["region_chars"]
    return {**task, "score": record["score"], "meta": record.get("meta", {})}


CONVERTERS: Dict[str, Callable[[Dict[str, Any]], Dict[str, Any]]] = {
    "prodigy": prodigy_task,
    "label-studio": label_studio_task,
    "doccano": doccano_task,
}
