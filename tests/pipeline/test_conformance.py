"""spaCy's conventions, one table over every registered entity component
(conformance_rows.ROWS), as spaCy's own tests hold its components to them
(serialize/test_serialize_pipeline.py, test_pickles.py, the issue 6950
pickle of an nlp with listeners, pipeline/test_pipe_methods.py's
load with disable/enable, test_spancat.py's multiprocessing,
test_tok2vec.py's replace_listeners, test_language.py's as_tuples and Doc
input): pickle and deepcopy, bytes and disk round trips of the pipeline and
of the component, load with disable/exclude/enable, nlp.pipe in two
processes under fork and spawn, as_tuples, batch sizes, a Doc as input,
sourcing, replace_listeners, DocBin / to_json / from_docs / copy of the
outputs, edge inputs, and entities set before the component. Adding a
component means adding a row; spaCy's ``ner`` and ``spancat`` are rows too,
the bar, and pass the same checks (where spaCy itself drops something, the
check says so).

"The same output" is ``assert_same`` of the canonical dumps: doc.ents and
every span group as (start, end, label), the group's attrs["scores"] close."""

import copy
import json
import os
import pickle
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest
import spacy
from conformance_rows import BY_NAME, ROWS, TEXTS, assert_same, dump, dumps
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.util import load_model_from_config
from test_own_data_recipe import SM
from thinc.api import Config

from spacy_depner.pipeline.entity_pipe import ENTITY_COMPONENTS

HERE = Path(__file__).parent
OWN_DATA = "own_data_dgm"
LISTENING = [row.name for row in ROWS if row.listens]
EDGE = [
    "",
    "  \n ",
    "Paris",
    "!?! ... ,;: !",
    " ".join(["Mary lives in Paris and John Smith visited New York ."] * 30),
    "Mary\n\nSmith lives in\n\nParis , John \n\n visited\n\n New York",
]


ALL = [row.name for row in ROWS]
OURS = {row.name for row in ROWS if row.ours}


@pytest.fixture(scope="session")
def saved(tmp_path_factory):
    """{row: the folder of its trained pipeline}, each built on first use."""
    root, folders = tmp_path_factory.mktemp("conformance"), {}

    def get(name):
        if name == OWN_DATA and not (SM / "config.cfg").is_file():
            pytest.skip(f"no en_core_web_sm at {SM}")
        if name not in folders:
            BY_NAME[name].build(root / name)
            folders[name] = root / name
        return folders[name]

    return get


@pytest.fixture(scope="session")
def baseline(saved):
    """{row: (the loaded pipeline, the dumps of TEXTS)}; the pipeline must not be changed."""
    cache = {}

    def get(name):
        if name not in cache:
            nlp = spacy.load(saved(name))
            cache[name] = nlp, dumps(nlp)
            assert any(doc["ents"] or any(g["spans"] for g in doc["spans"].values()) for doc in cache[name][1]), (
                f"{name} predicts nothing: the checks would compare nothing"
            )
        return cache[name]

    return get


def test_the_table_has_a_row_for_every_registered_component_and_the_two_stage_pipeline():
    for entry in entry_points(group="spacy_factories"):
        if entry.value.startswith("spacy_depner."):
            entry.load()  # registers the entity components
    assert set(ENTITY_COMPONENTS) <= {row.factory for row in ROWS if row.ours}
    assert "second_stage" in {row.component for row in ROWS}
    assert {row.factory for row in ROWS if not row.ours} == {"ner", "spancat"}


@pytest.mark.parametrize("name", ALL)
def test_pickle(name, baseline):
    nlp, expected = baseline(name)
    assert_same(dumps(pickle.loads(pickle.dumps(nlp))), expected)


@pytest.mark.parametrize("name", ALL)
def test_deepcopy(name, baseline):
    nlp, expected = baseline(name)
    assert_same(dumps(copy.deepcopy(nlp)), expected)


@pytest.mark.parametrize("name", ALL)
def test_pipeline_bytes_onto_a_pipeline_from_the_config(name, baseline):
    nlp, expected = baseline(name)
    fresh = load_model_from_config(nlp.config, auto_fill=True)
    assert_same(dumps(fresh.from_bytes(nlp.to_bytes())), expected)


@pytest.mark.parametrize("name", ALL)
def test_pipeline_to_disk_and_load(name, baseline, tmp_path):
    nlp, expected = baseline(name)
    nlp.to_disk(tmp_path)
    assert_same(dumps(spacy.load(tmp_path)), expected)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("how", ["bytes", "disk"])
def test_the_component_alone_onto_a_fresh_component_from_the_config(name, how, baseline, tmp_path):
    """The other components from bytes, the component under test new from the config, then its own round trip."""
    nlp, expected = baseline(name)
    component = BY_NAME[name].component
    fresh = load_model_from_config(nlp.config, auto_fill=True)
    fresh.from_bytes(nlp.to_bytes(exclude=[component]), exclude=[component])
    if how == "bytes":
        fresh.get_pipe(component).from_bytes(nlp.get_pipe(component).to_bytes())
    else:
        nlp.get_pipe(component).to_disk(tmp_path / component)
        fresh.get_pipe(component).from_disk(tmp_path / component)
    assert_same(dumps(fresh), expected)


def run_or_clear_error(nlp):
    """The dumps of TEXTS, or None where the pipeline says clearly (a ValueError
    about the Doc) which annotation it misses; any other exception fails."""
    try:
        return dumps(nlp)
    except ValueError as error:
        assert "Doc" in str(error), error
        return None


def others(name, baseline):
    return [pipe for pipe in baseline(name)[0].pipe_names if pipe != BY_NAME[name].component]


@pytest.mark.parametrize("name", ALL)
def test_load_with_each_other_component_disabled_and_enable_it_again(name, baseline, saved):
    _, expected = baseline(name)
    for other in others(name, baseline):
        nlp = spacy.load(saved(name), disable=[other])
        assert nlp.disabled == [other] and other not in nlp.pipe_names and other in nlp.component_names
        run_or_clear_error(nlp)
        nlp.enable_pipe(other)
        assert_same(dumps(nlp), expected)


@pytest.mark.parametrize("name", ALL)
def test_load_with_each_other_component_excluded(name, baseline, saved):
    for other in others(name, baseline):
        nlp = spacy.load(saved(name), exclude=[other])
        assert other not in nlp.component_names and BY_NAME[name].component in nlp.pipe_names
        run_or_clear_error(nlp)


@pytest.mark.parametrize("name", ALL)
def test_load_enabling_all_but_each_other_component(name, baseline, saved):
    for other in others(name, baseline):
        nlp = spacy.load(saved(name), enable=[p for p in baseline(name)[0].pipe_names if p != other])
        assert nlp.disabled == [other] and other not in nlp.pipe_names
        run_or_clear_error(nlp)


@pytest.fixture(scope="session")
def in_processes(saved, tmp_path_factory):
    """{start method: {row: the dumps of nlp.pipe(n_process=2) in a fresh interpreter, or the error}}."""
    cache = {}

    def get(method, name):
        if method not in cache:
            folders = [str(saved(row)) for row in ALL if row != OWN_DATA or (SM / "config.cfg").is_file()]
            out = tmp_path_factory.mktemp("processes") / f"{method}.json"
            env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parent), str(HERE.parents[1])])}
            subprocess.run(
                [sys.executable, str(HERE / "conformance_rows.py"), method, str(out), *folders],
                check=True,
                env=env,
                timeout=600,
            )
            cache[method] = {Path(folder).name: result for folder, result in json.loads(out.read_text()).items()}
        return cache[method][name]

    return get


@pytest.mark.slow
@pytest.mark.parametrize("name", ALL)
def test_two_processes_under_spawn_give_the_output_of_one(name, baseline, in_processes):
    got = in_processes("spawn", name)
    assert not isinstance(got, str), got
    assert_same(got, baseline(name)[1])


@pytest.mark.slow
@pytest.mark.parametrize("name", ALL)
def test_two_processes_under_fork_give_the_output_of_one(name, baseline, in_processes):
    got = in_processes("fork", name)
    assert not isinstance(got, str), got
    assert_same(got, baseline(name)[1])


@pytest.mark.parametrize("name", ALL)
def test_as_tuples_gives_each_doc_with_its_context(name, baseline):
    nlp, expected = baseline(name)
    pairs = list(nlp.pipe([(text, {"i": i}) for i, text in enumerate(TEXTS)], as_tuples=True))
    assert [context for _, context in pairs] == [{"i": i} for i in range(len(TEXTS))]
    assert_same([dump(doc) for doc, _ in pairs], expected)


@pytest.mark.parametrize("name", ALL)
def test_batch_sizes_give_the_same_output(name, baseline):
    nlp, expected = baseline(name)
    for batch_size in (1, 2, 1000):
        assert_same(dumps(nlp, batch_size=batch_size), expected)


# Empty and whitespace-only Docs among others: a batch of them must not change any Doc's output, nor its order.
MIXED = ["", "John Smith visited New York.", "  \n\t ", "Paris", *TEXTS[2:5], " ", *TEXTS[5:]]


@pytest.mark.parametrize("name", ALL)
def test_a_batch_mixing_empty_docs_gives_the_output_one_by_one_in_span_order(name, baseline):
    """The same output whatever the batch, and every span group of ours in one order: (start, end, label, in
    the component's label order). spaCy's spancat keeps one order too, its suggester's (by length, then start)."""
    nlp, _ = baseline(name)
    one_by_one = dumps(nlp, MIXED, batch_size=1)
    for batch_size in (2, 5, 1000):
        assert_same(dumps(nlp, MIXED, batch_size=batch_size), one_by_one)
    if name not in OURS:
        return
    for doc in one_by_one:
        for key, group in doc["spans"].items():
            labels = {label: i for i, label in enumerate(writer_labels(nlp, key))}
            order = [(start, end, labels.get(label, -1)) for start, end, label in group["spans"]]
            assert order == sorted(order), (key, group["spans"])


SAVED = HERE.parent / "data" / "saved_pipelines"


@pytest.mark.parametrize("folder", ["nested_ner", "hypergraph_ner", "dgm_ner", "chain_ner"])
def test_many_overlapping_mentions_come_in_span_order_whatever_the_batch(folder):
    """The pipelines saved with their first weights (tests/data/saved_pipelines) write many overlapping
    mentions, where the order of a group once depended on the other Docs of the batch."""
    nlp = spacy.load(SAVED / folder)
    one_by_one = dumps(nlp, MIXED, batch_size=1)
    assert sum(len(group["spans"]) for doc in one_by_one for group in doc["spans"].values()) > 10
    for batch_size in (2, 5, 1000):
        assert_same(dumps(nlp, MIXED, batch_size=batch_size), one_by_one)
    for doc in one_by_one:
        for key, group in doc["spans"].items():
            labels = {label: i for i, label in enumerate(writer_labels(nlp, key))}
            order = [(start, end, labels[label]) for start, end, label in group["spans"]]
            assert order == sorted(order), (key, group["spans"])


def writer_labels(nlp, key):
    """The labels, in order, of the component that writes the span group ``key`` (ours: spans_key, and its
    "_heads" group; spaCy's spancat: key); () for a group no component writes with labels (a copy of doc.ents)."""
    for _, pipe in nlp.pipeline:
        own = getattr(pipe, "spans_key", None) or getattr(pipe, "key", None)
        if own is not None and key in (own, f"{own}_heads"):
            return tuple(getattr(pipe, "labels", ()))
    return ()


@pytest.mark.parametrize("name", ALL)
def test_a_doc_as_input_gives_the_output_of_its_text(name, baseline):
    nlp, expected = baseline(name)
    assert_same([dump(nlp(nlp.make_doc(text))) for text in TEXTS], expected)
    assert_same([dump(nlp(text)) for text in TEXTS], expected)


def sourced(names, folder, replace_listeners=()):
    """spacy.blank("en") built from a config that sources ``names`` from ``folder``."""
    components = {
        name: {"source": str(folder), **({"replace_listeners": ["model.tok2vec"]} if name in replace_listeners else {})}
        for name in names
    }
    return load_model_from_config(
        Config({"nlp": {"lang": "en", "pipeline": list(names)}, "components": components}), auto_fill=True
    )


@pytest.mark.parametrize("name", ALL)
def test_sourcing_the_pipeline_into_a_blank_one_gives_the_same_output(name, baseline, saved):
    nlp, expected = baseline(name)
    assert_same(dumps(sourced(nlp.pipe_names, saved(name))), expected)


@pytest.mark.parametrize("name", LISTENING)
def test_replace_listeners_gives_the_same_output_without_the_tok2vec(name, baseline, saved):
    _, expected = baseline(name)
    nlp = spacy.load(saved(name))
    nlp.replace_listeners("tok2vec", BY_NAME[name].component, ["model.tok2vec"])
    assert_same(dumps(nlp), expected)
    nlp.remove_pipe("tok2vec")  # nothing listens to it any more
    assert_same(dumps(nlp), expected)


@pytest.mark.parametrize("name", LISTENING)
def test_an_nlp_with_replaced_listeners_pickles(name, baseline, saved):
    _, expected = baseline(name)
    nlp = spacy.load(saved(name))
    nlp.replace_listeners("tok2vec", BY_NAME[name].component, ["model.tok2vec"])
    assert_same(dumps(pickle.loads(pickle.dumps(nlp))), expected)


@pytest.mark.parametrize("name", LISTENING)
def test_sourcing_with_replace_listeners_gives_the_same_output_and_pickles(name, baseline, saved):
    nlp, expected = baseline(name)
    component = BY_NAME[name].component
    rebuilt = sourced([p for p in nlp.pipe_names if p != "tok2vec"], saved(name), replace_listeners=[component])
    assert "tok2vec" not in rebuilt.pipe_names
    assert_same(dumps(rebuilt), expected)
    assert_same(dumps(pickle.loads(pickle.dumps(rebuilt))), expected)


@pytest.mark.parametrize("name", ALL)
def test_docbin_keeps_ents_span_groups_and_their_scores(name, baseline):
    nlp, expected = baseline(name)
    docs = list(nlp.pipe(TEXTS))
    data = DocBin(docs=docs, store_user_data=True).to_bytes()
    assert_same([dump(doc) for doc in DocBin().from_bytes(data).get_docs(nlp.vocab)], expected)


@pytest.mark.parametrize("name", ALL)
def test_to_json_keeps_ents_and_spans(name, baseline):
    """Doc.to_json keeps no span group attrs (spaCy's, for spancat too): the scores are not compared."""
    nlp, expected = baseline(name)
    again = [Doc(nlp.vocab).from_json(doc.to_json()) for doc in nlp.pipe(TEXTS)]
    assert all(not g.attrs for doc in again for g in doc.spans.values())
    assert_same([dump(doc) for doc in again], expected, scores=False)


@pytest.mark.parametrize("name", ALL)
def test_copy_keeps_everything_and_from_docs_everything_but_the_scores(name, baseline):
    """doc.copy() copies the span groups' attrs; Doc.from_docs builds new
    groups without attrs (spaCy's, for spancat too)."""
    nlp, expected = baseline(name)
    docs = list(nlp.pipe(TEXTS))
    assert_same([dump(doc.copy()) for doc in docs], expected)
    joined = [Doc.from_docs([doc]) for doc in docs]
    assert all(not g.attrs for doc in joined for g in doc.spans.values())
    assert_same([dump(doc) for doc in joined], expected, scores=False)


def spans_of(doc):
    return list(doc.ents) + [span for group in doc.spans.values() for span in group]


@pytest.mark.parametrize("name", ALL)
def test_edge_inputs_run(name, baseline):
    nlp, _ = baseline(name)
    for doc in nlp.pipe(EDGE):
        assert all(0 <= span.start < span.end <= len(doc) for span in spans_of(doc))
    assert len(nlp(EDGE[4])) >= 300


@pytest.mark.parametrize("name", ALL)
def test_no_entity_or_span_is_only_whitespace(name, baseline):
    nlp, _ = baseline(name)
    for doc in nlp.pipe(EDGE):
        assert [span.text for span in spans_of(doc) if all(token.is_space for token in span)] == []


def with_ruler(name, folder, **overrides):
    """The row's pipeline with an entity ruler right before its component (as one goes before spaCy's ner). In
    the two-stage pipeline that is the second stage: first_stage_spans hands the first stage's entities (a
    ruler's before it included) to the second stage as features, not as entities to keep."""
    nlp = spacy.load(folder, config=overrides) if overrides else spacy.load(folder)
    ruler = nlp.add_pipe("entity_ruler", before=BY_NAME[name].component)
    ruler.add_patterns([{"label": "MISC", "pattern": "Paris"}])
    return nlp


PRESET_TEXTS = [text for text in TEXTS if "Paris" in text]


@pytest.mark.parametrize("name", ALL)
def test_entities_set_before_the_component_are_kept(name, saved):
    for doc in with_ruler(name, saved(name)).pipe(PRESET_TEXTS):
        preset = [(t.i, t.i + 1, "MISC") for t in doc if t.text == "Paris"]
        assert set(preset) <= {(e.start, e.end, e.label_) for e in doc.ents}
        assert all(
            e.end <= start or e.start >= end
            for e in doc.ents
            for start, end, _ in preset
            if (e.start, e.end) != (start, end)
        )


FLAT_OURS = [
    row.name for row in ROWS if row.ours and row.factory in ("chain_ner", "dgm_ner") and row.name != "two_stage"
]


@pytest.mark.parametrize("name", FLAT_OURS)
def test_overwrite_ents_replaces_the_entities_set_before(name, baseline, saved):
    nlp, _ = baseline(name)
    ruled = with_ruler(name, saved(name), components={BY_NAME[name].component: {"overwrite_ents": True}})
    assert [d["ents"] for d in dumps(ruled, PRESET_TEXTS)] == [d["ents"] for d in dumps(nlp, PRESET_TEXTS)]


def test_the_own_data_parser_still_scores_on_trees_of_its_own_scheme_after_load(saved):
    nlp = spacy.load(saved(OWN_DATA))
    examples = [Example(nlp.make_doc(doc.text), doc) for doc in nlp.pipe(TEXTS)]
    scores = nlp.evaluate(examples)
    assert scores["dep_uas"] == pytest.approx(1.0) and scores["dep_las"] == pytest.approx(1.0)
