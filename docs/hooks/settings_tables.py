"""Tables read from the package itself: a component's factory settings and
defaults (spaCy's factory meta, the factory's signature and docstring), and
the functions it registers (its entry points)."""

import html
import inspect
import json
import re
from importlib.metadata import entry_points

SETTINGS_MARKER = re.compile(r"^<!--\s*settings:\s*(\w+)\s*-->\s*$", re.MULTILINE)
ARCHITECTURES_MARKER = re.compile(r"^<!--\s*architectures\s*-->\s*$", re.MULTILINE)
# The registries a spaCy package adds functions to, as their entry-point groups.
REGISTRIES = {
    "spacy_architectures": "architecture",
    "spacy_misc": "suggester",
    "spacy_readers": "reader",
    "spacy_scorers": "scorer",
    "spacy_callbacks": "callback",
}
PACKAGE = "spacy_depner"
CODE_SPAN = re.compile(r"``(.+?)``|`([^`]+)`")
# Characters that markdown (emphasis, links, code) or the table (a cell's end) would read inside a cell.
MARKDOWN_CHARACTERS = set("_*[]`|\\")


def _code(text: str) -> str:
    """``text`` as an HTML code element that may wrap after a dot (a <wbr>, which a copy of the
    text leaves out), never inside a word, so that a long dotted name does not widen its table column."""
    pieces = []
    for i, char in enumerate(text):
        pieces.append(f"&#{ord(char)};" if char in MARKDOWN_CHARACTERS else html.escape(char, quote=False))
        if char == "." and text[i + 1 : i + 2].isalpha():
            pieces.append("<wbr>")
    return "<code>" + "".join(pieces) + "</code>"


def _cell(text: str) -> str:
    """``text`` on one line for a table cell: its code spans as ``_code``, ``|`` and ``<`` escaped elsewhere."""
    # split() gives the text between code spans at 0, 3, 6, ... and each span's two groups between them.
    pieces = CODE_SPAN.split(" ".join(text.split()))
    return "".join(
        piece.replace("|", "\\|").replace("<", "&lt;") if i % 3 == 0 else _code(piece)
        for i, piece in enumerate(pieces)
        if piece is not None
    )


def _package_entry_points(group: str) -> list:
    return sorted(
        (ep for ep in entry_points(group=group) if ep.value.startswith(PACKAGE + ".")), key=lambda ep: ep.name
    )


def _top_level_split(text: str, separator: str = ";") -> list:
    """``text`` split at ``separator`` outside brackets."""
    pieces, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += (char in "([{") - (char in ")]}")
        if char == separator and depth == 0:
            pieces.append(text[start:i])
            start = i + 1
    return pieces + [text[start:]]


def _described(doc: str) -> dict:
    """{setting: description} from docstrings written as ``setting (range):
    what it does; setting: ...`` or as ``* ``setting`` (range): ...`` bullets."""
    doc = re.sub(r"^\* ``(\w+)``", r"\1", doc, flags=re.MULTILINE)  # a bullet: "setting (range): ..."
    pieces = [
        p
        for block in re.split(r"\n\s*\n|\n(?=\w+\s*(?:\([^)]*\))?:)", doc)
        for p in _top_level_split(" ".join(block.split()))
    ]
    found = {}
    for piece in pieces:
        match = re.match(r"\s*(\w+)\s*((?:\([^)]*\))?):\s*(.+)", piece)
        if match:
            found[match.group(1)] = f"{match.group(2)} {match.group(3)}".strip()
    return found


def _default(value: object) -> str:
    """A default as the config writes it; a nested block as its registered function's name."""
    if isinstance(value, dict):
        registered = [v for k, v in value.items() if k.startswith("@")]
        if registered:
            return _code(registered[0])
    return _code(json.dumps(value))


def _type_name(annotation: object) -> str:
    if annotation is inspect.Parameter.empty:
        return ""
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "").replace("thinc.model.", "")


def settings_table(component: str) -> str:
    """The factory settings of ``component`` (a factory name) with type, default and description."""
    import spacy

    from spacy_depner.pipeline import confidence_settings

    meta = spacy.blank("en").get_factory_meta(component)
    factory = {ep.name: ep for ep in entry_points(group="spacy_factories")}[component].load()
    parameters = inspect.signature(factory).parameters
    descriptions = {**_described(confidence_settings.__doc__ or ""), **_described(factory.__doc__ or "")}
    lines = ["| setting | type | default | description |", "|---|---|---|---|"]
    for name, value in meta.default_config.items():
        kind = _type_name(parameters[name].annotation) if name in parameters else ""
        lines.append(f"| `{name}` | {_cell(kind)} | {_default(value)} | {_cell(descriptions.get(name, ''))} |")
    return (
        f'Settings of `{component}` and their defaults, as `spacy.blank("en").add_pipe("{component}")` '
        "reads them (generated from the factory; set them in the component's config block):\n\n"
        + "\n".join(lines)
        + "\n"
    )


def _summary(function: object) -> str:
    """The first sentence of a function's docstring (a full stop outside brackets, then a space)."""
    paragraph = " ".join((inspect.getdoc(function) or "").split("\n\n")[0].split())
    sentence = ""
    for piece in _top_level_split(paragraph, "."):
        sentence += piece + "."
        if paragraph[len(sentence) :][:1] in (" ", ""):
            break
    return sentence.removesuffix("..") if paragraph else ""


def _signature(function: object) -> str:
    """The settings a config block gives ``function``, each with its default if it has one."""
    shown = []
    for name, parameter in inspect.signature(function).parameters.items():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        default = "" if parameter.default is parameter.empty else f" = {json.dumps(parameter.default, default=str)}"
        shown.append(_code(f"{name}{default}"))
    return ", ".join(shown)


def architectures_table() -> str:
    """Every function the package registers with spaCy, by registry."""
    lines = ["| registered name | kind | settings (default) | what it is |", "|---|---|---|---|"]
    for group, kind in REGISTRIES.items():
        for ep in _package_entry_points(group):
            function = ep.load()
            lines.append(f"| {_code(ep.name)} | {kind} | {_signature(function)} | {_cell(_summary(function))} |")
    return "\n".join(lines) + "\n"


def fill_markers(markdown: str) -> str:
    """``markdown`` with each settings and architectures marker replaced by its table."""
    markdown = SETTINGS_MARKER.sub(lambda m: settings_table(m.group(1)), markdown)
    return ARCHITECTURES_MARKER.sub(lambda m: architectures_table(), markdown)
