"""The GENIA term corpus 3.02 (``GENIAcorpus3.02.tgz``, XML) to the project's
GENIA JSON lines (the format ``genia.py`` reads), streamed from the tarball.

The rules are those stated in ``genia/README.md`` of the data folder ("How the
files were made"); the release's own tokenisation does not exist (3.02 has
none), so the tokens are made here:

* types: ``G#DNA_*`` -> DNA, ``G#RNA_*`` -> RNA, ``G#protein_*`` -> protein,
  ``G#cell_line``, ``G#cell_type``; every other class is dropped;
* coordinated terms (``sem="(AND G#X G#Y)"``, ``(OR ...)``, ``(BUT_NOT ...)``,
  ...) keep their outer span when every class inside maps to the same type;
  a ``<cons>`` without ``sem`` (an elliptic conjunct fragment) is dropped;
* identical (start, end, type) triples of a sentence are kept once; mentions
  are sorted by (start, -end, type);
* tokens: the text is split on whitespace and at the boundaries of every
  ``<cons>`` (all classes, also dropped ones); ``( ) [ ] { } , ; : " ' ? !``
  are split off the edges of each piece, ``-`` and ``/`` only off an edge made
  by a ``<cons>`` boundary (``CD28``, ``-``, ``mediated``), and ``.`` only off
  the end of the last piece of the sentence (``etc.).`` -> ``etc . ) .``: the
  punctuation comes off one character at a time); hyphens, dots, commas and slashes inside a
  piece stay (``IL-2``, ``c-fos``, ``1,458``);
* split by sentence order over the corpus: the first 15,022 sentences are
  train, the next 1,669 dev, the last 1,855 test (``GENIA_SPLIT``).

A record: ``{"doc_id": "MEDLINE:95369245", "sent_id": "MEDLINE:95369245-0",
"tokens": [...], "entities": [{"start", "end", "type", "text"}]}``, ``end``
exclusive, ``text`` the annotated surface string; ``sent_id`` numbers the
sentences of an article from 0 (title first). Annotations: CC BY 3.0,
"Corpus annotations (c) GENIA Project" (Kim et al. 2003).
"""

import bisect
import itertools
import json
import re
import tarfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

GENIA_TYPES = ("DNA", "RNA", "protein", "cell_line", "cell_type")
GENIA_SPLIT = (15022, 1669, 1855)
SPLIT_NAMES = ("train", "dev", "test")
XML_MEMBER = "GENIAcorpus3.02.xml"
EDGE_PUNCTUATION = frozenset("()[]{},;:\"'?!")
BOUNDARY_PUNCTUATION = frozenset("-/")
_CLASS = re.compile(r"G#[A-Za-z_/]+")
_PIECE = re.compile(r"\S+")

Cons = Tuple[int, int, Optional[str]]  # character start, end (exclusive), sem attribute


@dataclass
class GENIAXMLStats:
    """Counts of what the conversion read and dropped."""

    articles: int = 0
    sentences: int = 0
    mentions: int = 0  # written
    duplicates: int = 0  # identical (start, end, type) of a sentence, kept once
    other_classes: int = 0  # <cons> of a class outside the five types, or mixed coordinations
    without_class: int = 0  # <cons> without sem: elliptic conjunct fragments
    misaligned: int = 0  # a boundary inside a token (not expected: every <cons> boundary cuts)

    def as_dict(self) -> Dict[str, int]:
        return dict(self.__dict__)


def class_type(name: str) -> Optional[str]:
    """The type of one GENIA class (``G#protein_molecule`` -> protein), None if dropped."""
    name = name.strip()
    name = name[2:] if name.startswith("G#") else name
    for prefix in ("DNA", "RNA", "protein"):
        if name == prefix or name.startswith(prefix + "_"):
            return prefix
    return name if name in ("cell_line", "cell_type") else None


def entity_type(sem: Optional[str]) -> Optional[str]:
    """The type of a ``<cons>``'s ``sem``: one class, or a coordination
    ``(OP G#X G#Y ...)`` whose classes all map to one type; None if dropped."""
    if sem is None:
        return None
    sem = sem.strip()
    if not sem.startswith("("):
        return class_type(sem)
    types = {class_type(name) for name in _CLASS.findall(sem)}
    return types.pop() if len(types) == 1 and None not in types else None


def flatten(sentence: ET.Element) -> Tuple[str, List[Cons]]:
    """The text of a ``<sentence>`` and its ``<cons>`` as character ranges (any depth)."""
    parts: List[str] = []
    cons: List[Cons] = []
    length = 0

    def walk(element: ET.Element) -> None:
        nonlocal length
        if element.text:
            parts.append(element.text)
            length += len(element.text)
        for child in element:
            start = length
            walk(child)
            if child.tag == "cons":
                cons.append((start, length, child.get("sem")))
            if child.tail:
                parts.append(child.tail)
                length += len(child.tail)

    walk(sentence)
    return "".join(parts), cons


def tokenize(text: str, cuts: Set[int]) -> List[Tuple[int, int]]:
    """Character ranges (start, end exclusive) of the tokens of a sentence;
    every offset in ``cuts`` is a token boundary (the module's rules)."""
    cut_list = sorted(cuts)
    pieces = []  # (start, end, starts at a cut, ends at a cut)
    for run in _PIECE.finditer(text):
        low, high = bisect.bisect_right(cut_list, run.start()), bisect.bisect_left(cut_list, run.end())
        points = [run.start(), *cut_list[low:high], run.end()]
        edges = [(a, b) for a, b in zip(points, points[1:]) if a < b]
        pieces.extend((a, b, k > 0, k < len(edges) - 1) for k, (a, b) in enumerate(edges))
    tokens = []
    for index, (a, b, cut_left, cut_right) in enumerate(pieces):
        sentence_end = index == len(pieces) - 1
        left = []
        while a < b and (text[a] in EDGE_PUNCTUATION or (cut_left and text[a] in BOUNDARY_PUNCTUATION)):
            left.append((a, a + 1))
            a += 1
        right = []
        while a < b and (
            text[b - 1] in EDGE_PUNCTUATION
            or (cut_right and text[b - 1] in BOUNDARY_PUNCTUATION)
            or (sentence_end and text[b - 1] == ".")
        ):
            right.append((b - 1, b))
            b -= 1
        tokens.extend(left)
        if a < b:
            tokens.append((a, b))
        tokens.extend(reversed(right))
    return tokens


def sentence_record(doc_id: str, index: int, sentence: ET.Element, stats: GENIAXMLStats) -> Dict:
    """The JSON record of one ``<sentence>`` (the ``index``-th of its article)."""
    text, cons = flatten(sentence)
    spans = tokenize(text, {offset for start, end, _ in cons for offset in (start, end)})
    sent_id = f"{doc_id}-{index}"
    if not spans:
        raise ValueError(f"sentence {sent_id} has no text: remove the empty <sentence> element from the XML")
    starts = {a: i for i, (a, _) in enumerate(spans)}
    ends = {b: i + 1 for i, (_, b) in enumerate(spans)}
    kept: Dict[Tuple[int, int, str], Dict] = {}
    for a, b, sem in cons:
        label = entity_type(sem)
        if label is None:
            stats.without_class += sem is None
            stats.other_classes += sem is not None
            continue
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a not in starts or b not in ends:
            stats.misaligned += 1
            continue
        key = (starts[a], ends[b], label)
        if key in kept:
            stats.duplicates += 1
            continue
        kept[key] = {"start": key[0], "end": key[1], "type": label, "text": text[a:b]}
    entities = [kept[key] for key in sorted(kept, key=lambda k: (k[0], -k[1], k[2]))]
    stats.sentences += 1
    stats.mentions += len(entities)
    return {"doc_id": doc_id, "sent_id": sent_id, "tokens": [text[a:b] for a, b in spans], "entities": entities}


def _records(xml, source: str, stats: GENIAXMLStats) -> Iterator[Dict]:
    """Records of an XML file object (bytes), fed to the parser line by line
    so that every error names its line: SOURCE:LINE."""
    parser = ET.XMLPullParser(events=("start", "end"))
    doc_id, index, in_article, root = "", 0, False, None
    try:
        for number, line in enumerate(itertools.chain(xml, [None]), start=1):
            if line is None:
                parser.close()  # the end: an element left open is a ParseError
            else:
                parser.feed(line)
            for event, element in parser.read_events():
                if event == "start":
                    if root is None:
                        root = element
                    if element.tag == "article":
                        stats.articles += 1
                        doc_id, index, in_article = f"article-{stats.articles}", 0, True
                    continue
                if element.tag == "bibliomisc" and in_article and (element.text or "").strip():
                    doc_id = element.text.strip()
                elif element.tag == "sentence":
                    if not in_article:
                        raise ValueError(
                            f"{source}:{number}: a <sentence> outside an <article>: is this the GENIA 3.02 XML?"
                        )
                    try:
                        record = sentence_record(doc_id, index, element, stats)
                    except ValueError as error:
                        raise ValueError(f"{source}:{number}: {error}") from None
                    yield record
                    index += 1
                    element.clear()
                elif element.tag == "article":
                    in_article = False
                    root.clear()
    except ET.ParseError as error:
        line, column = error.position
        raise ValueError(
            f"{source}:{line}: not well-formed XML at column {column} ({str(error).split(': line')[0]}); "
            "re-download the file (project.yml's asset has its md5)"
        ) from None


def genia_xml_records(source, stats: Optional[GENIAXMLStats] = None) -> Iterator[Dict]:
    """JSON records (dicts) of the sentences of the GENIA 3.02 release, in
    corpus order: ``source`` is the tarball (``.tgz``/``.tar.gz``, its member
    ``*/GENIAcorpus3.02.xml`` streamed without extracting) or the XML file.
    ``stats``, if given, is filled as the records are read."""
    source = Path(source)
    stats = stats if stats is not None else GENIAXMLStats()
    if not source.is_file():
        raise ValueError(f"GENIA source not found: {source} (GENIAcorpus3.02.tgz; `spacy project assets` fetches it)")
    if source.suffix == ".xml":
        with source.open("rb") as xml:
            yield from _records(xml, str(source), stats)
        return
    try:
        archive = tarfile.open(source, "r|*")
    except tarfile.TarError:
        raise ValueError(
            f"{source} is not a tar archive: give GENIAcorpus3.02.tgz or the GENIAcorpus3.02.xml inside it"
        ) from None
    with archive:
        try:
            for member in archive:
                if member.isfile() and Path(member.name).name == XML_MEMBER:
                    yield from _records(archive.extractfile(member), f"{source}/{member.name}", stats)
                    return
        except (tarfile.TarError, EOFError, OSError) as error:
            raise ValueError(f"{source}: the archive is damaged ({error}): re-download it") from None
    raise ValueError(f"{source} holds no {XML_MEMBER}: is it the GENIA 3.02 term corpus (GENIAcorpus3.02.tgz)?")


def parse_split(text: str) -> Tuple[int, ...]:
    """``"15022,1669,1855"`` -> the three split sizes (train, dev, test)."""
    try:
        sizes = tuple(int(part) for part in text.split(","))
    except ValueError:
        sizes = ()
    if len(sizes) != 3 or min(sizes) < 0:
        raise ValueError(
            f"split sizes must be three non-negative integers TRAIN,DEV,TEST (e.g. 15022,1669,1855), not {text!r}"
        )
    return sizes


def write_genia_splits(records, output, sizes: Sequence[int] = GENIA_SPLIT) -> Dict[str, int]:
    """Write the records, in order, as OUTPUT/{train,dev,test}.jsonl with
    ``sizes`` sentences each (nothing is written if the records are not
    exactly ``sum(sizes)``); the number of sentences of each file."""
    if len(sizes) != 3 or min(sizes) < 0:
        raise ValueError(f"give three non-negative split sizes (train, dev, test), not {tuple(sizes)}")
    lines = [json.dumps(record, ensure_ascii=False) + "\n" for record in records]
    if len(lines) != sum(sizes):
        raise ValueError(
            f"the corpus has {len(lines):,} sentences, the split sizes {tuple(sizes)} add up to "
            f"{sum(sizes):,}: give sizes that add up to {len(lines):,}"
        )
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    counts, start = {}, 0
    for name, size in zip(SPLIT_NAMES, sizes):
        (output / f"{name}.jsonl").write_text("".join(lines[start : start + size]), encoding="utf8")
        counts[name], start = size, start + size
    return counts
