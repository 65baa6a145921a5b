"""``python -m experiments bench``: speed tables of ``dgm_ner`` and its
lattices, every figure a ratio against a baseline measured in the same run.

1. Pipeline words/s: tok2vec + each entity component (``dgm_ner``,
   ``chain_ner``, ``nested_ner``, ``hypergraph_ner``, their default models;
   with and without the marginals of ``attrs["scores"]``, setting
   ``probabilities``) vs tok2vec + spaCy's ``ner``
   (same tok2vec settings, same Docs with their given trees, same batch size).
2. Decoder-only tokens/s (candidate spans + Viterbi, and forward-backward) for
   ``semi_markov`` (L=8), ``dgm_s`` and ``dgm`` on the corpus's trees.
3. Every structure (lattices, chain, nested spaces, hypergraph): Viterbi and
   marginals through the structure protocol, and their time ratio
   (``structures``); the DGM's training iteration and Viterbi against the
   semi-Markov CRF's at L=8 on the same spans' scores, beside two limits:
   the ratio of their spans, and that of the terms of the recursion, which
   shares the transition step of a position among its spans
   (``lattice_iteration``).
4. DGM per-token time on uniformly random trees of n = 50, 200, 1,000 tokens
   (unbounded span length), relative to n = 50.
5. With ``--long-conllu``: seconds and peak memory of each component on one
   Doc of 100,000 tokens, real text and a single right-branching sentence
   (``long``).
"""

from pathlib import Path
from typing import Dict, List, Optional

import numpy as np
import typer

from ..kit.outputs import write_file
from ..kit.tables import machine, records_table
from ..kit.timing import best_time, pipeline_seconds
from .decoders import batches_of, decode, decoder_rows, decoder_setup
from .lattice_iteration import iteration_section
from .long import long_section
from .pipelines import LABELS, MODELS, build_pipeline
from .structures import structure_section


def pipeline_rows(examples, repeats: int, batch_size: int) -> List[Dict]:
    docs = [eg.predicted for eg in examples]
    n_words = sum(len(doc) for doc in docs)
    pipelines = {"ner": build_pipeline("ner", examples[:200])}
    for name in MODELS:
        pipelines[name] = build_pipeline(name, examples[:200], labels=LABELS)
        if name != "chain_ner":
            pipelines[f"{name} (probabilities: false, no marginals)"] = build_pipeline(
                name, examples[:200], labels=LABELS, probabilities=False
            )
    seconds, _ = pipeline_seconds({name: nlp.pipe for name, nlp in pipelines.items()}, docs, repeats, batch_size)
    base = n_words / seconds["ner"]
    return [
        {"pipeline": f"tok2vec + {name}", "words/s": n_words / s, "ratio vs ner": n_words / s / base}
        for name, s in seconds.items()
    ]


def scaling_rows(lengths, total_tokens: int, n_labels: int, repeats: int, rng) -> List[Dict]:
    from .random_trees import random_forest

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


def bench(
    conllu: Path = typer.Option(..., help="CoNLL-U file (gold trees)"),
    uner: Path = typer.Option(..., help="UNER IOB2 file for the same sentences"),
    output: Path = typer.Option(..., help="Markdown file to write"),
    repeats: int = typer.Option(3, help="Timed repeats; the best is kept"),
    batch_size: int = typer.Option(128, help="Docs per batch in nlp.pipe"),
    synthetic_tokens: int = typer.Option(200_000, help="Tokens per sentence length in the scaling table"),
    long_conllu: Optional[Path] = typer.Option(
        None,
        help="CoNLL-U file (gold trees) whose sentences make the long "
        "Docs of the long-input table (none: no such table)",
    ),
    long_tokens: int = typer.Option(100_000, help="Tokens of each long Doc"),
    long_timeout: float = typer.Option(900.0, help="Seconds after which a long-input child process is stopped"),
) -> None:
    """Write the speed tables of dgm_ner and its lattices (markdown) to OUTPUT and print them; publish-results
    puts its pipeline table into the words/s table of the speed page."""
    import spacy

    from spacy_depner.readers.uner import create_uner_reader

    rng = np.random.default_rng(0)
    examples = list(create_uner_reader(conllu, uner, dependencies="given")(spacy.blank("en")))
    docs = [eg.predicted for eg in examples]
    n_labels = len(LABELS)
    pipelines = pipeline_rows(examples, repeats, batch_size)
    corpus = f"{sum(len(d) for d in docs):,} words of {conllu.name}"
    sections = [
        f"# spacy-depner speed ({machine()}, {corpus})",
        "## Pipeline words/s (given trees; untrained weights: the work per word does not depend on them)",
        records_table(pipelines),
        f"## Decoder only, {n_labels} labels + O, batches of ~1,000 tokens: tokens/s (candidate spans + Viterbi; candidate spans + forward-backward)",
        records_table(decoder_rows(batches_of(docs, 1000), n_labels, repeats, rng)),
        *structure_section(batches_of(docs, 1000), n_labels, repeats, rng),
        *iteration_section(batches_of(docs, 1000), n_labels, repeats, rng),
        "## DGM (unbounded length) on uniformly random trees: time per token (candidate spans + Viterbi)",
        records_table(scaling_rows([50, 200, 1000], synthetic_tokens, n_labels, repeats, rng)),
    ]
    if long_conllu is not None:
        sections.append(long_section(conllu, uner, long_conllu, long_tokens, long_timeout))
    text = "\n\n".join(sections) + "\n"
    typer.echo(write_file(output, text))
