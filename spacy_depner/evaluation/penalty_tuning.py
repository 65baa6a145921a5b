"""The mention penalty of ``hypergraph_ner`` tuned on development data for F1
(Lu & Roth 2015, sec. 3.7: a fixed-step search over the bias added to every
T -> I hyperedge)."""
from pathlib import Path
from typing import Dict, Optional, Sequence

import numpy as np

from ..atomic_files import atomic_path
from ..pipeline.doc_arrays import batch_offsets
from ..structures import mention_hypergraph
from .corpus_scores import nested_file_examples
from .metrics import prf
from .progress import progress


def tune_penalty(component, examples: Sequence, step: float = 0.01, low: float = -3.0, high: float = 3.0,
                 batch_size: int = 256) -> Dict[str, float]:
    """Set the mention penalty of the ``hypergraph_ner`` component to the value
    of low, low + step, ..., high with the best F1 of the mentions (with heads:
    boundaries + type + head) on ``examples``, whose predicted Docs are the
    component's inputs (a fixed-step search; the first best value on ties).
    The hyperedge scores are computed once; each value costs one MAP
    decoding. Returns the chosen penalty and its P/R/F (``tuned_*``) and
    those of the previous penalty (``before_*``), P/R/F as fractions."""
    if step <= 0 or high < low:
        raise ValueError(f"need step > 0 and low <= high, not step={step}, low={low}, high={high}")
    examples = list(examples)
    docs = [eg.predicted for eg in examples]
    heads = component.cfg["heads"]
    doc_offsets, sentence_offsets = batch_offsets(docs)
    batches = [component.hyperedge_scores(docs[i:i + batch_size]) for i in range(0, len(docs), batch_size)]
    edge_scores = np.concatenate(batches) if batches else \
        np.zeros((0, len(component.labels), mention_hypergraph.n_kinds(heads)), dtype=np.float32)
    gold = {tuple(row) for row in component.gold_mentions(examples, doc_offsets).tolist()}

    def scores(penalty: float) -> Dict[str, float]:
        _, edges = mention_hypergraph.viterbi(edge_scores, sentence_offsets, penalty, heads)
        predicted = {tuple(row) for row in mention_hypergraph.edges_to_mentions(edges, sentence_offsets).tolist()}
        tp = len(gold & predicted)
        return {"penalty": penalty, **prf(tp, len(predicted) - tp, len(gold) - tp)}

    before = scores(component.mention_penalty)
    grid = low + step * np.arange(int(round((high - low) / step)) + 1)
    best = max((scores(round(float(x), 10)) for x in progress(grid, len(grid), "penalty search", unit="value")),
               key=lambda result: result["f"])
    component.mention_penalty = best["penalty"]
    return {**{f"tuned_{k}": v for k, v in best.items()}, **{f"before_{k}": v for k, v in before.items()}}


def tune_pipeline_penalty(model: Path, output: Path, jsonl: Optional[Path] = None, gum: Optional[Path] = None,
                          component: str = "hypergraph_ner", step: float = 0.01, low: float = -3.0,
                          high: float = 3.0) -> Dict[str, float]:
    """``tune_penalty`` of the hypergraph_ner component ``component`` of the
    pipeline at ``model`` on a GENIA or GUM development file (the components
    before it annotate the inputs); the tuned pipeline, its config.cfg
    holding the tuned value, is saved to ``output`` atomically (a
    temporary folder renamed, replacing a pipeline there, which may be
    ``model``)."""
    import spacy

    output = Path(output)
    if output.is_file() or (output.is_dir() and any(output.iterdir()) and not (output / "config.cfg").is_file()):
        raise ValueError(f"OUTPUT {output} exists and is not a saved pipeline (no config.cfg): "
                         "choose another path, or move it away")
    nlp = spacy.load(model)
    if component not in nlp.pipe_names:
        raise ValueError(f"{model} has no component {component!r} (it has {nlp.pipe_names})")
    pipe = nlp.get_pipe(component)
    examples = nested_file_examples(nlp.vocab, jsonl, gum, pipe.spans_key)
    with nlp.select_pipes(disable=[component]):
        for eg, doc in zip(examples, progress(nlp.pipe([eg.predicted for eg in examples]), len(examples), "annotate")):
            eg.predicted = doc
    result = tune_penalty(pipe, examples, step=step, low=low, high=high)
    nlp.get_pipe_config(component)["mention_penalty"] = result["tuned_penalty"]  # what nlp.config and config.cfg show
    with atomic_path(output) as temporary:
        nlp.to_disk(temporary)
    return result
