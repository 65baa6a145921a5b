"""A task's spans and reviewed region placed on the tokens of its Doc, as
spaCy's ``Doc.char_span`` places character offsets: ``strict`` (the span
must start and end on token boundaries), ``contract`` (the tokens wholly
inside it) or ``expand`` (every token it touches). The whitespace at either
end of a span is never part of it (annotation tools let a selection take
the space after a word, and a model may label spaCy's whitespace tokens); a
span that is only whitespace is dropped (counted by the import). The text a
tool recorded for a span must be the text at its offsets.

Offsets count characters (code points), or with ``offsets="utf-16"`` UTF-16
code units (what a browser counts: a character beyond U+FFFF is two). In a
text with such characters, offsets that fall off token boundaries as
characters but exactly on them as UTF-16 code units are never snapped
(``contract``/``expand`` would then mark another word): they are reported as
what they look like. A span off token boundaries is returned as a
``Misaligned`` (so that an import can report every one, or skip and count
them); every other fault is a ValueError."""

from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, Optional, Tuple, Union

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


@lru_cache(maxsize=16)
def utf16_offsets(text: str) -> Dict[int, int]:
    """{UTF-16 code-unit offset: character offset} at every character boundary
    of ``text`` (cached: every span of a text reads the same one; not to be changed)."""
    offsets, units = {}, 0
    for i, character in enumerate(text):
        offsets[units] = i
        units += 2 if ord(character) > 0xFFFF else 1
    offsets[units] = len(text)
    return offsets


MISALIGNED = "misaligned span (--skip-misaligned)"
UTF16_LIKE = "span offsets in UTF-16 code units (--offsets utf-16)"


@dataclass
class Misaligned:
    """A span off token boundaries: ``what`` in words, the kind of ``fix``
    that works for it (a key of ``annotation_tasks.IMPORT_FIXES``) and the ``reason`` it is counted
    under when skipped."""

    what: str
    fix: str
    reason: str = MISALIGNED


def from_utf16(text: str, span: TaskSpan, where: str) -> Tuple[int, int]:
    """``span``'s offsets, UTF-16 code units of ``text``, as character offsets."""
    offsets = utf16_offsets(text)
    units = next(reversed(offsets))  # the last boundary: the text's length
    if span.end > units:
        raise ValueError(
            f"{where}: span {span.label!r} at UTF-16 code units {span.start}..{span.end} lies outside the text of "
            f"{units} code units; fix the offsets"
        )
    if span.start not in offsets or span.end not in offsets:
        raise ValueError(
            f"{where}: span {span.label!r} at UTF-16 code units {span.start}..{span.end} splits a character beyond "
            "U+FFFF (two code units); fix the offsets, or read them as characters (--offsets characters)"
        )
    return offsets[span.start], offsets[span.end]


def utf16_reading(doc: Doc, start: int, end: int) -> Optional[Span]:
    """The tokens that offsets ``start``..``end`` are exactly, read as UTF-16
    code units, where ``doc``'s text has characters beyond U+FFFF; else None."""
    text = doc.text
    if not any(ord(character) > 0xFFFF for character in text):
        return None
    offsets = utf16_offsets(text)
    if start not in offsets or end not in offsets:
        return None
    stripped = without_outer_whitespace(text, offsets[start], offsets[end])
    return None if stripped is None else doc.char_span(*stripped, alignment_mode="strict")


def token_span(doc: Doc, span: TaskSpan, where: str) -> Span:
    """``span`` by its token indices (its character offsets and text, if any, must be theirs)."""
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


def aligned_span(
    doc: Doc, span: TaskSpan, where: str, mode: str = "strict", offsets: str = "characters"
) -> Union[Span, Misaligned, None]:
    """``span`` as a Span of ``doc`` without its edge whitespace: by its token
    indices if it has them, else by its character offsets (``offsets``:
    characters or utf-16) in ``mode``; None where it is only whitespace; a
    ``Misaligned`` where its offsets fall off token boundaries; a ValueError
    naming ``where`` for any other fault (module docstring)."""
    text = doc.text
    if span.token_start is not None:
        result = token_span(doc, span, where)
        stripped = without_outer_whitespace(text, result.start_char, result.end_char)
        if stripped is None:
            return None
        trimmed = doc.char_span(*stripped, label=span.label)
        return result if trimmed is None else trimmed
    start, end = (span.start, span.end) if offsets == "characters" else from_utf16(text, span, where)
    if end > len(text):
        raise ValueError(
            f"{where}: span {span.label!r} at characters {start}..{end} lies outside the text of "
            f"{len(text)} characters; fix the offsets"
        )
    if span.text is not None and span.text != text[start:end]:
        raise ValueError(
            f"{where}: span text {span.text!r} is not the text at its place, {text[start:end]!r} "
            f"(characters {start}..{end}); fix the offsets"
        )
    stripped = without_outer_whitespace(text, start, end)
    if stripped is None:
        return None
    start, end = stripped
    shown = f"span {text[start:end]!r} ({span.label}, characters {start}..{end})"
    exact = doc.char_span(start, end, label=span.label)
    if exact is not None:
        return exact
    meant = utf16_reading(doc, span.start, span.end) if offsets == "characters" else None
    if meant is not None:
        return Misaligned(
            f"{shown} does not fall on token boundaries, but read as UTF-16 code units (what a browser counts: "
            f"a character beyond U+FFFF is two) its offsets are exactly {meant.text!r} (characters "
            f"{meant.start_char}..{meant.end_char}); snapping it would mark another word",
            "utf-16",
            UTF16_LIKE,
        )
    result = doc.char_span(start, end, label=span.label, alignment_mode=mode)
    if result is not None and len(result) > 0:
        return result
    around = [token.text for token in doc.char_span(start, end, alignment_mode="expand")]
    inside = doc.char_span(start, end, alignment_mode="contract")
    if inside is None or len(inside) == 0:
        cause = (
            "holds no whole token, so --alignment-mode contract leaves nothing of it"
            if mode == "contract"
            else "does not fall on token boundaries and holds no whole token"
        )
        return Misaligned(f"{shown} {cause} (the tokens it touches: {around})", "no-whole-token")
    return Misaligned(f"{shown} does not fall on token boundaries (the tokens around it: {around})", "strict")


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
