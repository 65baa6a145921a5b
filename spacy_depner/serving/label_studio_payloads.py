"""The JSON bodies Label Studio sends an ML backend, checked field by field:
whatever does not have the shape Label Studio's ML backend protocol gives it
(``label_studio_ml/api.py`` in HumanSignal/label-studio-ml-backend) is a
ValueError naming the field (``annotation``, ``annotations[0].data``), which
the web layer answers with a 400."""

from typing import Any, Dict, List, Optional

from ..readers.label_studio_format import LabelingConfig

DEFAULT_PROJECT = "default"  # the project of requests that name none


def listed(value) -> list:
    """``value`` as a list (a webhook's ``many`` payloads are lists, the others one object)."""
    return value if isinstance(value, list) else [value]


def field_error(field: str, value: Any, wanted: str) -> ValueError:
    shown = repr(value) if len(repr(value)) < 80 else repr(value)[:77] + "..."
    return ValueError(f'The request field "{field}" is {shown}: give {wanted}')


def json_object(value: Any, field: str) -> Dict[str, Any]:
    if not isinstance(value, dict):
        raise field_error(field, value, "a JSON object")
    return value


def project_key(value: Any) -> str:
    """The project a request is about: Label Studio sends ``"ID.TIMESTAMP"``
    (``/setup``, ``/predict``), ``{"id": ID}`` (webhooks) or the id; none:
    ``DEFAULT_PROJECT``."""
    if isinstance(value, dict):
        value = value.get("id")
    if value is None or value == "":
        return DEFAULT_PROJECT
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        raise field_error("project", value, 'the project id, e.g. "3" or "3.1700000000"')
    return str(value).split(".", 1)[0]


def optional_text(body: Dict[str, Any], field: str) -> Optional[str]:
    value = body.get(field)
    if value is not None and not isinstance(value, str):
        raise field_error(field, value, "a string (the labeling config's XML)")
    return value or None


def task_text(task: Any, config: LabelingConfig, field: str = "tasks") -> str:
    """The text of a task under the config's data key; else a ValueError naming the task and its keys."""
    data = task.get("data") if isinstance(task, dict) else None
    if not isinstance(data, dict) or not isinstance(data.get(config.text_key), str):
        keys = sorted(data) if isinstance(data, dict) else []
        raise ValueError(
            f"{field}: task {task.get('id') if isinstance(task, dict) else task!r}: no text under "
            f"data.{config.text_key} (data keys: {keys}); the labeling config's Text object must read it "
            f'(value="${config.text_key}")'
        )
    return data[config.text_key]


def annotation(value: Any, field: str) -> Dict[str, Any]:
    """An annotation object: a JSON object whose ``result``, if any, is a list of objects."""
    found = json_object(value, field)
    result = found.get("result", [])
    if not isinstance(result, list) or not all(isinstance(item, dict) for item in result):
        raise field_error(f"{field}.result", result, "a list of Label Studio result objects")
    return found


def exported_tasks(value: Any, field: str = "annotations") -> List[Dict[str, Any]]:
    """A Label Studio JSON export: a non-empty list of tasks, each a JSON
    object whose ``data`` is an object and ``annotations`` a list of annotations."""
    if not isinstance(value, list) or not value:
        raise field_error(field, value, "a non-empty list of exported tasks with annotations")
    for index, task in enumerate(value):
        place = f"{field}[{index}]"
        json_object(task, place)
        json_object(task.get("data", {}), f"{place}.data")
        annotations = task.get("annotations", [])
        if not isinstance(annotations, list):
            raise field_error(f"{place}.annotations", annotations, "a list of annotations")
        for number, found in enumerate(annotations):
            annotation(found, f"{place}.annotations[{number}]")
    return value


def annotation_event(action: str, body: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The tasks of an ``ANNOTATION_CREATED`` / ``ANNOTATION_UPDATED`` /
    ``ANNOTATIONS_CREATED`` payload, each ``{"id", "data", "annotations": [its
    annotations in the event]}``."""
    many = action == "ANNOTATIONS_CREATED"
    tasks: Dict[Any, Dict[str, Any]] = {}
    for index, task in enumerate(listed(body.get("task", []))):
        place = f"task[{index}]" if many else "task"
        json_object(task, place)
        json_object(task.get("data", {}), f"{place}.data")
        tasks[task.get("id")] = {"id": task.get("id"), "data": task.get("data", {}), "annotations": []}
    field = "annotation" if "annotation" in body or not many else "annotations"
    found = body.get(field, [])
    if many and not isinstance(found, list):
        raise field_error(field, found, "a list of annotations")
    for index, value in enumerate(listed(found)):
        place = f"{field}[{index}]" if isinstance(found, list) else field
        item = annotation(value, place)
        task_id = item.get("task")
        task = tasks.get(task_id.get("id") if isinstance(task_id, dict) else task_id)
        if task is None:
            raise ValueError(f'{action}: {place} (id {item.get("id")}) comes without its task in the field "task"')
        task["annotations"].append(item)
    return list(tasks.values())


def deleted_annotations(body: Dict[str, Any]) -> set:
    """The ids of the annotations an ``ANNOTATIONS_DELETED`` payload deletes."""
    found = body.get("annotations", [])
    if not isinstance(found, list):
        raise field_error("annotations", found, "a list of annotations")
    return {json_object(value, f"annotations[{index}]").get("id") for index, value in enumerate(found)}
