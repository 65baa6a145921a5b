"""Training an entity component on the annotations a Label Studio ML backend
received: the annotated tasks (a Label Studio JSON export: ``[{"id", "data",
"annotations": [{"id", "result", ...}]}]``) are read, as the records they
are, exactly as ``import-annotations label-studio`` reads an export
(``readers.annotation_tools.read_annotations``: a task's ``region_chars``
or ``region`` in ``data`` is the reviewed stretch, every token outside it
missing, spans placed as the ``ImportOptions`` say: ``alignment_mode``,
``skip_misaligned``), and the component of a fresh copy of the pipeline
trains on them (the components before it frozen: they only annotate its
input, e.g. the parser whose trees it reads; a listening tok2vec is read as
it is).

What cannot be used is skipped and counted, never fatal for the rest: the
importer's own skips (``ImportCounts.skipped``), and a task whose reading
is an error (overlapping spans in flat mode, a span whose text is not at its
offsets) is left out (``LEFT_OUT``, its error kept by task id, its fix
said as ``serve`` can follow it: ``SERVE_FIXES``, ``serve_message``)."""

import random
from dataclasses import replace
from typing import Any, Dict, List, Optional, Tuple

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import minibatch

from ..pipeline.uncertainty import only_entity_pipe
from ..readers.annotation_tasks import AdvisedError, ImportOptions, has_region
from ..readers.annotation_tools import ImportCounts, read_annotations
from ..readers.label_studio_format import NOT_KEPT
from ..util.pipelines import load_pipeline


def import_settings(pipe) -> Dict[str, str]:
    """``read_annotations``' mode and span groups for the component ``pipe``:
    ``flat`` for a component writing ``doc.ents``, else ``nested`` with its
    own span groups."""
    settings = {"incorrect_spans_key": pipe.settings.get("incorrect_spans_key") or "incorrect_spans"}
    if pipe.writes_ents:
        return {**settings, "mode": "flat"}
    return {
        **settings,
        "mode": "nested",
        "spans_key": pipe.spans_key,
        "annotated_key": pipe.settings.get("annotated_key") or "annotated",
    }


LEFT_OUT = "task left out: its annotation cannot be read"
SERVE_FIXES = {  # the importer's fixes (annotation_tasks.IMPORT_FIXES) as serve's options and Label Studio give them
    "strict": (
        "the spans off token boundaries",
        "snap the spans with serve's --alignment-mode contract or expand, skip them with --skip-misaligned, or fix "
        "the annotation in Label Studio (select whole words)",
    ),
    "no-whole-token": (
        "the spans with no whole token inside",
        "snap the spans to the tokens they touch with serve's --alignment-mode expand, skip them with "
        "--skip-misaligned, or fix the annotation in Label Studio (select whole words)",
    ),
    "utf-16": (
        "the spans whose offsets look like UTF-16 code units",
        "start serve with --offsets utf-16, or skip these spans with --skip-misaligned",
    ),
    "overlap": (
        "overlapping spans",
        "serve a component that writes span groups (--component, e.g. a nested_ner), or fix the annotation in "
        "Label Studio so that no two spans overlap",
    ),
    "text-key": (
        "a text under another key",
        "make the labeling config's Text object read the task's text (value=\"$KEY\", KEY a data key of the task)",
    ),
    "controls": ("several Labels controls", "keep one Labels control in the project's labeling config"),
}


SERVE_REASONS = {NOT_KEPT.format("last"): "annotation not kept (serve reads the last annotation of a task)"}


def serve_message(error: Exception) -> str:
    """``error``'s message, its fix as ``serve`` can follow it (``SERVE_FIXES``) where the importer's names its own options."""
    return error.advised(SERVE_FIXES) if isinstance(error, AdvisedError) else str(error)


def read_tasks(tasks: List[Dict[str, Any]], nlp: Language, pipe, options: ImportOptions, counts: ImportCounts):
    """The Docs of ``tasks`` as import-annotations reads them, what it skips counted as serve says it (``SERVE_REASONS``)."""
    docs = read_annotations("label-studio", tasks, nlp, counts=counts, options=options, **import_settings(pipe))
    for reason, said in SERVE_REASONS.items():
        if reason in counts.skipped:
            counts.skipped[said] += counts.skipped.pop(reason)
    return docs


def annotated_docs(
    tasks: List[Dict[str, Any]],
    nlp: Language,
    component: Optional[str],
    text_key: str = "text",
    options: Optional[ImportOptions] = None,
    counts: Optional[ImportCounts] = None,
    left_out: Optional[Dict[str, str]] = None,
) -> List[Doc]:
    """The training Docs of Label Studio ``tasks`` (export format), tokenised
    by ``nlp``, the text taken from ``data[text_key]``, as ``import-annotations``
    reads an export with ``options`` (its ``text_key`` replaced). Where the
    whole cannot be read, each task is read alone and those that cannot be
    are left out: counted in ``counts.skipped`` (``LEFT_OUT``), their error
    in ``left_out`` by task id."""
    pipe = only_entity_pipe(nlp, component)
    options = replace(options or ImportOptions(), text_key=text_key)
    counts = ImportCounts() if counts is None else counts
    left_out = {} if left_out is None else left_out
    try:
        found = ImportCounts()
        docs = read_tasks(tasks, nlp, pipe, options, found)
    except ValueError:
        docs = []
        for task in tasks:
            try:
                docs += read_tasks([task], nlp, pipe, options, counts)
            except ValueError as error:
                counts.skipped[LEFT_OUT] += 1
                left_out[str(task.get("id"))] = serve_message(error)
        return docs
    for name, value in found.__dict__.items():
        setattr(counts, name, getattr(counts, name) + value)
    return docs


def training_examples(nlp: Language, pipe_name: str, docs: List[Doc]) -> List[Example]:
    """Examples whose predicted Docs have the reference's tokens and the
    annotations of the components before ``pipe_name``."""
    before = [nlp.get_pipe(name) for name in nlp.pipe_names[: nlp.pipe_names.index(pipe_name)]]
    examples = []
    for reference in docs:
        predicted = Doc(nlp.vocab, words=[t.text for t in reference], spaces=[bool(t.whitespace_) for t in reference])
        for component in before:
            predicted = component(predicted)
        examples.append(Example(predicted, reference))
    return examples


def check_labels(docs: List[Doc], pipe) -> None:
    """A ValueError naming the labels of ``docs`` that the component does not know."""
    found = {span.label_ for doc in docs for span in doc.ents}
    found |= {span.label_ for doc in docs for span in doc.spans.get(pipe.spans_key, [])}
    unknown = sorted(found - set(pipe.labels))
    if unknown:
        raise ValueError(
            f"The annotations hold labels the component {pipe.name} does not know: {', '.join(unknown)} "
            f"(it knows {', '.join(pipe.labels)}); keep the labeling config's labels to those, "
            "or train a pipeline with them"
        )


def check_regions(tasks: List[Dict[str, Any]], pipe) -> None:
    """A ValueError when tasks review a region only (``region`` or
    ``region_chars`` in ``data``) but the component ``pipe`` cannot leave
    the tokens outside it missing (it writes a span group and has no
    ``annotated_key``: every token would count as reviewed)."""
    if pipe.writes_ents or pipe.settings.get("annotated_key"):
        return
    regional = [task.get("id") for task in tasks if has_region(task.get("data") or {})]
    if regional:
        raise ValueError(
            f"Tasks {regional[:5]} review a region only, but {pipe.name} has no annotated_key, so it would read "
            "every token outside the region as holding no mention: serve a nested_ner with annotated_key set "
            '(e.g. "annotated"), or annotate whole texts'
        )


def retrained_pipeline(
    pipeline: str,
    component: Optional[str],
    tasks: List[Dict[str, Any]],
    text_key: str = "text",
    epochs: int = 10,
    batch_size: int = 8,
    seed: int = 0,
    options: Optional[ImportOptions] = None,
    counts: Optional[ImportCounts] = None,
    left_out: Optional[Dict[str, str]] = None,
) -> Tuple[Language, Dict[str, float]]:
    """A fresh copy of ``pipeline`` whose entity component ``component``
    trained ``epochs`` passes (batches of ``batch_size``, shuffled with
    ``seed``) on the annotated Label Studio ``tasks`` read as
    ``annotated_docs`` reads them (``options``, ``counts``, ``left_out``);
    with the last pass's losses. No annotated Doc is a ValueError."""
    nlp = load_pipeline(pipeline)
    pipe = only_entity_pipe(nlp, component)
    check_regions(tasks, pipe)
    counts = ImportCounts() if counts is None else counts
    docs = [doc for doc in annotated_docs(tasks, nlp, component, text_key, options, counts, left_out) if len(doc)]
    if not docs:
        raise ValueError(
            "No annotation to train on: every task received was skipped, cancelled or empty "
            f"(skipped: {dict(counts.skipped) or 'none'})"
            + "".join(f"; task {task}: {error}" for task, error in list((left_out or {}).items())[:3])
        )
    check_labels(docs, pipe)
    examples = training_examples(nlp, pipe.name, docs)
    optimizer = nlp.resume_training()
    order = random.Random(seed)
    losses: Dict[str, float] = {}
    for _ in range(epochs):
        losses = {}
        order.shuffle(examples)
        for batch in minibatch(examples, batch_size):
            pipe.update(batch, sgd=optimizer, losses=losses)
    return nlp, losses
