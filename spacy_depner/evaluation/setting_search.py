"""Decoding settings of a trained pipeline chosen on development data: the one
grid search (a setting's values -> P/R/F of the decoded spans -> the F1-best
value, the first best on ties) behind the mention penalty of
``hypergraph_ner`` (``penalty_tuning``) and the probability ``threshold`` of
every entity component, with what these searches and the calibration
(``calibration-report``) share:

* ``file_examples``: a data file as Examples with their gold spans, read by
  its kind (GENIA JSON lines, GUM CoNLL-U, UD CoNLL-U + UNER IOB2, DocBin);
* ``component_inputs``: the inputs of one component, annotated once by the
  others, then ``decode`` runs that component alone with other settings;
* ``judge``: each predicted span with its probability, correct when its
  boundaries and label match a gold span exactly;
* ``save_pipeline``: the pipeline with a setting in its config, saved
  atomically.

P/R/F are fractions (``metrics.prf``).
"""

from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

import numpy as np

from ..pipeline.entity_pipe import EntityPipe, entity_factories
from ..util.atomic_files import atomic_path
from ..util.pipelines import load_pipeline
from ..util.progress import progress
from .corpus_scores import input_doc, nested_file_examples, parsed_docs, parses, with_vocab, without_trees
from .metrics import prf

GoldSpans = Set[Tuple[int, int, str]]
# The span group the GENIA and GUM readers put the gold mentions in.
GOLD_KEY = "nested_ner"
DATA_KINDS = (
    ".jsonl (GENIA JSON lines), .conllu (UD English-GUM, or a UD CoNLL-U file with its UNER IOB2 file "
    "given by --iob2) or .spacy (DocBin)"
)


def grid_values(low: float, high: float, step: float) -> np.ndarray:
    """low, low + step, ..., high (rounded to 10 decimals), or a ValueError
    unless step > 0 and low <= high."""
    if not step > 0 or not high >= low:
        raise ValueError(f"need step > 0 and low <= high, not step={step}, low={low}, high={high}")
    return np.round(low + step * np.arange(int(round((high - low) / step)) + 1), 10)


def grid_search(
    values: Iterable[float], score: Callable[[float], Dict[str, float]], setting: str
) -> Tuple[Dict[str, float], List[Dict[str, float]]]:
    """``score(value)`` (P/R/F ``{"p", "r", "f"}``) of each value of a
    setting, in order: the best record ``{setting: value, "p", "r", "f"}``
    by F1 (the first best on ties) and the records of every value."""
    values = [float(v) for v in values]
    if not values:
        raise ValueError(f"no value of {setting} to try")
    curve = [
        {setting: value, **score(value)} for value in progress(values, len(values), f"{setting} search", unit="value")
    ]
    return max(curve, key=lambda record: record["f"]), curve


def threshold_counts(
    probabilities: np.ndarray, correct: np.ndarray, n_gold: int, thresholds: Sequence[float]
) -> np.ndarray:
    """(V, 3) (TP, FP, FN) of the spans kept at each threshold t (those with
    probability >= t, compared in float32 as ``attrs["scores"]`` holds the
    probabilities and as the components filter them): ``probabilities``
    (M,), ``correct`` (M,) bool, ``n_gold`` gold spans."""
    probabilities = np.asarray(probabilities, dtype=np.float32)
    order = np.argsort(probabilities, kind="stable")
    below = np.searchsorted(probabilities[order], np.asarray(thresholds, dtype=np.float32), side="left")
    correct_below = np.concatenate([[0], np.cumsum(correct[order])])[below]
    tp = int(correct.sum()) - correct_below
    fp = (probabilities.shape[0] - below) - tp
    return np.stack([tp, fp, n_gold - tp], axis=1).astype(np.int64)


def tune_threshold(
    probabilities: np.ndarray, correct: np.ndarray, n_gold: int, step: float = 0.01, before: float = 0.0
) -> Tuple[Dict[str, float], List[Dict[str, float]]]:
    """The threshold of 0, step, ..., 1 with the best F1 of the spans it keeps
    (``grid_search``): ``tuned_*`` (threshold, p, r, f) and ``before_*``
    (those at the threshold ``before``), and the curve of every threshold."""
    if not 0 < step <= 1:
        raise ValueError(f"the threshold step must be in (0, 1], not {step}")
    probabilities, correct = np.asarray(probabilities, dtype=np.float64), np.asarray(correct, dtype=bool)

    def scores(threshold: float) -> Dict[str, float]:
        return prf(*(int(c) for c in threshold_counts(probabilities, correct, n_gold, [threshold])[0]))

    best, curve = grid_search(grid_values(0.0, 1.0, step), scores, "threshold")
    result = {
        **{f"tuned_{k}": v for k, v in best.items()},
        **{f"before_{k}": v for k, v in {"threshold": float(before), **scores(before)}.items()},
    }
    return result, curve


def matplotlib_pyplot():
    """``matplotlib.pyplot`` with the file-only Agg backend, or a ValueError
    that says how to install matplotlib."""
    try:
        import matplotlib
    except ImportError as error:
        raise ValueError(
            "drawing a PNG needs matplotlib, which is not installed: pip install matplotlib "
            '(or pip install "spacy-depner[project]"), or leave out the PNG option'
        ) from error
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_png(figure, path: Path) -> Path:
    """Write a matplotlib figure to the PNG ``path`` atomically and close it."""
    plt = matplotlib_pyplot()
    path = Path(path)
    try:
        with atomic_path(path) as temporary:
            figure.savefig(temporary, dpi=100, format="png")
    finally:
        plt.close(figure)
    return path


def threshold_png(curve: List[Dict[str, float]], chosen: float, path: Path, title: str = "") -> Path:
    """Draw P, R and F1 against the threshold (left) and the precision/recall
    curve (right, the thresholds with recall > 0) of ``tune_threshold``'s
    curve to the PNG ``path``, the chosen threshold marked on both."""
    plt = matplotlib_pyplot()
    t, p, r, f = (np.array([record[k] for record in curve]) for k in ("threshold", "p", "r", "f"))
    at = int(np.argmin(np.abs(t - chosen)))
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 4.5))
    for values, name in ((p, "precision"), (r, "recall"), (f, "F1")):
        left.plot(t, values, label=name)
    left.axvline(chosen, color="gray", linestyle="--", label=f"chosen {chosen:g}")
    left.set(xlim=(0, 1), ylim=(0, 1.02), xlabel="threshold", ylabel="fraction")
    left.legend(loc="lower left")
    found = r > 0  # the thresholds that keep a correct span (else the precision is 0 by convention)
    right.plot(r[found], p[found], ".-", markersize=3)
    right.plot([r[at]], [p[at]], "o", color="tab:red", label=f"threshold {chosen:g}: F1 {f[at]:.3f}")
    right.set(xlim=(0, 1.02), ylim=(0, 1.02), xlabel="recall", ylabel="precision")
    right.legend(loc="lower left")
    if title:
        figure.suptitle(title)
    return save_png(figure, path)


def data_kind(path: Path, uner: Optional[Path] = None) -> str:
    """ "genia", "gum", "uner" or "docbin" by the file's suffix (a .conllu
    file with a UNER file is "uner"), or a ValueError naming the kinds."""
    suffix = Path(path).suffix.lower()
    kinds = {".jsonl": "genia", ".conllu": "uner" if uner is not None else "gum", ".spacy": "docbin"}
    if suffix not in kinds:
        raise ValueError(f"{path}: unknown data file kind {suffix or '(no suffix)'!r}: give {DATA_KINDS}")
    if uner is not None and kinds[suffix] != "uner":
        raise ValueError(f"a UNER IOB2 file ({uner}) goes with a UD CoNLL-U file, not with {path}")
    return kinds[suffix]


def docbin_gold_key(references, path: Path, spans_key: Optional[str]) -> Optional[str]:
    """Where the gold spans of DocBin references are: ``spans_key``, else
    ``doc.ents`` (None) if some reference has entities, else the one span
    group besides heads; a ValueError when that is ambiguous or missing."""
    keys = sorted({key for doc in references for key in doc.spans})
    if spans_key is not None:
        if spans_key not in keys:
            raise ValueError(f"{path}: no Doc has the span group {spans_key!r} (groups: {keys or 'none'})")
        return spans_key
    if any(doc.has_annotation("ENT_IOB") for doc in references):
        return None
    groups = [key for key in keys if not key.endswith("_heads")]
    if len(groups) != 1:
        raise ValueError(
            f"{path}: the Docs have no doc.ents and {len(groups)} span groups ({groups}): "
            "name the group of the gold spans with --spans-key"
        )
    return groups[0]


def gold_spans(references, key: Optional[str]) -> List[GoldSpans]:
    """Per reference Doc, (start, end, label) of its ``doc.ents`` (key None)
    or of ``doc.spans[key]``."""
    return [
        {(s.start, s.end, s.label_) for s in (doc.ents if key is None else doc.spans.get(key, []))}
        for doc in references
    ]


def file_examples(
    nlp, path: Path, uner: Optional[Path] = None, spans_key: Optional[str] = None, parser: Optional[Path] = None
) -> Tuple[List, List[GoldSpans]]:
    """The Examples of a data file in ``nlp``'s vocab (inputs with the words,
    and the gold trees where the file has them, or the trees of the parser
    pipeline at ``parser``; none when ``nlp`` has its own parser) and the
    gold spans of each: a GENIA .jsonl or a
    GUM .conllu file (nested mentions), a UD .conllu file with its UNER IOB2
    file ``uner`` (entities), or a .spacy DocBin (``doc.ents``, or the span
    group ``spans_key``)."""
    from spacy.training import Example

    from ..readers.docbins import read_docbin
    from ..readers.uner import corpus_examples, read_uner_corpus

    kind, key = data_kind(path, uner), spans_key or GOLD_KEY
    if kind in ("genia", "gum"):
        examples = nested_file_examples(
            nlp.vocab, path if kind == "genia" else None, path if kind == "gum" else None, key
        )
    elif kind == "uner":
        examples, key = corpus_examples(nlp.vocab, read_uner_corpus(path, uner), "given"), None
    else:
        references = read_docbin(nlp.vocab, path)
        key = docbin_gold_key(references, path, spans_key)
        examples = [Example(input_doc(doc), doc) for doc in references]
    if parser is not None:
        for eg, doc in zip(examples, parsed_docs(parser, [eg.predicted for eg in examples])):
            eg.predicted = with_vocab(nlp.vocab, doc)
    elif parses(nlp):
        for eg in examples:  # the pipeline's parser makes the trees: spaCy's parser on given heads can make cycles
            eg.predicted = without_trees(eg.predicted)
    return examples, gold_spans([eg.reference for eg in examples], key)


def require_component(nlp, model: Path, name: str) -> None:
    """A ValueError unless the pipeline at ``model`` has the component ``name``."""
    if name not in nlp.pipe_names:
        raise ValueError(f"{model} has no component {name!r} (it has {nlp.pipe_names})")


def probability_key(nlp, name: str) -> Optional[str]:
    """The span group in which the component ``name`` writes its spans with
    their probabilities in ``attrs["scores"]``: ``spans_key`` of an entity
    component of this package, the key of spaCy's spancat; None for a
    component that writes none (spaCy's ner)."""
    from spacy.pipeline import SpanCategorizer

    pipe = nlp.get_pipe(name)
    if isinstance(pipe, SpanCategorizer):
        return pipe.key
    if isinstance(pipe, EntityPipe):
        return pipe.spans_key
    return None


def tunable_component(nlp, model: Path, name: Optional[str], setting: str) -> str:
    """The component whose ``setting`` is tuned: ``name``, checked to have
    the setting and to write span probabilities, or the one such component
    of the pipeline (a ValueError when there is none, or several)."""
    candidates = [
        n
        for n in nlp.pipe_names
        if setting in (getattr(nlp.get_pipe(n), "settings", None) or {}) and probability_key(nlp, n)
    ]
    if name is not None:
        require_component(nlp, model, name)
        if name not in candidates:
            factory = nlp.get_pipe_meta(name).factory
            raise ValueError(
                f"the component {name!r} ({factory}) of {model} has no span probabilities to tune "
                f"{setting} on: give a {entity_factories()} component "
                f"(this pipeline's: {candidates or 'none'})"
            )
        return name
    if len(candidates) != 1:
        what = "none" if not candidates else f"several ({candidates}): choose one with --component"
        raise ValueError(
            f"{model} needs one component with span probabilities and a {setting} setting "
            f"({entity_factories()}), it has {what}"
        )
    return candidates[0]


def component_inputs(nlp, name: str, examples: Sequence) -> List:
    """Copies of the examples' input Docs annotated by every component of
    ``nlp`` but ``name`` (once; a listener of a shared tok2vec then reads
    ``doc.tensor``), to be decoded by ``name`` alone (``decode``)."""
    with nlp.select_pipes(disable=[name]):
        docs = [eg.predicted.copy() for eg in examples]
        return list(progress(nlp.pipe(docs), len(docs), "annotate"))


def decode(pipe, docs: Sequence, **settings) -> List:
    """Copies of the Docs annotated by the component ``pipe`` alone, with
    ``settings`` in ``pipe.settings`` for the time of the decoding (restored
    after). Each decoding starts from the inputs (a component keeps the
    entities a Doc already has, so it must not see those of an earlier decoding)."""
    saved = {key: pipe.settings[key] for key in settings}
    pipe.settings.update(settings)
    try:
        return list(pipe.pipe([doc.copy() for doc in docs]))
    finally:
        pipe.settings.update(saved)


def judge(docs: Sequence, gold: Sequence[GoldSpans], key: str, name: str) -> Tuple[np.ndarray, np.ndarray, int]:
    """Each span of ``doc.spans[key]`` of the Docs with its probability
    (``attrs["scores"]``): probabilities (M,) float64, correct (M,) bool
    (its start, end and label are those of a gold span of its Doc), and the
    number of gold spans. A ValueError when a Doc lacks the group or a
    non-empty group has no probabilities."""
    probabilities, correct = [], []
    for d, (doc, doc_gold) in enumerate(zip(docs, gold)):
        if key not in doc.spans:
            raise ValueError(f"'{name}' wrote no span group {key!r} on Doc {d}: it writes no span probabilities there")
        group = doc.spans[key]
        if not len(group):
            continue
        if "scores" not in group.attrs:
            raise ValueError(
                f"'{name}' writes doc.spans[{key!r}] without probabilities (attrs[\"scores\"]): "
                "give a pipeline whose component writes them (scores = true)"
            )
        probabilities.append(np.asarray(group.attrs["scores"], dtype=np.float64).reshape(-1))
        correct.append(
            np.fromiter(((s.start, s.end, s.label_) in doc_gold for s in group), dtype=bool, count=len(group))
        )
    n_gold = sum(len(g) for g in gold)
    if not probabilities:
        return np.zeros(0), np.zeros(0, dtype=bool), n_gold
    return np.concatenate(probabilities), np.concatenate(correct), n_gold


def judged_prf(correct: np.ndarray, n_gold: int) -> Dict[str, float]:
    """P/R/F of judged spans (every predicted span, ``n_gold`` gold spans)."""
    tp = int(np.count_nonzero(correct))
    return prf(tp, correct.shape[0] - tp, n_gold - tp)


def check_output(output: Path) -> None:
    """A ValueError when ``output`` is a file, or a non-empty folder that is
    not a saved pipeline (it would be replaced)."""
    output = Path(output)
    if output.is_file() or (output.is_dir() and any(output.iterdir()) and not (output / "config.cfg").is_file()):
        raise ValueError(
            f"OUTPUT {output} exists and is not a saved pipeline (no config.cfg): choose another path, or move it away"
        )


def save_pipeline(nlp, name: str, settings: Dict[str, object], output: Path) -> None:
    """Write ``settings`` to the component's config (what ``nlp.config`` and
    config.cfg show, read again at load) and save the pipeline to ``output``
    atomically (a temporary folder renamed, replacing a pipeline there,
    which may be the one loaded)."""
    config = nlp.get_pipe_config(name)
    for key, value in settings.items():
        config[key] = value
    with atomic_path(output) as temporary:
        nlp.to_disk(temporary)


def tune_pipeline_threshold(
    model: Path,
    dev: Path,
    output: Path,
    component: Optional[str] = None,
    step: float = 0.01,
    png: Optional[Path] = None,
    uner: Optional[Path] = None,
    spans_key: Optional[str] = None,
    parser: Optional[Path] = None,
) -> Dict[str, object]:
    """Set the ``threshold`` of a component of the pipeline at ``model`` for
    the best F1 of its spans on the data file ``dev`` (``file_examples``):
    the component decodes once with threshold 0 and the spans are filtered
    by probability at each threshold of 0, step, ..., 1 (``tune_threshold``).
    Saves the pipeline with the tuned value to ``output`` (may be
    ``model``) and, with ``png``, draws the precision/recall curve there."""

    check_output(output)
    nlp = load_pipeline(model)
    name = tunable_component(nlp, model, component, "threshold")
    pipe = nlp.get_pipe(name)
    examples, gold = file_examples(nlp, dev, uner, spans_key, parser)
    forced = {"threshold": 0.0, **({"scores": True} if "scores" in pipe.settings else {})}
    docs = decode(pipe, component_inputs(nlp, name, examples), **forced)
    probabilities, correct, n_gold = judge(docs, gold, probability_key(nlp, name), name)
    result, curve = tune_threshold(probabilities, correct, n_gold, step, pipe.settings["threshold"])
    pipe.settings["threshold"] = result["tuned_threshold"]
    if png is not None:
        threshold_png(curve, result["tuned_threshold"], png, f"{name} on {Path(dev).name}")
    save_pipeline(nlp, name, {"threshold": result["tuned_threshold"]}, output)
    return {
        "component": name,
        "spans": int(probabilities.shape[0]),
        "gold": n_gold,
        **result,
        **({"png": str(png)} if png is not None else {}),
    }
