"""``python -m experiments bench-types``: speed vs the number of mention types
T (Lu & Roth 2015, Table 3), mention hypergraph vs BILOU linear chain,
decoders alone and in pipelines, one thread."""

from pathlib import Path
from typing import Dict, List

import numpy as np
import typer

from ..kit.outputs import write_file
from ..kit.tables import machine, records_table
from ..kit.timing import interleaved_best_times, pipeline_seconds
from .pipelines import LISTENER, build_pipeline


def parse_types(text: str) -> List[int]:
    """ "5,10,20" -> [5, 10, 20]: positive, distinct numbers of mention types."""
    try:
        types = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter(f"expected comma-separated integers, not {text!r}") from None
    if not types or min(types) < 1 or len(set(types)) != len(types):
        raise typer.BadParameter(f"expected distinct positive numbers of types, not {text!r}")
    return types


def type_decoder_rows(types: List[int], n_tokens: int, sentence_length: int, repeats: int, rng) -> List[Dict]:
    """Decoder-only tokens/s per number of types T: ``HYPERGRAPH.viterbi``
    on float32 scores (N, T, 5) and ``CHAIN.viterbi`` on scores (N, 1 + 4T)
    (float64, what ``chain_ner`` passes it) with random transitions and the
    BILOU constraints, N tokens in sentences of ``sentence_length``."""
    from spacy_depner.structures import chain, hypergraph
    from spacy_depner.structures.chain import CHAIN
    from spacy_depner.structures.hypergraph import HYPERGRAPH

    offsets = np.append(np.arange(0, n_tokens, sentence_length), n_tokens).astype(np.int64)
    runs, rows = {}, []
    for T in types:
        edge_scores = rng.normal(size=(n_tokens, T, HYPERGRAPH.n_kinds())).astype(np.float32)
        allowed = CHAIN.allowed_transitions(T, "BILOU")
        n_tags = allowed.shape[0] - 1
        tag_scores = rng.normal(size=(n_tokens, n_tags))
        transitions = rng.normal(size=(n_tags + 1, n_tags + 1))
        first = int(offsets[min(2, len(offsets) - 1)])  # compile (or load the cache) on two sentences
        two, every = chain.layout(offsets[:3]), chain.layout(offsets)
        HYPERGRAPH.viterbi(edge_scores[:first], hypergraph.layout(offsets[:3]))
        CHAIN.viterbi((tag_scores[:first], transitions), two, scheme="BILOU")
        runs[T, "hypergraph"] = lambda s=edge_scores: HYPERGRAPH.viterbi(s, hypergraph.layout(offsets))
        runs[T, "chain"] = lambda s=tag_scores, tr=transitions: CHAIN.viterbi((s, tr), every, scheme="BILOU")
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
    chain = component == "chain_ner"
    settings = {"scheme": "BILOU"} if chain else {}
    architecture = "spacy_depner.TagScorer.v1" if chain else "spacy_depner.TokenScorer.v1"  # each one's default model
    nlp = build_pipeline(
        component,
        examples,
        {"@architectures": architecture, "tok2vec": LISTENER},
        [f"TYPE{t}" for t in range(n_types)],
        **settings,
    )
    if zero_output:
        layer = nlp.get_pipe(component).model.get_ref("output_layer")
        for name in ("W", "b"):
            layer.set_param(name, layer.ops.alloc(layer.get_param(name).shape, dtype="f"))
    return nlp


def predicted_mentions(doc) -> int:
    """Mentions a component put on ``doc``: its entities and its span groups."""
    return len(doc.ents) + sum(len(group) for group in doc.spans.values())


def type_pipeline_rows(
    types: List[int], examples, repeats: int, batch_size: int, zero_output: bool = True
) -> Dict[int, Dict]:
    """Words/s of tok2vec + hypergraph_ner and tok2vec + chain_ner per number
    of types on the Docs of ``examples`` (best of ``repeats`` interleaved
    runs, after a warm-up), each one's ratio to its figure at types[0], and
    the mentions per word each predicted (see ``build_types_pipeline``)."""
    docs = [eg.predicted for eg in examples]
    n_words = sum(len(doc) for doc in docs)
    components = {"hypergraph": "hypergraph_ner", "chain": "chain_ner"}
    pipelines = {
        (T, name): build_types_pipeline(component, T, examples[:50], zero_output)
        for T in types
        for name, component in components.items()
    }
    seconds, annotated = pipeline_seconds({key: nlp.pipe for key, nlp in pipelines.items()}, docs, repeats, batch_size)
    mentions = {key: sum(predicted_mentions(doc) for doc in key_docs) for key, key_docs in annotated.items()}
    rows = {T: {} for T in types}
    for T in types:
        for name in components:
            rows[T][f"{name} pipeline words/s"] = n_words / seconds[T, name]
            rows[T][f"{name} pipeline words/s vs T={types[0]}"] = seconds[types[0], name] / seconds[T, name]
            rows[T][f"{name} mentions/word"] = mentions[T, name] / max(n_words, 1)
    return rows


def bench_types(
    types: str = typer.Option(
        "5,10,20", "--types", help="Numbers of mention types T, comma-separated; the first is the baseline"
    ),
    tokens: int = typer.Option(50_000, help="Tokens of random scores for the decoder-only timings"),
    sentence_length: int = typer.Option(25, help="Tokens per sentence of the decoder-only timings"),
    jsonl: Path = typer.Option(..., help="GENIA JSON-lines file: the text of the pipeline timings"),
    output: Path = typer.Option(..., help="Markdown file to write"),
    repeats: int = typer.Option(3, help="Timed repeats; the best is kept"),
    batch_size: int = typer.Option(128, help="Docs per batch in nlp.pipe"),
    zero_output: bool = typer.Option(
        True,
        "--zero-output/--random-output",
        help="Pipelines: zero the output layer (no predicted mentions at any T) or keep its random initialization",
    ),
) -> None:
    """Speed vs the number of mention types T (Lu & Roth 2015, Table 3): mention
    hypergraph (linear in T) vs linear-chain CRF with BILOU tags (quadratic in T), one thread."""
    import spacy

    from spacy_depner.readers.genia import genia_examples, read_genia

    type_counts = parse_types(types)
    if tokens < 1 or sentence_length < 1 or repeats < 1 or batch_size < 1:
        raise typer.BadParameter("--tokens, --sentence-length, --repeats and --batch-size must be positive")
    examples = genia_examples(spacy.blank("en").vocab, read_genia(jsonl))
    n_words = sum(len(eg.predicted) for eg in examples)
    rows = type_decoder_rows(type_counts, tokens, sentence_length, repeats, np.random.default_rng(0))
    pipeline = type_pipeline_rows(type_counts, examples, repeats, batch_size, zero_output)
    pipeline_rows = [{"T": T, **pipeline[T]} for T in type_counts]
    base = f"T={type_counts[0]}"
    outputs = (
        " with the output layer zeroed (all scores 0: no mention predicted, at any T)"
        if zero_output
        else " (random initialization of the output layer)"
    )
    text = (
        f"# Speed vs number of mention types, Lu & Roth (2015) Table 3 ({machine()}, one thread; decoders: N = {tokens:,} tokens of random scores in sentences of {sentence_length}; "
        f"pipelines: {n_words:,} words of {jsonl.name}, {len(examples):,} sentences)\n\n"
        f"Decode: `HYPERGRAPH.viterbi` on (N, T, 5) float32 scores vs `CHAIN.viterbi` with BILOU tags "
        f"(1 + 4T tags, random transitions); time vs {base}: time(T) / time({base}) (the hypergraph is linear in T, "
        f"the chain quadratic). Pipeline: tok2vec + `hypergraph_ner` (Viterbi + marginals for the span scores) vs "
        f"tok2vec + `chain_ner` (BILOU, Viterbi), untrained weights{outputs}, `nlp.pipe` with batches of {batch_size}; "
        f"words/s vs {base}: words/s(T) / words/s({base}); mentions/word: predicted (making them Spans is part of the time). "
        f"Best of {repeats} interleaved runs.\n\n"
        f"## Decoders\n\n{records_table(rows)}\n\n## Pipelines\n\n{records_table(pipeline_rows)}\n"
    )
    typer.echo(write_file(output, text))
