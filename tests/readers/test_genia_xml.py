"""The GENIA 3.02 XML converter (spacy_depner/readers/genia_xml.py) on an
invented fixture in the release's format, whose expected JSON lines were
written by hand (tests/data/genia_3.02_fixture.{xml,jsonl}), and, when the
real tarball is present, against the first sentences of the data folder's
train.jsonl.

Hand-counted in the fixture (2 articles, 5 sentences): 13 mentions kept;
1 duplicate (p55 annotated twice as protein); 6 <cons> of another class or a
mixed coordination (3 other_name, the (AND cell_type protein) "RB and TK
cells", nucleotide ATP, atom Mg2+); 7 <cons> without sem (KL-1*, RB*, TK*,
*cell, alpha-*, beta-*, *mRNA).
"""

import itertools
import json
import os
from pathlib import Path

import pytest
from corpus_copies import write_genia_tarball

from spacy_depner.readers.genia import read_genia
from spacy_depner.readers.genia_xml import (
    GENIAXMLStats,
    entity_type,
    genia_xml_records,
    parse_split,
    tokenize,
    write_genia_splits,
)

DATA = Path(__file__).parents[1] / "data"
FIXTURE = DATA / "genia_3.02_fixture.xml"
EXPECTED = DATA / "genia_3.02_fixture.jsonl"
REAL = Path(os.environ.get("DEPNER_DATA", "/work/shared/data")) / "genia"


def test_fixture_records_equal_the_hand_written_lines():
    stats = GENIAXMLStats()
    records = list(genia_xml_records(FIXTURE, stats))
    assert [json.dumps(r, ensure_ascii=False) for r in records] == EXPECTED.read_text(encoding="utf8").splitlines()
    assert stats.as_dict() == {
        "articles": 2,
        "sentences": 5,
        "mentions": 13,
        "duplicates": 1,
        "other_classes": 6,
        "without_class": 7,
        "misaligned": 0,
    }


def test_the_tarball_is_streamed_and_split_in_corpus_order(tmp_path):
    source = write_genia_tarball(tmp_path / "GENIAcorpus3.02.tgz", FIXTURE.read_bytes())
    counts = write_genia_splits(genia_xml_records(source), tmp_path / "out", (2, 2, 1))
    assert counts == {"train": 2, "dev": 2, "test": 1}
    written = "".join(
        (tmp_path / "out" / f"{name}.jsonl").read_text(encoding="utf8") for name in ("train", "dev", "test")
    )
    assert written == EXPECTED.read_text(encoding="utf8")  # byte for byte
    assert [len(read_genia(tmp_path / "out" / f"{name}.jsonl")) for name in ("train", "dev", "test")] == [2, 2, 1]
    assert (
        (tmp_path / "out" / "test.jsonl")
        .read_text(encoding="utf8")
        .startswith('{"doc_id": "MEDLINE:90000002", "sent_id": "MEDLINE:90000002-1"')
    )


@pytest.mark.parametrize(
    "sem, expected",
    [
        ("G#protein_molecule", "protein"),
        ("G#protein_N/A", "protein"),
        ("G#DNA_domain_or_region", "DNA"),
        ("G#RNA_family_or_group", "RNA"),
        ("G#cell_line", "cell_line"),
        ("G#cell_type", "cell_type"),
        ("G#other_name", None),
        ("G#cell_component", None),
        ("G#DNAase", None),  # not DNA_*: another class
        (None, None),
        ("(AND G#DNA_domain_or_region G#DNA_molecule)", "DNA"),
        ("(BUT_NOT G#cell_line (AND G#cell_line G#cell_line))", "cell_line"),
        ("(AND G#cell_type G#protein_molecule)", None),
        ("(OR G#protein_molecule G#other_name)", None),
    ],
)
def test_entity_type(sem, expected):
    assert entity_type(sem) == expected


def words(text, cuts=()):
    return [text[a:b] for a, b in tokenize(text, set(cuts))]


def test_tokenize_rules():
    # edge punctuation, internal dots and commas kept, '.' split off at the sentence end only
    assert words('Cells (approx. 1,458, "T-cells") grew.') == [
        "Cells",
        "(",
        "approx.",
        "1,458",
        ",",
        '"',
        "T-cells",
        '"',
        ")",
        "grew",
        ".",
    ]
    # in the last piece every trailing '.' and edge punctuation comes off, one character each
    assert words("end etc.).") == ["end", "etc", ".", ")", "."]
    # a hyphen or slash at an edge made by a cut is its own token, not at an edge made by a space
    assert words("CD28-mediated", [4]) == ["CD28", "-", "mediated"]
    assert words("alpha- and beta-globin", [0, 6, 11, 16, 22]) == ["alpha-", "and", "beta", "-", "globin"]
    assert words("p55/p56", [3, 4]) == ["p55", "/", "p56"]


def test_bad_input_is_a_clear_error(tmp_path):
    broken = tmp_path / "broken.xml"
    broken.write_text(
        "<set><article><title><sentence>IL-2 <cons sem='G#protein_molecule'>gene</sentence>", encoding="utf8"
    )
    with pytest.raises(ValueError, match=r"broken.xml:1: not well-formed XML at column"):
        list(genia_xml_records(broken))
    with pytest.raises(ValueError, match="holds no GENIAcorpus3.02.xml"):
        list(
            genia_xml_records(
                write_genia_tarball(tmp_path / "other.tgz", FIXTURE.read_bytes(), member="other/corpus.xml")
            )
        )
    with pytest.raises(ValueError, match="not a tar archive"):
        list(genia_xml_records(EXPECTED))
    with pytest.raises(ValueError, match="GENIA source not found"):
        list(genia_xml_records(tmp_path / "missing.tgz"))
    empty = tmp_path / "empty.xml"
    empty.write_text(
        "<set><article><articleinfo><bibliomisc>M:1</bibliomisc></articleinfo><title><sentence> </sentence>"
        "</title></article></set>",
        encoding="utf8",
    )
    with pytest.raises(ValueError, match=r"empty.xml:1: sentence M:1-0 has no text"):
        list(genia_xml_records(empty))


def test_split_sizes_must_add_up_and_nothing_is_written_otherwise(tmp_path):
    with pytest.raises(ValueError, match="the corpus has 5 sentences, the split sizes .* add up to 6"):
        write_genia_splits(genia_xml_records(FIXTURE), tmp_path / "out", (4, 1, 1))
    assert not (tmp_path / "out").exists()
    assert parse_split("15022,1669,1855") == (15022, 1669, 1855)
    for bad in ("1,2", "a,b,c", "1,-1,2"):
        with pytest.raises(ValueError, match="three non-negative integers"):
            parse_split(bad)


@pytest.mark.skipif(
    not (REAL / "source" / "GENIAcorpus3.02.tgz").exists() or not (REAL / "train.jsonl").exists(),
    reason="the GENIA 3.02 tarball and train.jsonl are not in DEPNER_DATA/genia",
)
def test_the_real_release_gives_the_first_lines_of_train():
    n = 200
    records = genia_xml_records(REAL / "source" / "GENIAcorpus3.02.tgz")
    converted = [json.dumps(r, ensure_ascii=False) + "\n" for r in itertools.islice(records, n)]
    records.close()
    with (REAL / "train.jsonl").open(encoding="utf8") as lines:
        expected = list(itertools.islice(lines, n))
    assert len(converted) == n and converted == expected
