"""GENIA / GUM nested-mention readers and the nested coverage report, on
hand-made fixtures (tests/data/nested_genia.jsonl, tests/data/nested_gum.conllu).

Hand-computed values of the fixtures:

GENIA (3 sentences, 31 tokens, 14 mentions, 13 distinct spans):
  s1 [0,2) [0,1) [1,3) [4,6)        [0,2) and [1,3) cross   flat 3 nested 3 quadratic 3
  s2 [3,6) [3,4) [7,11) [7,8)x2 (DNA and protein) [9,10)    flat 3 nested 5 quadratic 5
  s3 [1,8) ⊃ [1,4) ⊃ [2,4), [1,8) ⊃ [5,8): two long children  flat 2 nested 4 quadratic 3
  all spans: (36 + 78 + 66) / 31 tokens.
GUM (2 documents, 3 sentences, 26 words, 11 mentions after 1 duplicate, 10 spans):
  s1 [0,3) ⊃ [0,1); [4,9) place+organization ⊃ [8,9); "in Paris" hangs on the verb,
     so [4,9) is not a DGM valid span                     flat 2 nested 4 quadratic 4 dgm 3
  s2 [0,1) [4,5)                                           flat 2 nested 2 quadratic 2 dgm 2
  s3 [0,8) ⊃ [3,8) ⊃ [3,5), [6,8): [3,8) has two long children
                                                           flat 2 nested 4 quadratic 3 dgm 4
  valid spans (counted by hand from the trees): 26 + 17 + 27 = 70; all spans 55 + 21 + 55.
"""

import itertools
import random
import warnings
from pathlib import Path

import pytest
import spacy
from spacy.util import registry

from spacy_depner.evaluation.nested_coverage import (
    coverage_main,
    genia_coverage,
    gum_coverage,
    max_flat,
    max_laminar,
    max_quadratic,
    nested_coverage_report,
)
from spacy_depner.readers.genia import read_genia
from spacy_depner.readers.gum import GUM_LABELS, read_gum, read_gum_corpus

DATA = Path(__file__).parents[1] / "data"
GENIA, GUM = DATA / "nested_genia.jsonl", DATA / "nested_gum.conllu"

GENIA_MENTIONS = [
    [(0, 2, "DNA"), (0, 1, "protein"), (1, 3, "DNA"), (4, 6, "protein")],
    [(3, 6, "protein"), (3, 4, "protein"), (7, 11, "DNA"), (7, 8, "DNA"), (7, 8, "protein"), (9, 10, "protein")],
    [(1, 8, "cell_type"), (1, 4, "cell_type"), (2, 4, "cell_type"), (5, 8, "cell_type")],
]
GUM_MENTIONS = [
    [
        [
            (0, 3, "person", 2, 3),
            (0, 1, "person", 0, 1),
            (4, 9, "organization", 6, 7),
            (4, 9, "place", 6, 7),
            (8, 9, "place", 8, 9),
        ],
        [(0, 1, "person", 0, 1), (4, 5, "place", 4, 5)],
    ],
    [[(0, 8, "person", 1, 2), (3, 8, "place", 3, 8), (3, 5, "place", 3, 5), (6, 8, "place", 6, 8)]],
]


def reader(name, *args, **kwargs):
    return registry.readers.get(name)(*args, **kwargs)


def span_tuples(doc, key="nested_ner"):
    return [(s.start, s.end, s.label_) for s in doc.spans[key]]


# --- GENIA ---------------------------------------------------------------


def test_read_genia_mentions():
    sentences = read_genia(GENIA)
    assert [len(words) for words, _ in sentences] == [8, 12, 11]
    assert sentences[1][0][7:11] == ["c-fos", "and", "c-jun", "genes"]
    assert [mentions for _, mentions in sentences] == GENIA_MENTIONS


@pytest.mark.parametrize(
    "line,message",
    [
        ('{"tokens": ["a"], "entities": [}', "not valid JSON"),
        ('{"tokens": ["a", "b"]}', "'tokens' and 'entities'"),
        ('{"tokens": ["a", "b"], "entities": [{"start": 1, "end": 3, "type": "DNA"}]}', "outside the 2 tokens"),
        ('{"tokens": ["a", "b"], "entities": [{"start": 1, "end": 1, "type": "DNA"}]}', "empty"),
        ('{"tokens": ["a", "b"], "entities": [{"start": 0, "end": 1}]}', "has no type"),
        ('{"tokens": [], "entities": []}', "non-empty list"),
    ],
)
def test_read_genia_malformed_line_names_the_line(tmp_path, line, message):
    path = tmp_path / "bad.jsonl"
    good = GENIA.read_text(encoding="utf8").splitlines()[0]
    path.write_text(f"{good}\n\n{line}\n", encoding="utf8")
    with pytest.raises(ValueError, match=rf"bad\.jsonl:3: .*{message}"):
        read_genia(path)
    with pytest.raises(ValueError, match="not found"):
        read_genia(tmp_path / "missing.jsonl")


def test_genia_reader_examples():
    examples = list(reader("spacy_depner.GENIACorpus.v1", GENIA)(spacy.blank("en")))
    assert len(examples) == 3
    assert examples[0].predicted.text == "IL-7 gene expression and AP-kappa B activation ."
    assert [span_tuples(e.reference) for e in examples] == GENIA_MENTIONS
    for example in examples:
        assert not example.predicted.spans and not example.predicted.has_annotation("DEP")
        assert [t.text for t in example.predicted] == [t.text for t in example.reference]
    limited = list(reader("spacy_depner.GENIACorpus.v1", GENIA, limit=1, spans_key="sc")(spacy.blank("en")))
    assert len(limited) == 1 and span_tuples(limited[0].reference, "sc") == GENIA_MENTIONS[0]


# --- GUM -----------------------------------------------------------------


def test_read_gum_documents_sentences_and_mentions():
    documents = read_gum(GUM)
    assert [d.doc_id for d in documents] == ["GUM_fixture_museum", "GUM_fixture_mayors"]
    assert [[list(s.mentions) for s in d] for d in documents] == GUM_MENTIONS
    first = documents[0][0].sentence
    assert first.sent_id == "GUM_fixture_museum-1" and first.heads == [2, 0, 3, -1, 6, 6, 3, 8, 3, 3]
    # multiword token "cannot" = can + not: words, not the surface token
    assert documents[0][1].sentence.words == ["She", "can", "not", "forget", "it", "."]
    assert documents[0][0].mentions[0].head_start == 2 and documents[0][0].mentions[0].label in GUM_LABELS


def test_read_gum_counts():
    stats = read_gum_corpus(GUM).stats
    assert (stats.documents, stats.sentences, stats.mentions) == (2, 3, 11)
    assert stats.duplicates == 1  # "Paris": entities 4 and 7, same span and type
    assert stats.minspan_gaps == 1  # "New York and Los Angeles": minspan 1,2,4,5
    assert stats.cross_sentence == stats.unclosed == stats.discontinuous == 0
    assert stats.labels == {"organization": 1, "person": 4, "place": 6}


@pytest.mark.parametrize("dependencies,has_trees", [("given", True), ("predicted", False)])
def test_gum_reader_per_sentence(dependencies, has_trees):
    examples = list(reader("spacy_depner.GUMCorpus.v1", GUM, dependencies=dependencies)(spacy.blank("en")))
    assert len(examples) == 3
    assert examples[0].predicted.text == "Kim's sister visited the old museum in Paris."
    assert examples[1].predicted.text == "She cannot forget it."
    assert [e.predicted.has_annotation("DEP") for e in examples] == [has_trees] * 3
    assert all(e.reference.has_annotation("DEP") for e in examples)
    assert examples[2].reference[4].head.i == 1 and examples[2].reference[8].dep_ == "ROOT"
    expected = [[m[:3] for m in s] for d in GUM_MENTIONS for s in d]
    assert [span_tuples(e.reference) for e in examples] == expected
    assert not any(e.predicted.spans for e in examples)


@pytest.mark.parametrize("dependencies", ["given", "predicted"])
def test_gum_reader_whole_documents(dependencies):
    examples = list(
        reader("spacy_depner.GUMCorpus.v1", GUM, dependencies=dependencies, whole_documents=True, spans_key="sc")(
            spacy.blank("en")
        )
    )
    assert [len(e.reference) for e in examples] == [16, 10]
    first = examples[0]
    for doc in (first.reference, first.predicted):
        assert [s.text for s in doc.sents] == ["Kim's sister visited the old museum in Paris.", "She cannot forget it."]
    assert span_tuples(first.reference, "sc") == [m[:3] for m in GUM_MENTIONS[0][0]] + [
        (10, 11, "person"),
        (14, 15, "place"),
    ]
    assert first.predicted.has_annotation("DEP") == (dependencies == "given")
    assert first.reference[13].dep_ == "ROOT" and first.reference[10].head.i == 13
    limited = list(reader("spacy_depner.GUMCorpus.v1", GUM, whole_documents=True, limit=1)(spacy.blank("en")))
    assert len(limited) == 1


def test_gum_reader_rejects_bad_arguments():
    with pytest.raises(ValueError, match="given' or 'predicted"):
        reader("spacy_depner.GUMCorpus.v1", GUM, dependencies="gold")


def _with_misc(tmp_path, replacements):
    text = GUM.read_text(encoding="utf8")
    for old, new in replacements:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "edited.conllu"
    path.write_text(text, encoding="utf8")
    return path


def test_gum_malformed_brackets_name_the_line(tmp_path):
    path = _with_misc(tmp_path, [("Entity=2)\n", "Entity=9)\n")])  # closes an entity that is not open
    with pytest.raises(ValueError, match=r"edited\.conllu:8: .*closes mention '9'"):
        read_gum(path)
    path = _with_misc(tmp_path, [("Entity=2)\n", "Entity=2)x\n")])
    with pytest.raises(ValueError, match=r"edited\.conllu:8: cannot read"):
        read_gum(path)


def test_gum_cross_sentence_unclosed_and_discontinuous_are_counted(tmp_path):
    path = _with_misc(
        tmp_path,
        [
            # "sister" no longer closes entity 2; "She" closes it in the next sentence
            ("Entity=2)\n", "_\n"),
            ("Entity=(2-person-giv:act-sssss-cf1-1-ana)", "Entity=2)"),
            # entity 4 of the second document opens but never closes
            ("Entity=4)2)1)", "Entity=2)1)"),
            # a discontinuous part
            ("Entity=(3-place-giv:act-sssss-cf2-1-ana)", "Entity=(5[1/2]-place-giv:act-sssss-cf2-1-ana)"),
        ],
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        corpus = read_gum_corpus(path)
    assert (corpus.stats.cross_sentence, corpus.stats.unclosed, corpus.stats.discontinuous) == (1, 1, 1)
    assert any("crossing a sentence boundary" in str(w.message) for w in caught)
    assert [m[:3] for m in corpus.documents[0][0].mentions] == [
        (0, 1, "person"),
        (4, 9, "organization"),
        (4, 9, "place"),
        (8, 9, "place"),
    ]
    assert corpus.documents[0][1].mentions == [] and len(corpus.documents[1][0].mentions) == 3


# --- coverage ------------------------------------------------------------


def test_genia_coverage_fixture():
    report = genia_coverage(GENIA)
    assert (report["sentences"], report["tokens"], report["mentions"]) == (3, 31, 14)
    assert (report["distinct_spans"], report["same_span"], report["crossing_pairs"]) == (13, 1, 1)
    assert report["kept"] == {"flat": 8, "nested": 12, "quadratic": 11}
    assert report["coverage"] == {
        "flat": round(800 / 14, 2),
        "nested": round(1200 / 14, 2),
        "quadratic": round(1100 / 14, 2),
    }
    assert report["spans_per_token"] == {"all": round(180 / 31, 3)}
    assert coverage_main(jsonl=GENIA) == report


def test_gum_coverage_fixture():
    report = gum_coverage(GUM)
    assert (report["documents"], report["sentences"], report["tokens"], report["mentions"]) == (2, 3, 26, 11)
    assert report["kept"] == {"flat": 6, "nested": 10, "quadratic": 9, "dgm": 9}
    assert report["coverage"] == {
        "flat": round(600 / 11, 2),
        "nested": round(1000 / 11, 2),
        "quadratic": round(900 / 11, 2),
        "dgm": round(900 / 11, 2),
    }
    assert report["spans_per_token"] == {"all": round(131 / 26, 3), "dgm": round(70 / 26, 3)}
    assert report["reader"]["duplicates"] == 1
    assert coverage_main(gum=GUM) == report
    with pytest.raises(ValueError, match="exactly one"):
        coverage_main()
    with pytest.raises(ValueError, match="exactly one"):
        coverage_main(jsonl=GENIA, gum=GUM)


def test_report_accepts_flat_heads_and_checks_offsets():
    sentences = [s for d in read_gum(GUM) for s in d]
    words = [s.sentence.words for s in sentences]
    mentions = [s.mentions for s in sentences]
    by_sentence = nested_coverage_report(words, mentions, heads=[s.sentence.heads for s in sentences])
    flat, offset = [], 0
    for s in sentences:
        flat.extend(h + offset if h >= 0 else -1 for h in s.sentence.heads)
        offset += len(s.sentence.words)
    assert nested_coverage_report(words, mentions, heads=flat, sentence_offsets=[0, 10, 16, 26]) == by_sentence
    with pytest.raises(ValueError, match="sentence_offsets"):
        nested_coverage_report(words, mentions, sentence_offsets=[0, 10, 26])
    with pytest.raises(ValueError, match="ends after its sentence"):
        nested_coverage_report([["a"]], [[(0, 2, "X")]])


# --- exact maxima against brute force --------------------------------------


def _disjoint(a, b):
    return a[1] <= b[0] or b[1] <= a[0]


def _contains(a, b):
    return a != b and a[0] <= b[0] and b[1] <= a[1]


def _laminar(subset):
    return all(_disjoint(a, b) or _contains(a, b) or _contains(b, a) for a, b in itertools.combinations(subset, 2))


def _quadratic(subset):
    if not _laminar(subset):
        return False
    for parent in subset:
        inside = [c for c in subset if _contains(parent, c)]
        children = [c for c in inside if not any(_contains(d, c) for d in inside)]
        if sum(c[1] - c[0] > 1 for c in children) > 1:
            return False
    return True


def _brute_max(spans, allowed):
    distinct = sorted(set(spans))  # one label per span: a duplicate span counts once
    return max(len(s) for r in range(len(distinct) + 1) for s in itertools.combinations(distinct, r) if allowed(s))


def _random_spans(rng, mostly_laminar):
    """Random spans over n <= 10 words, duplicates allowed; with
    ``mostly_laminar`` a crossing span is kept only 15 % of the time, so that
    deep nestings (where the quadratic space loses mentions) are frequent."""
    n, spans = rng.randint(1, 10), []
    for _ in range(rng.randint(0, 9)):
        start = rng.randrange(n)
        span = (start, rng.randint(start + 1, n))
        if (
            not mostly_laminar
            or rng.random() < 0.15
            or all(span == b or _disjoint(span, b) or _contains(span, b) or _contains(b, span) for b in spans)
        ):
            spans.append(span)
    return spans


@pytest.mark.parametrize("mostly_laminar", [False, True])
def test_exact_maxima_match_brute_force(mostly_laminar):
    rng = random.Random(2023)
    differ = 0
    for _ in range(300):
        spans = _random_spans(rng, mostly_laminar)
        flat = _brute_max(spans, lambda s: all(_disjoint(a, b) for a, b in itertools.combinations(s, 2)))
        laminar, quadratic = _brute_max(spans, _laminar), _brute_max(spans, _quadratic)
        assert max_flat(spans) == flat, spans
        assert max_laminar(spans) == laminar, spans
        assert max_quadratic(spans) == quadratic, spans
        differ += quadratic < laminar
    assert differ >= 3  # the inputs do exercise the quadratic restriction
