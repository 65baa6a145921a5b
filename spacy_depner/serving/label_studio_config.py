"""What a Label Studio labeling config (its XML ``label_config``, e.g.
``<View><Labels name="label" toName="text"><Label value="PER"/></Labels>
<Text name="text" value="$text"/></View>``) says a named-entity prediction
must look like: the ``Labels`` control (``from_name``), the ``Text`` object
it labels (``to_name``), the data key the text is under (the object's
``value`` without its ``$``) and the label values
(https://labelstud.io/tags/labels, https://labelstud.io/tags/text)."""

import xml.etree.ElementTree as ElementTree
from typing import NamedTuple, Optional, Tuple

EXAMPLE = (
    '<View><Labels name="label" toName="text"><Label value="PER"/></Labels><Text name="text" value="$text"/></View>'
)


class LabelingConfig(NamedTuple):
    """The NER control of a labeling config (module docstring)."""

    from_name: str = "label"
    to_name: str = "text"
    text_key: str = "text"
    labels: Tuple[str, ...] = ()


def labeling_config(xml: Optional[str]) -> LabelingConfig:
    """The ``LabelingConfig`` of the first ``Labels`` control on a ``Text``
    object of ``xml`` (None or empty: the defaults, ``label`` on ``text``
    under ``$text``); a config without one, or not XML, is a ValueError
    saying what to add."""
    if not xml:
        return LabelingConfig()
    try:
        root = ElementTree.fromstring(xml)
    except ElementTree.ParseError as error:
        raise ValueError(f"The labeling config is not XML ({error}); give one such as {EXAMPLE}") from None
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
    raise ValueError(f"The labeling config has no Labels control on a Text object: add one, e.g. {EXAMPLE}")
