"""``python -m spacy_depner compile``: fill numba's on-disk cache with the
compiled code of every structure, once after install, so that the first
pipeline a user runs starts as fast as later ones.

Each component (and each space of ``nested_ner``) is trained for a step on
four tiny Docs and then predicts, in this process: training compiles the
marginals (and the Viterbi pass of a nested space's gold mentions), predicting
the Viterbi pass and the probabilities of what it finds, with the argument
types of real use. numba keeps each in its cache folder
(``spacy_depner.numba_runtime.cache_dir``); the command prints it."""

import os
import time
from typing import Dict, List, Optional, Tuple

import typer

from ..util.progress import progress

# the settings of each warm-up: (component, its config)
TARGETS: Dict[str, Tuple[str, dict]] = {
    "chain_ner": ("chain_ner", {}),
    "dgm_ner": ("dgm_ner", {}),
    "nested_ner:semi_markov": ("nested_ner", {"space": "semi_markov"}),
    "nested_ner:cyk": ("nested_ner", {"space": "cyk"}),
    "nested_ner:quadratic": ("nested_ner", {"space": "quadratic"}),
    "hypergraph_ner": ("hypergraph_ner", {}),
}
WORDS = [
    ("IL-2 gene expression requires NF-kappa B activation .", [(0, 2, "DNA"), (0, 1, "protein"), (4, 6, "protein")]),
    ("Ada Lovelace worked in London .", [(0, 2, "PER"), (4, 5, "LOC")]),
    ("The CD28 receptor binds B7 ligands .", [(1, 3, "protein"), (1, 2, "protein"), (4, 5, "protein")]),
    ("Grace Hopper joined the Navy .", [(0, 2, "PER"), (4, 5, "ORG")]),
]


def examples(nlp, nested: bool) -> list:
    """Four tiny Examples with a tree (each word headed by the next, the last the root): flat entities in
    ``doc.ents`` (the first mention of each nest), or every mention in the span group of the component."""
    from spacy.tokens import Doc, Span
    from spacy.training import Example

    found = []
    for text, mentions in WORDS:
        words = text.split()
        heads = [min(i + 1, len(words) - 1) for i in range(len(words))]
        deps = ["dep"] * (len(words) - 1) + ["ROOT"]
        reference = Doc(nlp.vocab, words=words, heads=heads, deps=deps)
        spans = [Span(reference, start, end, label) for start, end, label in mentions]
        if nested:
            reference.spans[next(iter(nlp.pipe_names))] = spans
        else:
            reference.ents = [
                span for span in spans if not any(o is not span and o.start <= span.start < o.end for o in spans)
            ]
        predicted = Doc(nlp.vocab, words=words, heads=heads, deps=deps)
        found.append(Example(predicted, reference))
    return found


def warm_up(factory: str, config: dict) -> None:
    """One training step and one prediction of a blank pipeline with ``factory`` (``config``)."""
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe(factory, config=config)
    batch = examples(nlp, nested=factory in ("nested_ner", "hypergraph_ner"))
    optimizer = nlp.initialize(lambda: batch)
    nlp.update(batch, sgd=optimizer)
    list(nlp.pipe(example.predicted for example in batch))


def compile_kernels(
    only: Optional[List[str]] = typer.Option(
        None, "--only", help=f"Compile for these only (repeat the option): {', '.join(TARGETS)}"
    ),
) -> None:
    """Compile every structure into numba's cache, once.

    Run it after install so that the first pipeline of each kind starts without compiling."""
    chosen = only or list(TARGETS)
    unknown = [name for name in chosen if name not in TARGETS]
    if unknown:
        raise ValueError(
            f"--only {', '.join(unknown)}: not a structure this command compiles; one of {', '.join(TARGETS)}"
        )
    started = time.perf_counter()
    for name in progress(chosen, len(chosen), "structures compiled", unit="structure"):
        warm_up(*TARGETS[name])
    typer.echo(
        f"compiled {len(chosen)} structures in {time.perf_counter() - started:.1f} s into numba's cache "
        f"{os.environ.get('NUMBA_CACHE_DIR', '(numba default)')}"
    )
