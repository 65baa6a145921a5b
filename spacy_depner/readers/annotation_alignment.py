"""A task's spans and reviewed region placed on the tokens of its Doc, as
spaCy's ``Doc.char_span`` places character offsets: ``strict`` (the span
must start and end on token boundaries), ``contract`` (the tokens wholly
inside it) or ``expand`` (every token it touches). The whitespace at either
end of a selection is never part of a span (annotation tools let a
selection take the space after a word); the text a tool recorded for a
span must be the text at its offsets. A span off token boundaries is
returned as the description of the problem (so that an import can report
every one, or skip and count them); every other fault is a ValueError."""

from typing import Optional, Tuple, Union

from spacy.tokens import Doc, Span

from .annotation_tasks import Task, TaskSpan


def describe(span: Span) -> str:
    """A span in words: its text, label, tokens and characters."""
    return (
        f"{span.text!r} ({span.label_}, tokens {span.start}..{span.end - 1}, "
        f"characters {span.start_char}..{span.end_char})"
    )


def without_outer_whitespace(text: str, start: int, end: int) -> Optional[Tuple[int, int]]:
    """``start``, ``end`` moved past the whitespace at either end of ``text[start:end]``; None if it is all whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def aligned_span(doc: Doc, span: TaskSpan, where: str, mode: str = "strict") -> Union[Span, str]:
    """``span`` as a Span of ``doc``: by its token indices if it has them
    (its character offsets, if any, must be theirs), else by its character
    offsets in ``mode``; a str describing the span when those offsets fall
    off token boundaries; a ValueError naming ``where`` for any other fault."""
    text = doc.text
    if span.token_start is not None:
        if span.token_end > len(doc):
            raise ValueError(
                f"{where}: span {span.label!r} at tokens {span.token_start}..{span.token_end - 1} lies outside the "
                f"{len(doc)} tokens of the task; fix token_start and token_end"
            )
        result = Span(doc, span.token_start, span.token_end, label=span.label)
        if span.start is not None and (span.start, span.end) != (result.start_char, result.end_char):
            raise ValueError(
                f"{where}: span {span.label!r} at characters {span.start}..{span.end} is not its tokens "
                f"{describe(result)}; fix the offsets or the token indices"
            )
        if span.text is not None and span.text != result.text:
            raise ValueError(
                f"{where}: span text {span.text!r} is not the text at its place, {describe(result)}; fix the offsets"
            )
        return result
    if span.end > len(text):
        raise ValueError(
            f"{where}: span {span.label!r} at characters {span.start}..{span.end} lies outside the text of "
            f"{len(text)} characters; fix the offsets"
        )
    if span.text is not None and span.text != text[span.start : span.end]:
        raise ValueError(
            f"{where}: span text {span.text!r} is not the text at its place, {text[span.start : span.end]!r} "
            f"(characters {span.start}..{span.end}); fix the offsets"
        )
    stripped = without_outer_whitespace(text, span.start, span.end)
    if stripped is None:
        raise ValueError(
            f"{where}: span {span.label!r} at characters {span.start}..{span.end} holds only whitespace; drop it"
        )
    start, end = stripped
    result = doc.char_span(start, end, label=span.label, alignment_mode=mode)
    if result is None or len(result) == 0:
        around = doc.char_span(start, end, alignment_mode="expand")
        return (
            f"span {text[start:end]!r} ({span.label}, characters {start}..{end}) does not fall on token boundaries "
            f"(the tokens around it: {[t.text for t in around]})"
        )
    return result


def reviewed_region(doc: Doc, task: Task) -> Span:
    """The reviewed region of an accepted manual task: its ``region_chars``
    (the tokens they touch, ``char_span``'s expand; a ``region`` given too
    must be those tokens where the task has its own), else its ``region``
    (tokens), else the whole Doc."""
    if task.region_chars is not None:
        start, end = task.region_chars
        if end > len(doc.text):
            raise ValueError(
                f"{task.where}: region_chars [{start}, {end}) lies outside the text of {len(doc.text)} characters; "
                "fix the region (character offsets, end exclusive)"
            )
        stripped = without_outer_whitespace(doc.text, start, end)
        if stripped is None:
            raise ValueError(f"{task.where}: region_chars [{start}, {end}) holds only whitespace; fix the region")
        region = doc.char_span(*stripped, alignment_mode="expand")
        if task.words is not None and task.region is not None and (region.start, region.end) != tuple(task.region):
            raise ValueError(
                f"{task.where}: region {list(task.region)} (tokens) is not region_chars [{start}, {end}), tokens "
                f"{region.start}..{region.end - 1} of the task's own tokens; fix or drop one of them"
            )
        return region
    if task.region is None:
        return doc[:]
    start, end = task.region
    if end > len(doc):
        raise ValueError(
            f"{task.where}: region [{start}, {end}) lies outside the {len(doc)} tokens of the task; "
            "fix the region (token indices, end exclusive)"
        )
    return doc[start:end]
