"""displaCy options that give every label of a pipeline its own colour, the
same in the "span" style (nested and overlapping mentions, one span group)
and in the "ent" style (``doc.ents``)."""

from typing import Dict, Iterable, List, Optional, Union

from spacy.language import Language

# Tableau's qualitative colours and a few more of the same weight, each readable in both styles:
# as the background of the "ent" style under black text (contrast with black >= 4.5, WCAG AA) and
# as the bar under a span on the white page of the "span" style (contrast with white >= 2).
PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#e15759",
    "#b07aa1",
    "#499894",
    "#b6992d",
    "#d37295",
    "#9d7660",
    "#86bcb6",
    "#d4a6c8",
    "#bab0ac",
    "#6b9ac4",
    "#e07a5f",
    "#7fb069",
    "#a06cd5",
    "#d4a373",
    "#5fa8a0",
    "#c9a227",
    "#ef8a62",
)


def displacy_options(source: Union[Language, Iterable[str]], *, spans_key: Optional[str] = None) -> Dict[str, object]:
    """The ``options`` of ``spacy.displacy.render`` for ``style="span"`` or
    ``"ent"``: ``{"colors": {label: colour}, "spans_key": key}``.

    source: a pipeline (its labels: those of the components that write
    ``doc.ents`` or ``doc.spans``, in pipeline order) or the labels
    themselves. The i-th label (displaCy ignores case) gets ``PALETTE[i]``,
    colours repeating after 20 labels. spans_key: the span group the "span"
    style shows; by default, for a pipeline, that of its one component with a
    span group (``spans_key`` of nested_ner or hypergraph_ner, ``key`` of
    spaCy's spancat); without one, displaCy's default "sc" (the key is left
    out of the options)."""
    if isinstance(source, Language):
        labels, keys = _pipeline_labels(source), _pipeline_spans_keys(source)
        if spans_key is None and len(set(keys.values())) > 1:
            raise ValueError(
                f"The pipeline writes several span groups ({', '.join(f'{n}: {k!r}' for n, k in keys.items())}): "
                "pass the one to show as spans_key=..."
            )
        if spans_key is None and keys:
            spans_key = next(iter(keys.values()))
    else:
        labels = [] if isinstance(source, str) else list(source)
        if isinstance(source, str) or not all(isinstance(label, str) and label for label in labels):
            raise ValueError(f"displacy_options takes a pipeline or an iterable of label strings, not {source!r}")
    distinct = list(dict.fromkeys(label.upper() for label in labels))
    if not distinct:
        raise ValueError(
            "No labels to colour: the pipeline has no component that writes labelled doc.ents or "
            "doc.spans (initialize it first), or the label list is empty."
        )
    colour = {upper: PALETTE[i % len(PALETTE)] for i, upper in enumerate(distinct)}
    options: Dict[str, object] = {"colors": {label: colour[label.upper()] for label in dict.fromkeys(labels)}}
    if spans_key is not None:
        options["spans_key"] = spans_key
    return options


def _writes_entities(nlp: Language, name: str) -> bool:
    assigns = nlp.get_pipe_meta(name).assigns
    return "doc.ents" in assigns or "doc.spans" in assigns


def _pipeline_labels(nlp: Language) -> List[str]:
    """The labels of the components that write doc.ents or doc.spans, in pipeline order."""
    return [
        label for name, pipe in nlp.pipeline if _writes_entities(nlp, name) for label in getattr(pipe, "labels", ())
    ]


def _pipeline_spans_keys(nlp: Language) -> Dict[str, str]:
    """Component name -> the span group it writes its mentions to."""
    keys = {}
    for name, pipe in nlp.pipeline:
        if "doc.spans" in nlp.get_pipe_meta(name).assigns:
            key = (getattr(pipe, "settings", None) or {}).get("spans_key", getattr(pipe, "key", None))
            if isinstance(key, str):
                keys[name] = key
    return keys
