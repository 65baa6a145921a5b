"""Every structure timed through the structure protocol (``protocol``):
``structure.viterbi`` and ``structure.marginals`` on the sentences of the
bench's data, random normal scores (scale 1), the two operations of a row
interleaved in the same rounds so that their ratio sees one machine load.

``python -m experiments bench-structures``: this table, the decoder-only
table of ``bench`` (``decoders.decoder_rows``) and the DGM's training
iteration against the semi-Markov CRF's (``lattice_iteration``), without
the pipelines.
"""

from pathlib import Path
from typing import Dict, List

import numpy as np
import typer

from spacy_depner.structures.nested import NESTED

from ..kit.outputs import write_file
from ..kit.tables import machine, records_table
from ..kit.timing import interleaved_best_times
from .decoders import batches_of, decoder_rows
from .lattice_iteration import iteration_section

NESTED_SPACES = NESTED.spaces
CHAIN_SCHEME = "BILOU"
NESTED_MAX_SENTENCE = 60


def _sentence_batches(batches, longest: int, tokens_per_batch: int = 1000):
    """The sentences of ``batches`` of at most ``longest`` tokens, regrouped
    into batches (sentence offsets) of about ``tokens_per_batch`` tokens."""
    lengths = [n for _, offsets in batches for n in np.diff(offsets).tolist() if 0 < n <= longest]
    groups, group = [], []
    for n in lengths:
        group.append(n)
        if sum(group) >= tokens_per_batch:
            groups.append(group)
            group = []
    if group:
        groups.append(group)
    return [np.concatenate([[0], np.cumsum(g)]).astype(np.int64) for g in groups]


def structure_cases(batches, n_labels: int, rng, nested_longest: int = NESTED_MAX_SENTENCE) -> List[Dict]:
    """Each row's structure, options and (scores, layout) per batch."""
    from spacy_depner.structures import chain, hypergraph, lattice, nested
    from spacy_depner.structures.chain import CHAIN
    from spacy_depner.structures.hypergraph import HYPERGRAPH
    from spacy_depner.structures.trees.candidate_spans import all_spans, candidate_spans

    cases = []
    for name, max_length in (("semi_markov", 8), ("dgm_s", None), ("dgm", None)):
        transitions = rng.normal(size=(n_labels + 2, n_labels + 2))
        inputs = []
        for heads, offsets in batches:
            spans = candidate_spans(name, heads, offsets, max_length)
            inputs.append(
                ((rng.normal(size=(spans.shape[0], n_labels + 1)), transitions), lattice.layout(spans, offsets))
            )
        label = f"lattice {name}" + (f" (L={max_length})" if max_length else "")
        cases.append({"row": label, "structure": lattice.LATTICE, "options": {}, "inputs": inputs})
    T = len(CHAIN.tag_names([str(k) for k in range(n_labels)], CHAIN_SCHEME))
    transitions = rng.normal(size=(T + 1, T + 1))
    cases.append(
        {
            "row": f"chain {CHAIN_SCHEME} ({T} tags)",
            "structure": CHAIN,
            "options": {"scheme": CHAIN_SCHEME},
            "inputs": [((rng.normal(size=(int(o[-1]), T)), transitions), chain.layout(o)) for _, o in batches],
        }
    )
    short = _sentence_batches(batches, nested_longest)
    for space in NESTED_SPACES:
        inputs = []
        for offsets in short:
            spans = all_spans(offsets, None)
            inputs.append((rng.normal(size=(spans.shape[0], n_labels)), nested.layout(spans, offsets)))
        cases.append(
            {
                "row": f"nested {space} (sentences <= {nested_longest} tokens)",
                "structure": nested.NESTED,
                "options": {"space": space},
                "inputs": inputs,
            }
        )
    cases.append(
        {
            "row": f"hypergraph ({n_labels} types)",
            "structure": HYPERGRAPH,
            "options": {},
            "inputs": [
                (rng.normal(size=(int(o[-1]), n_labels, HYPERGRAPH.n_kinds())), hypergraph.layout(o))
                for _, o in batches
            ],
        }
    )
    return cases


def structure_rows(batches, n_labels: int, repeats: int, rng, nested_longest: int = NESTED_MAX_SENTENCE) -> List[Dict]:
    """tokens/s of viterbi and marginals of every structure, and their time
    ratio, both operations of a row timed in the same interleaved rounds."""
    rows = []
    for case in structure_cases(batches, n_labels, rng, nested_longest):
        structure, options, inputs = case["structure"], case["options"], case["inputs"]
        n_tokens = sum(layout.n_tokens for _, layout in inputs)

        def run(operation, structure=structure, options=options, inputs=inputs):
            if operation == "viterbi":
                return lambda: [structure.viterbi(scores, layout, **options) for scores, layout in inputs]
            # log Z and the gradient read, as training reads them (a structure may compute them on demand)
            return lambda: [
                (m.log_z, m.scores)
                for m in (structure.marginals(scores, layout, **options) for scores, layout in inputs)
            ]

        for operation in ("viterbi", "marginals"):
            run(operation, inputs=inputs[:1])()  # compile
        seconds = interleaved_best_times({op: run(op) for op in ("viterbi", "marginals")}, repeats)
        rows.append(
            {
                "structure": case["row"],
                "tokens": n_tokens,
                "viterbi tokens/s": n_tokens / seconds["viterbi"],
                "marginals tokens/s": n_tokens / seconds["marginals"],
                "marginals time / viterbi time": seconds["marginals"] / seconds["viterbi"],
            }
        )
    return rows


def structure_section(
    batches, n_labels: int, repeats: int, rng, nested_longest: int = NESTED_MAX_SENTENCE
) -> List[str]:
    """The title and table of "Every structure: Viterbi and marginals"."""
    return [
        f"## Every structure: Viterbi and marginals through the structure protocol ({n_labels} labels, "
        f"batches of ~1,000 tokens, random normal scores; nested rows on the sentences of at most "
        f"{nested_longest} tokens): tokens/s, and the time of marginals over that of Viterbi (same rounds)",
        records_table(structure_rows(batches, n_labels, repeats, rng, nested_longest)),
    ]


def bench_structures(
    conllu: Path = typer.Option(..., help="CoNLL-U file (gold trees)"),
    uner: Path = typer.Option(..., help="UNER IOB2 file for the same sentences"),
    output: Path = typer.Option(..., help="Markdown file to write"),
    repeats: int = typer.Option(5, help="Timed rounds; the best is kept"),
    nested_longest: int = typer.Option(NESTED_MAX_SENTENCE, help="Longest sentence of the nested rows"),
) -> None:
    """The decoder-only table of ``bench`` and every structure's Viterbi and marginals (markdown) to OUTPUT."""
    import spacy

    from spacy_depner.readers.uner import create_uner_reader

    from .pipelines import LABELS

    examples = list(create_uner_reader(conllu, uner, dependencies="given")(spacy.blank("en")))
    docs = [eg.predicted for eg in examples]
    batches = batches_of(docs, 1000)
    n_labels = len(LABELS)
    sections = [
        f"# spacy-depner decoders ({machine()}, {sum(len(d) for d in docs):,} words of {conllu.name})",
        f"## Decoder only, {n_labels} labels + O, batches of ~1,000 tokens: tokens/s (candidate spans + Viterbi; "
        "candidate spans + forward-backward)",
        records_table(decoder_rows(batches, n_labels, repeats, np.random.default_rng(0))),
        *structure_section(batches, n_labels, repeats, np.random.default_rng(0), nested_longest),
        *iteration_section(batches, n_labels, repeats, np.random.default_rng(0)),
    ]
    typer.echo(write_file(output, "\n\n".join(sections) + "\n"))
