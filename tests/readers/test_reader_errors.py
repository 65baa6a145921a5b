"""Reader errors that say where ("FILE:LINE: what is wrong; how to fix"),
the UNER join's fallbacks (order, words), and the head-cycle check against
brute force. Each case is written here as a small file."""

import itertools
import json
import re
from pathlib import Path

import pytest
import spacy

from spacy_depner.pipeline.gazetteer import read_phrases
from spacy_depner.readers.conllu import read_conllu, sentences_to_doc
from spacy_depner.readers.documents import read_first_stage
from spacy_depner.readers.genia import read_genia
from spacy_depner.readers.genia_xml import genia_xml_records
from spacy_depner.readers.gum import read_gum_corpus
from spacy_depner.readers.uner import read_iob2, read_uner_corpus

DATA = Path(__file__).parents[1] / "data"
CONLLU, IOB2 = DATA / "tiny.conllu", DATA / "tiny.iob2"


def word(i, form, head, upos="NOUN"):
    return f"{i}\t{form}\t{form}\t{upos}\t_\t_\t{head}\tdep\t_\t_"


def write(path: Path, lines) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf8")
    return path


def sentence_blocks(text: str):
    return [block for block in text.strip().split("\n\n")]


# --- CoNLL-U heads --------------------------------------------------------


@pytest.mark.parametrize(
    "head, message",
    [
        ("4.1", r"bad\.conllu:4: head '4\.1' of word 2 \('b'\) is not a word id"),
        ("-1", r"bad\.conllu:4: head '-1' of word 2 \('b'\) is not a word id"),
        ("7", r"bad\.conllu:4: head 7 of word 2 \('b'\) is outside the sentence of 3 words \(lines 1-5\)"),
    ],
)
def test_a_bad_head_names_file_line_and_word(tmp_path, head, message):
    path = write(
        tmp_path / "bad.conllu",
        ["# sent_id = a", "# text = a b c", word(1, "a", 0), word(2, "b", head), word(3, "c", 1)],
    )
    with pytest.raises(ValueError, match=message):
        list(read_conllu(path))


def test_a_head_cycle_names_the_line_and_the_cycle(tmp_path):
    # 2 -> 4 -> 3 -> 2 (1 is the root): the error points at word 2, the first of the cycle
    path = write(
        tmp_path / "cycle.conllu", ["# sent_id = a", word(1, "a", 0), word(2, "b", 4), word(3, "c", 2), word(4, "d", 3)]
    )
    with pytest.raises(ValueError, match=r"cycle\.conllu:3: word 2 \('b'\) is on a head cycle \(2 -> 4 -> 3 -> 2\)"):
        list(read_conllu(path))
    self_loop = write(tmp_path / "self.conllu", [word(1, "a", 1)])
    with pytest.raises(ValueError, match=r"self\.conllu:1: word 1 \('a'\) is on a head cycle \(1 -> 1\)"):
        list(read_conllu(self_loop))


def test_the_first_fault_in_file_order_is_named(tmp_path):
    # trees are checked a few hundred sentences at a time: a cycle in sentence 1 comes before
    # a bad line in sentence 2, and a cycle deep in the file is found at its line
    lines = [word(1, "a", 2), word(2, "b", 1), "", word(1, "c", 0), "1\tbad"]
    with pytest.raises(ValueError, match=r"first\.conllu:1: word 1 \('a'\) is on a head cycle \(1 -> 2 -> 1\)"):
        list(read_conllu(write(tmp_path / "first.conllu", lines)))
    many = [line for k in range(300) for line in (word(1, f"w{k}", 0), word(2, "x", 1), "")]
    many[3 * 290 + 1] = word(2, "x", 2)  # sentence 291, line 872: word 2 is its own head
    sentences = read_conllu(write(tmp_path / "many.conllu", many))
    with pytest.raises(ValueError, match=r"many\.conllu:872: word 2 \('x'\) is on a head cycle \(2 -> 2\)"):
        list(sentences)


def test_multi_root_and_non_projective_trees_stay_valid(tmp_path):
    path = write(
        tmp_path / "ok.conllu",
        [word(1, "a", 0), word(2, "b", 4), word(3, "c", 1), word(4, "d", 1), "", word(1, "e", 0), word(2, "f", 0)],
    )
    first, second = read_conllu(path)
    assert first.heads == [-1, 3, 0, 0]  # arc 2 <- 4 crosses arc 1 -> 3
    assert second.heads == [-1, -1]
    doc = sentences_to_doc(spacy.blank("en").vocab, [first, second], with_trees=True)
    assert [t.head.i for t in doc] == [0, 3, 0, 0, 4, 5]


def test_the_tree_check_agrees_with_brute_force(tmp_path):
    """Every head column of 1 to 4 words: read iff following heads from each
    word reaches 0 (a word whose head is itself is a cycle)."""

    def is_forest(heads):  # CoNLL-U ids: 0 is the root
        for start in range(1, len(heads) + 1):
            word = start
            for _ in range(len(heads)):
                word = heads[word - 1] if word else 0
            if word:
                return False
        return True

    path = tmp_path / "tree.conllu"
    for n in range(1, 5):
        for heads in itertools.product(range(n + 1), repeat=n):
            write(path, [word(k, f"w{k}", h) for k, h in enumerate(heads, start=1)])
            if is_forest(heads):
                (sentence,) = read_conllu(path)
                assert sentence.heads == [h - 1 for h in heads]
            else:
                with pytest.raises(ValueError, match=r"tree\.conllu:\d+: word \d+ \('w\d+'\) is on a head cycle"):
                    list(read_conllu(path))


# --- CoNLL-U structure ----------------------------------------------------


@pytest.mark.parametrize(
    "lines, message",
    [
        ([word(1, "a", 0), word(3, "b", 1)], r"x\.conllu:2: word id '3' where 2 was expected"),
        ([word(1, "a", 0), "2-x\tab\t_\t_\t_\t_\t_\t_\t_\t_"], r"x\.conllu:2: word id '2-x' where 2 was expected"),
        (["3-4\tab\t_\t_\t_\t_\t_\t_\t_\t_"], r"x\.conllu:1: multiword range 3-4 where 1-m was expected"),
        ([word(1, "", 0)], r"x\.conllu:1: word 1 has an empty form"),
        (
            [word(1, "a", 0, upos="PROPN_")],
            r"x\.conllu:1: UPOS 'PROPN_' of word 1 \('a'\) is not a Universal Dependencies",
        ),
        ([word(1, "a", 0), "# sent_id = late"], r"x\.conllu:2: a comment line after the words of a sentence"),
        (
            ["# sent_id = a", "# sent_id = b", word(1, "a", 0)],
            r"x\.conllu:2: a second sent_id for the sentence of line 1",
        ),
        (["# sent_id =", word(1, "a", 0)], r"x\.conllu:1: an empty sent_id"),
        ([], r"x\.conllu:1: no sentence in the file"),
        (["", "# only a comment", ""], r"x\.conllu:3: no sentence in the file"),
    ],
)
def test_conllu_structure_errors_name_file_and_line(tmp_path, lines, message):
    with pytest.raises(ValueError, match=message):
        list(read_conllu(write(tmp_path / "x.conllu", lines)))


def test_upos_underscore_means_no_tag(tmp_path):
    (sentence,) = read_conllu(write(tmp_path / "x.conllu", [word(1, "a", 0, upos="_")]))
    doc = sentences_to_doc(spacy.blank("en").vocab, [sentence], with_trees=True, with_tags=True)
    assert doc[0].pos_ == ""


def test_duplicate_sent_id_names_both_lines(tmp_path):
    lines = [
        "# sent_id = s1",
        word(1, "a", 0),
        "",
        "# sent_id = s2",
        word(1, "b", 0),
        "",
        "# sent_id = s1",
        word(1, "c", 0),
    ]
    with pytest.raises(ValueError, match=r"dup\.conllu:7: sent_id 's1' was already given at line 1"):
        list(read_conllu(write(tmp_path / "dup.conllu", lines)))
    iob2 = ["# sent_id = s1", "1\ta\tO", "", "# sent_id = s1", "1\tb\tO"]
    with pytest.raises(ValueError, match=r"dup\.iob2:4: sent_id 's1' was already given at line 1"):
        list(read_iob2(write(tmp_path / "dup.iob2", iob2)))


def test_gum_duplicate_sent_id_and_bad_declaration(tmp_path):
    text = (DATA / "nested_gum.conllu").read_text(encoding="utf8")
    twice = tmp_path / "twice.conllu"
    twice.write_text(text.replace("GUM_fixture_museum-2", "GUM_fixture_museum-1"), encoding="utf8")
    with pytest.raises(
        ValueError, match=r"twice\.conllu:17: sent_id 'GUM_fixture_museum-1' was already given at line 4"
    ):
        read_gum_corpus(twice)
    declaration = tmp_path / "declaration.conllu"
    declaration.write_text(
        text.replace("GRP-etype-infstat-salience-centering-minspan-link-identity", "GRP", 1), encoding="utf8"
    )
    with pytest.raises(ValueError, match=r"declaration\.conllu:2: cannot read the global\.Entity declaration"):
        read_gum_corpus(declaration)


def test_not_utf8_crlf_and_byte_order_mark(tmp_path):
    lines = (CONLLU.read_text(encoding="utf8")).splitlines()
    binary = tmp_path / "binary.conllu"
    binary.write_bytes("\n".join(lines[:5]).encode() + b"\n1\t\xff\xfe\n")
    with pytest.raises(ValueError, match=r"binary\.conllu:6: not UTF-8 text \(byte 0xff at column 3\)"):
        list(read_conllu(binary))
    windows = tmp_path / "windows.conllu"
    windows.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode() + b"\r\n")
    assert list(read_conllu(windows)) == list(read_conllu(CONLLU))  # same sentences, line numbers included
    with pytest.raises(ValueError, match=r"is a folder: give the CoNLL-U file itself"):
        list(read_conllu(tmp_path))


# --- the UNER join --------------------------------------------------------


def test_join_without_sent_ids_follows_the_order(tmp_path):
    conllu = tmp_path / "plain.conllu"
    conllu.write_text(re.sub(r"# sent_id = \S+\n", "", CONLLU.read_text(encoding="utf8")), encoding="utf8")
    blocks = {
        re.search(r"# sent_id = (\S+)", b).group(1): re.sub(r"# sent_id = \S+\n", "", b)
        for b in sentence_blocks(IOB2.read_text(encoding="utf8"))
    }
    iob2 = tmp_path / "plain.iob2"
    iob2.write_text("\n\n".join(blocks[k] for k in ("s1", "s2", "s3")) + "\n", encoding="utf8")
    corpus = read_uner_corpus(conllu, iob2)
    assert corpus.joined_by == {"sent_id": 0, "order": 3, "words": 0}
    assert corpus.tags[1] == ["O", "O", "O", "O", "B-ORG", "I-ORG", "O", "B-LOC"]
    assert corpus.tags[2] == ["O", "B-LOC", "I-LOC"]


def test_join_with_renumbered_ids_in_another_order_matches_words(tmp_path):
    iob2 = tmp_path / "renumbered.iob2"
    iob2.write_text(
        re.sub(r"# sent_id = s(\d)", r"# sent_id = pud-\1", IOB2.read_text(encoding="utf8")), encoding="utf8"
    )
    corpus = read_uner_corpus(CONLLU, iob2)  # the IOB2 order is s2, s1, s3
    assert corpus.joined_by == {"sent_id": 0, "order": 0, "words": 3}
    assert [s.sent_id for s in corpus.sentences] == ["s1", "s2", "s3"]
    assert corpus.tags[0] == ["B-PER", "I-PER", "O", "B-LOC", "I-LOC", "O"]
    assert corpus.tags[1] == ["O", "O", "O", "O", "B-ORG", "I-ORG", "O", "B-LOC"]
    one_kept = tmp_path / "one_kept.iob2"
    one_kept.write_text(IOB2.read_text(encoding="utf8").replace("s2", "pud-2").replace("s1", "pud-1"), encoding="utf8")
    assert read_uner_corpus(CONLLU, one_kept).joined_by == {"sent_id": 1, "order": 0, "words": 2}


def test_join_pairs_identical_sentences_in_order(tmp_path):
    conllu = write(
        tmp_path / "same.conllu",
        [
            "# sent_id = a",
            word(1, "Paris", 0),
            "",
            "# sent_id = b",
            word(1, "Rome", 0),
            "",
            "# sent_id = c",
            word(1, "Paris", 0),
        ],
    )
    iob2 = write(
        tmp_path / "same.iob2",
        [
            "# sent_id = x",
            "1\tParis\tB-LOC",
            "",
            "# sent_id = y",
            "1\tParis\tB-ORG",
            "",
            "# sent_id = z",
            "1\tRome\tB-PER",
        ],
    )
    corpus = read_uner_corpus(conllu, iob2)
    assert corpus.tags == [["B-LOC"], ["B-PER"], ["B-ORG"]]
    assert corpus.joined_by == {"sent_id": 0, "order": 0, "words": 3}


def test_join_error_shows_the_first_differing_token(tmp_path):
    words = [f"w{k}" for k in range(1, 26)]
    conllu = write(
        tmp_path / "long.conllu",
        ["# sent_id = long"] + [word(k, w, 0 if k == 1 else 1) for k, w in enumerate(words, start=1)],
    )
    changed = words[:19] + ["W20"] + words[20:]
    iob2 = write(tmp_path / "long.iob2", ["", "# sent_id = long"] + [f"{k}\t{w}\tO" for k, w in enumerate(changed, 1)])
    with pytest.raises(ValueError) as error:
        read_uner_corpus(conllu, iob2)
    message = str(error.value)
    assert re.search(r"long\.iob2:2: sentence 'long' matches no sentence of .*long\.conllu", message)
    assert "long.conllu:1)" in message
    assert "differs at token 20: 'W20' in the IOB2 file, 'w20' in the CoNLL-U file" in message
    assert "tokens 17-23: ['w17', 'w18', 'w19', 'W20', 'w21', 'w22', 'w23'] vs ['w17', 'w18', 'w19', 'w20'" in message
    shorter = write(
        tmp_path / "short.iob2", ["# sent_id = long"] + [f"{k}\t{w}\tO" for k, w in enumerate(words[:22], 1)]
    )
    with pytest.raises(ValueError, match=r"differs at token 23: the end \(after 22 tokens\) in the IOB2 file, 'w23'"):
        read_uner_corpus(conllu, shorter)


def test_join_errors_name_the_sentence_left_over(tmp_path):
    blocks = sentence_blocks(IOB2.read_text(encoding="utf8"))
    fewer = tmp_path / "fewer.iob2"
    fewer.write_text("\n\n".join(blocks[:2]) + "\n", encoding="utf8")  # s2, s1: s3 has no entities
    with pytest.raises(ValueError, match=r"tiny\.conllu:24: sentence 's3' is not in .*fewer\.iob2.*--shared"):
        read_uner_corpus(CONLLU, fewer)
    extra = tmp_path / "extra.iob2"
    extra.write_text(IOB2.read_text(encoding="utf8") + "\n# sent_id = s4\n1\tHello\tO\n", encoding="utf8")
    with pytest.raises(
        ValueError,
        match=r"extra\.iob2:25: sentence 's4' matches no sentence of .*tiny\.conllu by "
        r"sent_id, by order or by its words; the CoNLL-U file has 3 sentences and "
        r"the IOB2 file 4: .*--shared",
    ):
        read_uner_corpus(CONLLU, extra)
    # the same number of sentences, one of other words: no slice, another release
    other = tmp_path / "other.iob2"
    other.write_text(IOB2.read_text(encoding="utf8").replace("Visit", "Go"), encoding="utf8")
    with pytest.raises(ValueError, match=r"give the CoNLL-U file of the UD release the entities were made on"):
        read_uner_corpus(CONLLU, other)
    # with shared, the sentences without a partner are dropped and counted
    corpus = read_uner_corpus(CONLLU, extra, shared=True)
    assert [s.sent_id for s in corpus.sentences] == ["s1", "s2", "s3"] and corpus.dropped == {"conllu": 0, "iob2": 1}
    corpus = read_uner_corpus(CONLLU, fewer, shared=True)
    assert [s.sent_id for s in corpus.sentences] == ["s1", "s2"] and corpus.dropped == {"conllu": 1, "iob2": 0}


@pytest.mark.parametrize(
    "lines, message",
    [
        (["1\ta\tO", "3\tb\tO"], r"x\.iob2:2: token index '3' where 2 was expected"),
        (["1\ta"], r"x\.iob2:1: an IOB2 line needs index, token and label"),
        (["1\t\tO"], r"x\.iob2:1: token 1 is empty"),
        (["1\ta\tO", "# sent_id = late"], r"x\.iob2:2: a comment line after the tokens of a sentence"),
        (["", ""], r"x\.iob2:2: no sentence in the file"),
    ],
)
def test_iob2_errors_name_file_and_line(tmp_path, lines, message):
    with pytest.raises(ValueError, match=message):
        list(read_iob2(write(tmp_path / "x.iob2", lines)))


# --- JSON lines: GENIA, gazetteer, first-stage records ----------------------


def test_genia_duplicate_sent_id(tmp_path):
    first = {"sent_id": "M-0", "tokens": ["IL-2", "gene"], "entities": []}
    repeated = {**first, "entities": [{"start": 0, "end": 1, "type": "protein"}]}
    other = {**first, "tokens": ["c-fos"]}
    kept = write(tmp_path / "kept.jsonl", [json.dumps(first), json.dumps(repeated)])
    assert read_genia(kept) == [(["IL-2", "gene"], []), (["IL-2", "gene"], [(0, 1, "protein")])]
    clash = write(tmp_path / "clash.jsonl", [json.dumps(first), "", json.dumps(other)])
    with pytest.raises(ValueError, match=r"clash\.jsonl:3: sent_id 'M-0' was already given at line 1 to other tokens"):
        read_genia(clash)
    with pytest.raises(ValueError, match=r"empty\.jsonl:1: no sentence in the file"):
        read_genia(write(tmp_path / "empty.jsonl", ["", " "]))
    with pytest.raises(ValueError, match=r"surrogate\.jsonl:1: a \\ud800-\\udfff escape without its pair"):
        read_genia(write(tmp_path / "surrogate.jsonl", ['{"tokens": ["a\\ud800"], "entities": []}']))


@pytest.mark.parametrize(
    "content, message",
    [
        (b'{"label": "LOC", "pattern": "Paris"}\n\n{"label": "LOC", "pattern": }\n', r"gaz\.jsonl:3: not valid JSON"),
        (b'{"label": "LOC", "pattern": "Paris"}\n{"label": "LOC"}\n', r"gaz\.jsonl:2: expected \{\"label\": str"),
        (b'{"label": "LOC", "pattern": 7}\n', r"gaz\.jsonl:1: expected \{\"label\": str, \"pattern\": str\}, got"),
        (b'{"label": "", "pattern": "Paris"}\n', r"gaz\.jsonl:1: the label and the pattern must not be empty"),
        (
            b'{"label": "LOC", "pattern": "Paris"}\n\x89PNG\r\n\x1a\n',
            r"gaz\.jsonl:2: not UTF-8 text \(byte 0x89 at column 1\)",
        ),
        (b"", r"gaz\.jsonl:1: no phrases in the gazetteer file"),
        (b"\n  \n\n", r"gaz\.jsonl:1: no phrases in the gazetteer file"),
    ],
)
def test_gazetteer_errors_name_file_and_line(tmp_path, content, message):
    path = tmp_path / "gaz.jsonl"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message):
        read_phrases(path)


def test_gazetteer_folder_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match=r"is a folder: give the gazetteer file itself"):
        read_phrases(tmp_path)


def test_first_stage_records_name_the_line(tmp_path):
    good = {"document": 0, "tokens": 3, "entities": [[0, 1, "PER"]]}
    assert read_first_stage(write(tmp_path / "ok.jsonl", [json.dumps(good)]))[0][1] == good
    with pytest.raises(ValueError, match=r"bad\.jsonl:2: a first-stage record is"):
        read_first_stage(write(tmp_path / "bad.jsonl", [json.dumps(good), json.dumps({"document": 1, "tokens": 2})]))
    with pytest.raises(ValueError, match=r"twice\.jsonl:2: document 0 has a record already at .*twice\.jsonl:1"):
        read_first_stage(write(tmp_path / "twice.jsonl", [json.dumps(good), json.dumps(good)]))


# --- GENIA XML --------------------------------------------------------------


def test_xml_errors_name_the_line(tmp_path):
    lines = (DATA / "genia_3.02_fixture.xml").read_text(encoding="utf8").splitlines()
    broken = write(tmp_path / "broken.xml", lines[:16] + [lines[16].replace("</cons> bind", " bind")] + lines[17:])
    with pytest.raises(ValueError, match=r"broken\.xml:17: not well-formed XML at column \d+ \(mismatched tag\)"):
        list(genia_xml_records(broken))
    outside = write(tmp_path / "outside.xml", ["<set>", "<sentence>IL-2</sentence>", "</set>"])
    with pytest.raises(ValueError, match=r"outside\.xml:2: a <sentence> outside an <article>"):
        list(genia_xml_records(outside))
