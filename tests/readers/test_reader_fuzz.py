"""Reader fuzzing: the valid fixtures of tests/data (and a small gazetteer
written here), mutated - lines and fields dropped, duplicated, swapped and
corrupted, JSON values replaced, random bytes inserted, files truncated or
emptied - written to a file and read, through to the Docs the readers make.
Every reader returns data or raises a ValueError whose message names the file
and a line ("FILE:LINE"), never another exception. Mutations that keep a file
valid (whole sentences swapped, CRLF line ends, a byte-order mark, extra
blank lines, for the UNER join also renamed sentence ids) keep its content.

Seeded (``derandomize=True``): the same cases on every run, ``EXAMPLES`` per
target for the mutations, ``VALID_EXAMPLES`` for the valid ones.
"""

import json
import re
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Sequence, Tuple

import pytest
import spacy
from budgets import cases
from corpus_copies import write_genia_tarball
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spacy_depner.pipeline.gazetteer import Gazetteer, read_phrases
from spacy_depner.readers.conllu import read_conllu, sentences_to_doc
from spacy_depner.readers.docbins import conllu_iob2_docs, genia_docs, gum_docs
from spacy_depner.readers.documents import gum_named_examples
from spacy_depner.readers.genia import read_genia
from spacy_depner.readers.genia_xml import genia_xml_records
from spacy_depner.readers.gum import read_gum_corpus
from spacy_depner.readers.uner import read_uner_corpus

DATA = Path(__file__).parents[1] / "data"
CONLLU, IOB2 = DATA / "tiny.conllu", DATA / "tiny.iob2"
EXAMPLES, VALID_EXAMPLES = cases("reader_fuzz"), cases("reader_fuzz.valid")
VOCAB = spacy.blank("en").vocab
FUZZ = dict(derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck))

GAZETTEER = b"".join(
    json.dumps(line).encode() + b"\n"
    for line in (
        {"label": "LOC", "pattern": "New York"},
        {"label": "LOC", "pattern": "Paris"},
        {"label": "PER", "pattern": "John Smith"},
        {"label": "ORG", "pattern": "Acme Corp"},
    )
)
GAZETTEER_DOC = spacy.tokens.Doc(VOCAB, words="John Smith left New York for Paris".split())

TAB_SNIPPETS = (
    b"",
    b"_",
    b"0",
    b"-1",
    b"1",
    b"2",
    b"3",
    b"4.1",
    b"99",
    b"1-2",
    b"3-2",
    b"1.1",
    b"x",
    b"B-PER",
    b"I-LOC",
    b"B-",
    b"O",
    b"#",
    b"# sent_id = s1",
    b"# sent_id =",
    b"# newdoc id = d",
    b"# global.Entity = x",
    b"Entity=(1-person-new-x-y-1",
    b"Entity=1)",
    b"Entity=(",
    b"Entity=(1-person)",
    b"Entity=(9-place-a-b-c-9-x)",
    b"Entity=(2-person[1/2]-a",
    b"SpaceAfter=No",
    b"\xff\xfe",
    b" ",
    b"\t",
    b"\n",
    b"\r",
)
XML_SNIPPETS = (
    b"<",
    b">",
    b"&",
    b"&bogus;",
    b"</cons>",
    b"<cons>",
    b'<cons sem="G#DNA_x">',
    b'<cons sem="(AND G#DNA_x G#RNA_y)">',
    b"<sentence>",
    b"</sentence>",
    b"<article>",
    b"</article>",
    b"<bibliomisc>",
    b"<sentence></sentence>",
    b"\xff",
    b"]]>",
    b"<!--",
    b" ",
)
JSON_SNIPPETS = (b"{", b"}", b"[", b"]", b'"', b",", b":", b"null", b"\\", b"\\ud800", b"\xff", b" ", b"1e999", b"NaN")
JSON_VALUES = (
    None,
    True,
    0,
    -1,
    1,
    2,
    3,
    99,
    1.5,
    10**30,
    "",
    " ",
    "x",
    "DNA",
    "\ud800",
    [],
    {},
    [""],
    ["a"],
    [1, 2],
    {"start": 0, "end": 1, "type": "DNA"},
    {"label": "LOC"},
)
KINDS = (
    "drop",
    "duplicate",
    "swap",
    "field",
    "drop_field",
    "duplicate_field",
    "json",
    "insert",
    "replace",
    "truncate",
    "empty",
)


@dataclass(frozen=True)
class Target:
    """A reader under test: ``read`` reads a file through to Docs and returns
    its content in an order-free form; ``names``: the files its errors may name."""

    source: bytes
    suffix: str
    read: Callable[[Path], object]
    snippets: Tuple[bytes, ...]
    units: str  # "sentences": blank-line blocks, "lines", or "sentence_lines" (XML <sentence> lines)
    other_names: Tuple[str, ...] = ()
    renamable: bool = False


def rewrite(path: Path, data: bytes) -> Path:
    """Write a new file (removing the old one first: far faster than truncating it on ext4)."""
    path.unlink(missing_ok=True)
    path.write_bytes(data)
    return path


def conllu_content(path):
    sentences = list(read_conllu(path))
    for s in sentences:
        sentences_to_doc(VOCAB, [s], with_trees=True, with_tags=True)
    return {s.sent_id: (s.words, s.spaces, s.heads, s.deprels, s.upos, s.xpos, s.lemmas) for s in sentences}


def join_content(conllu, iob2):
    docs = conllu_iob2_docs(VOCAB, conllu, iob2)
    corpus = read_uner_corpus(conllu, iob2)
    assert [[t.ent_iob_ + ("-" + t.ent_type_ if t.ent_type_ else "") for t in doc] for doc in docs] == corpus.tags
    return {s.sent_id: (s.words, tags) for s, tags in zip(corpus.sentences, corpus.tags)}


def genia_content(path):
    genia_docs(VOCAB, path)
    return sorted(repr(sentence) for sentence in read_genia(path))


def gum_content(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gum_docs(VOCAB, path, documents=True)
        gum_named_examples(VOCAB, path)
        corpus = read_gum_corpus(path)
    return {s.sentence.sent_id: (s.sentence.words, s.sentence.heads, s.mentions) for d in corpus.documents for s in d}


def xml_content(path):
    records = list(genia_xml_records(path))
    if len(path.read_bytes()) % 3 == 0:  # also through the tarball, now and then
        path.with_suffix(".tgz").unlink(missing_ok=True)
        records = list(genia_xml_records(write_genia_tarball(path.with_suffix(".tgz"), path.read_bytes())))
    return sorted(json.dumps([r["tokens"], r["entities"]]) for r in records)


def gazetteer_content(path):
    phrases = read_phrases(path)
    Gazetteer(VOCAB, phrases).codes([GAZETTEER_DOC])
    return {label: sorted(items) for label, items in phrases.items()}


TARGETS = {
    "conllu": Target(CONLLU.read_bytes(), ".conllu", conllu_content, TAB_SNIPPETS, "sentences"),
    "iob2_join": Target(
        IOB2.read_bytes(),
        ".iob2",
        lambda p: join_content(CONLLU, p),
        TAB_SNIPPETS,
        "sentences",
        (CONLLU.name,),
        renamable=True,
    ),
    "conllu_join": Target(
        CONLLU.read_bytes(), ".conllu", lambda p: join_content(p, IOB2), TAB_SNIPPETS, "sentences", (IOB2.name,)
    ),
    "genia_jsonl": Target((DATA / "nested_genia.jsonl").read_bytes(), ".jsonl", genia_content, JSON_SNIPPETS, "lines"),
    "gum": Target((DATA / "nested_gum.conllu").read_bytes(), ".conllu", gum_content, TAB_SNIPPETS, "sentences"),
    "genia_xml": Target(
        (DATA / "genia_3.02_fixture.xml").read_bytes(),
        ".xml",
        xml_content,
        XML_SNIPPETS,
        "sentence_lines",
        ("GENIAcorpus3.02.xml",),
    ),
    "gazetteer": Target(GAZETTEER, ".jsonl", gazetteer_content, JSON_SNIPPETS, "lines"),
}


def corrupt_json(line: bytes, choice: int, snippet: bytes) -> bytes:
    """One value of a JSON line replaced (from ``JSON_VALUES`` or the snippet
    as a string) or deleted; a line that is not JSON gets the snippet appended."""
    try:
        record = json.loads(line)
    except ValueError:
        return line + snippet
    places: List[Tuple[object, object]] = []

    def walk(value):
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, child in items:
            places.append((value, key))
            walk(child)

    walk(record)
    if not places:
        return json.dumps(JSON_VALUES[choice % len(JSON_VALUES)]).encode()
    container, key = places[choice % len(places)]
    action = (choice // len(places)) % 3
    if action == 0:
        container[key] = JSON_VALUES[(choice // (3 * len(places))) % len(JSON_VALUES)]
    elif action == 1:
        del container[key]
    else:
        container[key] = snippet.decode("utf8", "replace")
    return json.dumps(record).encode()


def mutate(data: bytes, operations: Sequence[Tuple[str, int, int, bytes]]) -> bytes:
    """``data`` after each (kind, a, b, snippet) of ``operations``; a and b
    pick lines, fields and byte offsets (modulo their counts)."""
    for kind, a, b, snippet in operations:
        if kind == "insert":
            at = a % (len(data) + 1)
            data = data[:at] + snippet + data[at:]
            continue
        if kind == "replace":
            at = a % (len(data) + 1)
            data = data[:at] + snippet + data[at + b % 8 :]
            continue
        if kind == "truncate":
            data = data[: a % (len(data) + 1)]
            continue
        if kind == "empty":
            data = (b"", b"\n", b"\n \n\n", b"\xef\xbb\xbf")[a % 4]
            continue
        lines = data.split(b"\n")
        i, j = a % len(lines), b % len(lines)
        if kind == "drop":
            del lines[i]
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        elif kind == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "json":
            lines[i] = corrupt_json(lines[i], b, snippet)
        else:
            fields = lines[i].split(b"\t")
            k = b % len(fields)
            if kind == "field":
                fields[k] = snippet
            elif kind == "drop_field":
                del fields[k]
            else:
                fields.insert(k, fields[k])
            lines[i] = b"\t".join(fields)
        data = b"\n".join(lines)
    return data


def operations(target: Target):
    snippet = st.one_of(st.sampled_from(target.snippets), st.binary(max_size=8))
    kinds = [k for k in KINDS if k != "json" or target.suffix == ".jsonl"]
    operation = st.tuples(st.sampled_from(kinds), st.integers(0, 10**6), st.integers(0, 10**6), snippet)
    return st.lists(operation, min_size=1, max_size=3)


def read_outcome(target: Target, path: Path) -> str:
    """ "read" or "ValueError"; any other exception, or a ValueError without
    FILE:LINE, fails the test."""
    try:
        target.read(path)
    except ValueError as error:
        message = str(error)
        assert type(error) is ValueError, f"{type(error).__name__}: {message}"
        names = "|".join(re.escape(name) for name in (path.name, *target.other_names))
        assert re.search(rf"({names}):\d+", message), f"no FILE:LINE in: {message}"
        return "ValueError"
    return "read"


@pytest.mark.parametrize("name", list(TARGETS))
def test_mutated_files_are_read_or_name_file_and_line(name, tmp_path_factory):
    target, path = TARGETS[name], tmp_path_factory.mktemp(name) / f"mutated{TARGETS[name].suffix}"
    outcomes: Counter = Counter()

    @settings(max_examples=EXAMPLES, **FUZZ)
    @given(operations(target))
    def check(ops):
        rewrite(path, mutate(target.source, ops))
        outcomes[read_outcome(target, path)] += 1

    check()
    print(f"\n{name}: {sum(outcomes.values())} mutated files, {dict(outcomes)}")
    assert sum(outcomes.values()) >= EXAMPLES and outcomes["read"] and outcomes["ValueError"]


def units_of(target: Target, data: bytes) -> Tuple[List[bytes], List[int], bytes]:
    """The units of a file, the indices of those that may swap places, and their separator."""
    if target.units == "sentences":
        units = data.strip(b"\n").split(b"\n\n")
        return units, list(range(len(units))), b"\n\n"
    units = data.strip(b"\n").split(b"\n")
    if target.units == "lines":
        return units, list(range(len(units))), b"\n"
    return units, [i for i, u in enumerate(units) if u.startswith(b"<sentence>")], b"\n"


@pytest.mark.parametrize("name", list(TARGETS))
def test_valid_mutations_keep_the_content(name, tmp_path_factory):
    target, folder = TARGETS[name], tmp_path_factory.mktemp(name)
    (folder / f"original{target.suffix}").write_bytes(target.source)
    expected = target.read(folder / f"original{target.suffix}")
    path = folder / f"mutated{target.suffix}"
    units, movable, separator = units_of(target, target.source)
    seen = Counter()

    @settings(max_examples=VALID_EXAMPLES, **FUZZ)
    @given(
        st.lists(st.tuples(st.integers(0, 99), st.integers(0, 99)), max_size=4),
        st.booleans(),
        st.booleans(),
        st.integers(0, 2),
        st.booleans(),
    )
    def check(swaps, crlf, bom, blank_lines, rename):
        order = list(units)
        for a, b in swaps:
            i, j = movable[a % len(movable)], movable[b % len(movable)]
            order[i], order[j] = order[j], order[i]
        data = (separator + b"\n" * blank_lines).join(order) + b"\n"
        if rename and target.renamable:
            data = re.sub(rb"# sent_id = (\S+)", rb"# sent_id = renamed-\1", data)
        if crlf:
            data = data.replace(b"\n", b"\r\n")
        rewrite(path, (b"\xef\xbb\xbf" if bom else b"") + data)
        assert target.read(path) == expected
        seen[order != units] += 1

    check()
    assert seen[True] and seen[False]
