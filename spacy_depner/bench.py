"""``python -m spacy_depner bench``: speed tables, every figure a ratio against
a baseline measured in the same run.

1. Pipeline words/s: tok2vec + ``dgm_ner`` vs tok2vec + spaCy's ``ner`` (same
   tok2vec settings, same Docs with their given trees, same batch size).
2. Decoder-only tokens/s (candidate spans + Viterbi, and forward-backward) for
   ``semi_markov`` (L=8), ``dgm_s`` and ``dgm`` on the corpus's trees.
3. DGM per-token time on uniformly random trees of n = 50, 200, 1,000 tokens
   (unbounded span length), relative to n = 50.

``bench-nested``: nested MAP decoding time vs sentence length (Corro 2023,
Figure 2). ``bench-types``: speed vs the number of mention types T (Lu & Roth
2015, Table 3), mention hypergraph vs BILOU linear chain, decoders alone and
in pipelines.
"""
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np
import typer

from .cli import app

LISTENER = {"@architectures": "spacy.Tok2VecListener.v1", "width": 96, "upstream": "*"}
LABELS = ["PER", "ORG", "LOC"]
DECODERS = [("semi_markov", 8), ("dgm_s", None), ("dgm", None)]


def best_time(run: Callable[[], object], repeats: int) -> float:
    """Smallest wall-clock time of ``repeats`` runs, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def build_pipeline(last: str, examples, model: Optional[Dict] = None, labels: Optional[List[str]] = None, **settings):
    """A blank English pipeline: tok2vec + ``last`` listening to it (its
    ``model``, by default spaCy's parser model for ``ner`` and the span
    scorer otherwise; other component ``settings``), initialized on
    ``examples`` (with ``labels``, if given)."""
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("tok2vec")
    if model is None and last == "ner":
        model = {"@architectures": "spacy.TransitionBasedParser.v2", "state_type": "ner", "extra_state_tokens": False,
                 "hidden_width": 64, "maxout_pieces": 2, "use_upper": True, "nO": None, "tok2vec": LISTENER}
    elif model is None:
        model = {"@architectures": "spacy_depner.SpanScorer.v1", "tok2vec": LISTENER}
    nlp.add_pipe(last, config={"model": model, **settings})
    if labels is not None:
        nlp.config["initialize"]["components"][last] = {"labels": labels}
    nlp.initialize(lambda: examples)
    return nlp


def pipeline_seconds(pipes: Dict, docs, repeats: int, batch_size: int, warm_up: int = 200) -> Tuple[Dict, Dict]:
    """Best wall time of each ``pipe`` (an ``nlp.pipe``: Docs and batch_size
    in, Docs out) over copies of ``docs``, after a warm-up on the first
    ``warm_up`` Docs (numba compilation, caches), the pipes interleaved so
    that all see the same machine load; and the Docs each annotated in its
    last run."""
    for pipe in pipes.values():
        list(pipe([doc.copy() for doc in docs[:warm_up]], batch_size=batch_size))
    seconds = {key: [] for key in pipes}
    annotated = {}
    for _ in range(repeats):
        for key, pipe in pipes.items():
            copies = [doc.copy() for doc in docs]
            start = time.perf_counter()
            annotated[key] = list(pipe(copies, batch_size=batch_size))
            seconds[key].append(time.perf_counter() - start)
    return {key: min(values) for key, values in seconds.items()}, annotated


def pipeline_rows(examples, repeats: int, batch_size: int) -> List[Dict]:
    docs = [eg.predicted for eg in examples]
    n_words = sum(len(doc) for doc in docs)
    pipelines = {name: build_pipeline(name, examples[:200]) for name in ("ner", "dgm_ner")}
    seconds, _ = pipeline_seconds({name: nlp.pipe for name, nlp in pipelines.items()}, docs, repeats, batch_size)
    base = n_words / seconds["ner"]
    return [
        {"pipeline": f"tok2vec + {name}", "words/s": n_words / s, "ratio vs ner": n_words / s / base}
        for name, s in seconds.items()
    ]


def decode(structure: str, max_length: Optional[int], batches, scores, transitions, operation: str) -> None:
    from .structures import segment_lattice
    from .structures.candidate_spans import candidate_spans

    run = segment_lattice.viterbi if operation == "viterbi" else segment_lattice.marginals
    for (heads, sentence_offsets), batch_scores in zip(batches, scores):
        spans = candidate_spans(structure, heads, sentence_offsets, max_length)
        run(spans, np.array([0, spans.shape[0]]), sentence_offsets[[0, -1]], batch_scores, transitions)


def decoder_setup(batches, structure, max_length, n_labels, rng):
    from .structures.candidate_spans import candidate_spans

    counts = [candidate_spans(structure, h, o, max_length).shape[0] for h, o in batches]
    return [rng.normal(size=(c, n_labels + 1)) for c in counts], sum(counts)


def decoder_rows(batches, n_labels: int, repeats: int, rng) -> List[Dict]:
    n_tokens = sum(int(o[-1]) for _, o in batches)
    transitions = rng.normal(size=(n_labels + 2, n_labels + 2))
    rows = []
    for structure, max_length in DECODERS:
        scores, n_spans = decoder_setup(batches, structure, max_length, n_labels, rng)
        row = {"structure": structure + (f" (L={max_length})" if max_length else " (unbounded)"),
               "spans/token": n_spans / n_tokens}
        for operation in ("viterbi", "marginals"):
            decode(structure, max_length, batches[:2], scores[:2], transitions, operation)  # compile
            row[operation] = n_tokens / best_time(lambda: decode(structure, max_length, batches, scores, transitions, operation), repeats)
        rows.append(row)
    for row in rows:
        row["Viterbi ratio vs semi_markov"] = row["viterbi"] / rows[0]["viterbi"]
    return rows


def scaling_rows(lengths, total_tokens: int, n_labels: int, repeats: int, rng) -> List[Dict]:
    from .structures.random_trees import random_forest

    transitions = rng.normal(size=(n_labels + 2, n_labels + 2))
    rows = []
    for n in lengths:
        per_batch = max(1, 1000 // n)
        batches = [random_forest([n] * per_batch, rng) for _ in range(max(1, total_tokens // (n * per_batch)))]
        scores, n_spans = decoder_setup(batches, "dgm", None, n_labels, rng)
        n_tokens = sum(int(o[-1]) for _, o in batches)
        decode("dgm", None, batches[:1], scores[:1], transitions, "viterbi")
        seconds = best_time(lambda: decode("dgm", None, batches, scores, transitions, "viterbi"), repeats)
        rows.append({"n": n, "spans/token": n_spans / n_tokens, "µs/token": 1e6 * seconds / n_tokens})
    for row in rows:
        row["ratio vs n=50"] = row["µs/token"] / rows[0]["µs/token"]
    return rows


def batches_of(docs, tokens_per_batch: int):
    """Group Docs' trees into flat batches of about ``tokens_per_batch`` tokens."""
    from .pipeline.doc_arrays import make_batch

    groups, group, size = [], [], 0
    for doc in docs:
        group.append(doc)
        size += len(doc)
        if size >= tokens_per_batch:
            groups.append(group)
            group, size = [], 0
    if group:
        groups.append(group)
    out = []
    for group in groups:
        batch = make_batch(group, "semi_markov", 1)
        out.append((batch.heads, batch.sentence_offsets))
    return out


def markdown(rows: List[Dict]) -> str:
    def cell(value):
        if isinstance(value, float):
            return f"{value:,.2f}" if value < 100 else f"{value:,.0f}"
        return str(value)

    header = list(rows[0])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(row[k]) for k in header) + " |" for row in rows]
    return "\n".join(lines)


@app.command("bench")
def bench(
    conllu: Path = typer.Option(Path("../shared/data/ud_ewt/r2.9/en_ewt-ud-dev.conllu"), help="CoNLL-U file (gold trees)"),
    uner: Path = typer.Option(Path("../shared/data/uner_ewt/en_ewt-ud-dev.iob2"), help="UNER IOB2 file for the same sentences"),
    output: Path = typer.Option(Path("metrics/bench.md"), help="Markdown file to write"),
    repeats: int = typer.Option(3, help="Timed repeats; the best is kept"),
    batch_size: int = typer.Option(128, help="Docs per batch in nlp.pipe"),
    synthetic_tokens: int = typer.Option(200_000, help="Tokens per sentence length in the scaling table"),
) -> None:
    """Write the speed tables (markdown) to OUTPUT and print them."""
    import platform
    import os

    import spacy

    from .readers.uner import create_uner_reader

    rng = np.random.default_rng(0)
    examples = list(create_uner_reader(conllu, uner, dependencies="given")(spacy.blank("en")))
    docs = [eg.predicted for eg in examples]
    n_labels = len(LABELS)
    sections = [
        f"# spacy-depner speed ({time.strftime('%Y-%m-%d')}, {platform.machine()}, {os.cpu_count()} cores, "
        f"{sum(len(d) for d in docs):,} words of {conllu.name})",
        "## Pipeline words/s (given trees; untrained weights: the work per word does not depend on them)",
        markdown(pipeline_rows(examples, repeats, batch_size)),
        f"## Decoder only, {n_labels} labels + O, batches of ~1,000 tokens: tokens/s (candidate spans + Viterbi; candidate spans + forward-backward)",
        markdown(decoder_rows(batches_of(docs, 1000), n_labels, repeats, rng)),
        "## DGM (unbounded length) on uniformly random trees: time per token (candidate spans + Viterbi)",
        markdown(scaling_rows([50, 200, 1000], synthetic_tokens, n_labels, repeats, rng)),
    ]
    text = "\n\n".join(sections) + "\n"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf8")
    typer.echo(text)


def nested_decode_rows(lengths, n_labels: int, sentences_per_length: int, repeats: int, rng) -> List[Dict]:
    """MAP decoding time per sentence of the three nested structures, one
    call per batch of ``sentences_per_length`` sentences of n words, float32
    scores as the span scorer produces them."""
    from .structures import nested_mentions

    rows = []
    for n in lengths:
        doc_offsets = np.arange(sentences_per_length + 1, dtype=np.int64) * n
        scores = rng.normal(size=(int(nested_mentions.dense_span_offsets(doc_offsets)[-1]), n_labels)).astype(np.float32)
        row = {"n": n}
        for structure in nested_mentions.STRUCTURES:
            nested_mentions.viterbi(scores[: n * (n + 1) // 2], doc_offsets[:2], structure)  # compile
            seconds = best_time(lambda: nested_mentions.viterbi(scores, doc_offsets, structure), repeats)
            row[f"{structure} sentences/s"] = sentences_per_length / seconds
        row["quadratic speed-up vs cyk"] = row["quadratic sentences/s"] / row["cyk sentences/s"]
        rows.append(row)
    return rows


def nested_decode_chart(rows: List[Dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6, 4))
    for structure in ("semi_markov", "cyk", "quadratic"):
        axis.plot([r["n"] for r in rows], [1000.0 / r[f"{structure} sentences/s"] for r in rows], label=structure)
    axis.set_xlabel("sentence length n")
    axis.set_ylabel("ms per sentence (MAP decoding)")
    axis.set_yscale("log")
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


@app.command("bench-nested")
def bench_nested(
    output: Path = typer.Option(Path("metrics/nested_decode.md"), help="Markdown file to write (and a PNG beside it)"),
    labels: int = typer.Option(5, help="Mention labels (GENIA has 5)"),
    max_n: int = typer.Option(300, help="Longest sentence"),
    repeats: int = typer.Option(7, help="Timed repeats; the best is kept"),
) -> None:
    """MAP decoding time vs sentence length of the nested structures (Corro 2023, Figure 2), one thread."""
    import os
    import platform

    lengths = sorted({1, 2, 5, 10, 20, 50, 100, 150, 200, 250, max_n} & set(range(1, max_n + 1)))
    rows = nested_decode_rows(lengths, labels, sentences_per_length=20, repeats=repeats, rng=np.random.default_rng(0))
    chart = output.with_suffix(".png")
    output.parent.mkdir(parents=True, exist_ok=True)
    nested_decode_chart(rows, chart)
    text = (f"# Nested MAP decoding ({time.strftime('%Y-%m-%d')}, {platform.machine()}, {os.cpu_count()} cores, "
            f"{labels} labels, random scores, unbounded mention length)\n\n{markdown(rows)}\n\n![decode time]({chart.name})\n")
    output.write_text(text, encoding="utf8")
    typer.echo(text)


# ---------------------------------------------------------------------------
# bench-types: speed vs the number of mention types (Lu & Roth 2015, Table 3)
# ---------------------------------------------------------------------------


def parse_types(text: str) -> List[int]:
    """"5,10,20" -> [5, 10, 20]: positive, distinct numbers of mention types."""
    try:
        types = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter(f"expected comma-separated integers, not {text!r}") from None
    if not types or min(types) < 1 or len(set(types)) != len(types):
        raise typer.BadParameter(f"expected distinct positive numbers of types, not {text!r}")
    return types


def interleaved_best_times(runs: Dict[object, Callable[[], object]], repeats: int) -> Dict[object, float]:
    """Best time of each run over ``repeats`` rounds, one run of each per round,
    so that every run sees the same machine load."""
    seconds = {key: [] for key in runs}
    for _ in range(repeats):
        for key, run in runs.items():
            seconds[key].append(best_time(run, 1))
    return {key: min(values) for key, values in seconds.items()}


def type_decoder_rows(types: List[int], n_tokens: int, sentence_length: int, repeats: int, rng) -> List[Dict]:
    """Decoder-only tokens/s per number of types T: ``mention_hypergraph.viterbi``
    on float32 scores (N, T, 5) and ``linear_chain.viterbi`` on scores (N, 1 + 4T)
    (float64, what ``chain_ner`` passes it) with random transitions and the
    BILOU constraints, N tokens in sentences of ``sentence_length``."""
    from .structures import linear_chain, mention_hypergraph

    offsets = np.append(np.arange(0, n_tokens, sentence_length), n_tokens).astype(np.int64)
    runs, rows = {}, []
    for T in types:
        edge_scores = rng.normal(size=(n_tokens, T, mention_hypergraph.N_KINDS)).astype(np.float32)
        n_tags = linear_chain.n_tags(T, "BILOU")
        tag_scores = rng.normal(size=(n_tokens, n_tags))
        transitions = rng.normal(size=(n_tags + 1, n_tags + 1))
        allowed = linear_chain.allowed_transitions(T, "BILOU")
        first = int(offsets[min(2, len(offsets) - 1)])  # compile (or load the cache) on two sentences
        mention_hypergraph.viterbi(edge_scores[:first], offsets[:3])
        linear_chain.viterbi(tag_scores[:first], offsets[:3], transitions, allowed)
        runs[T, "hypergraph"] = lambda s=edge_scores: mention_hypergraph.viterbi(s, offsets)
        runs[T, "chain"] = lambda s=tag_scores, tr=transitions, a=allowed: linear_chain.viterbi(s, offsets, tr, a)
        rows.append({"T": T, "chain tags": n_tags, "chain allowed transitions": int(allowed.sum())})
    seconds = interleaved_best_times(runs, repeats)
    for row in rows:
        for decoder in ("hypergraph", "chain"):
            row[f"{decoder} decode tokens/s"] = n_tokens / seconds[row["T"], decoder]
            row[f"{decoder} decode time vs T={types[0]}"] = seconds[row["T"], decoder] / seconds[types[0], decoder]
    return rows


def build_types_pipeline(component: str, n_types: int, examples, zero_output: bool = True):
    """tok2vec + ``component`` (``hypergraph_ner``, or ``chain_ner`` with
    BILOU) with the labels TYPE0..TYPE{T-1}, initialized (untrained weights).
    ``zero_output``: zero the weights of the scorer's output layer (the
    transitions start at zero), so that every score is 0 and both components
    predict no mention at all, whatever T: the time then depends on T only
    (with the random initialization the hypergraph predicts about 0.7
    mentions per word and type, and making Spans of them costs more than
    decoding). Scoring and decoding cost the same either way."""
    settings = {"scheme": "BILOU"} if component == "chain_ner" else {}
    nlp = build_pipeline(component, examples, {"@architectures": "spacy_depner.TagScorer.v1", "tok2vec": LISTENER},
                         [f"TYPE{t}" for t in range(n_types)], **settings)
    if zero_output:
        layer = nlp.get_pipe(component).model.get_ref("output_layer")
        for name in ("W", "b"):
            layer.set_param(name, layer.ops.alloc(layer.get_param(name).shape, dtype="f"))
    return nlp


def predicted_mentions(doc) -> int:
    """Mentions a component put on ``doc``: its entities and its span groups."""
    return len(doc.ents) + sum(len(group) for group in doc.spans.values())


def type_pipeline_rows(types: List[int], examples, repeats: int, batch_size: int, zero_output: bool = True) -> Dict[int, Dict]:
    """Words/s of tok2vec + hypergraph_ner and tok2vec + chain_ner per number
    of types on the Docs of ``examples`` (best of ``repeats`` interleaved
    runs, after a warm-up), each one's ratio to its figure at types[0], and
    the mentions per word each predicted (see ``build_types_pipeline``)."""
    docs = [eg.predicted for eg in examples]
    n_words = sum(len(doc) for doc in docs)
    components = {"hypergraph": "hypergraph_ner", "chain": "chain_ner"}
    pipelines = {(T, name): build_types_pipeline(component, T, examples[:50], zero_output)
                 for T in types for name, component in components.items()}
    seconds, annotated = pipeline_seconds({key: nlp.pipe for key, nlp in pipelines.items()}, docs, repeats, batch_size)
    mentions = {key: sum(predicted_mentions(doc) for doc in key_docs) for key, key_docs in annotated.items()}
    rows = {T: {} for T in types}
    for T in types:
        for name in components:
            rows[T][f"{name} pipeline words/s"] = n_words / seconds[T, name]
            rows[T][f"{name} pipeline words/s vs T={types[0]}"] = seconds[types[0], name] / seconds[T, name]
            rows[T][f"{name} mentions/word"] = mentions[T, name] / max(n_words, 1)
    return rows


@app.command("bench-types")
def bench_types(
    types: str = typer.Option("5,10,20", "--types", help="Numbers of mention types T, comma-separated; the first is the baseline"),
    tokens: int = typer.Option(50_000, help="Tokens of random scores for the decoder-only timings"),
    sentence_length: int = typer.Option(25, help="Tokens per sentence of the decoder-only timings"),
    jsonl: Path = typer.Option(Path("../shared/data/genia/dev.jsonl"), help="GENIA JSON-lines file: the text of the pipeline timings"),
    output: Path = typer.Option(Path("metrics/bench_types.md"), help="Markdown file to write"),
    repeats: int = typer.Option(3, help="Timed repeats; the best is kept"),
    batch_size: int = typer.Option(128, help="Docs per batch in nlp.pipe"),
    zero_output: bool = typer.Option(True, "--zero-output/--random-output", help="Pipelines: zero the output layer (no predicted mentions at any T) or keep its random initialization"),
) -> None:
    """Speed vs the number of mention types T (Lu & Roth 2015, Table 3): mention
    hypergraph (linear in T) vs linear-chain CRF with BILOU tags (quadratic in T), one thread."""
    import os
    import platform

    import spacy

    from .readers.genia import genia_examples, read_genia

    type_counts = parse_types(types)
    if tokens < 1 or sentence_length < 1 or repeats < 1 or batch_size < 1:
        raise typer.BadParameter("--tokens, --sentence-length, --repeats and --batch-size must be positive")
    examples = genia_examples(spacy.blank("en").vocab, read_genia(jsonl))
    n_words = sum(len(eg.predicted) for eg in examples)
    rows = type_decoder_rows(type_counts, tokens, sentence_length, repeats, np.random.default_rng(0))
    pipeline = type_pipeline_rows(type_counts, examples, repeats, batch_size, zero_output)
    for row in rows:
        row.update(pipeline[row["T"]])
    base = f"T={type_counts[0]}"
    outputs = " with the output layer zeroed (all scores 0: no mention predicted, at any T)" if zero_output else \
        " (random initialization of the output layer)"
    text = (
        f"# Speed vs number of mention types, Lu & Roth (2015) Table 3 ({time.strftime('%Y-%m-%d')}, {platform.machine()}, "
        f"{os.cpu_count()} cores, one thread; decoders: N = {tokens:,} tokens of random scores in sentences of {sentence_length}; "
        f"pipelines: {n_words:,} words of {jsonl.name}, {len(examples):,} sentences)\n\n"
        f"Decode: `mention_hypergraph.viterbi` on (N, T, 5) float32 scores vs `linear_chain.viterbi` with BILOU tags "
        f"(1 + 4T tags, random transitions); time vs {base}: time(T) / time({base}) (the hypergraph is linear in T, "
        f"the chain quadratic). Pipeline: tok2vec + `hypergraph_ner` (Viterbi + marginals for the span scores) vs "
        f"tok2vec + `chain_ner` (BILOU, Viterbi), untrained weights{outputs}, `nlp.pipe` with batches of {batch_size}; "
        f"words/s vs {base}: words/s(T) / words/s({base}); mentions/word: predicted (making them Spans is part of the time). "
        f"Best of {repeats} interleaved runs.\n\n"
        f"{markdown(rows)}\n"
    )
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf8")
    typer.echo(text)
