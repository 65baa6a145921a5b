"""The mention penalty of ``hypergraph_ner`` tuned on development data for F1
(Lu & Roth 2015, sec. 3.7: a fixed-step search over the bias added to every
T -> I hyperedge), by the grid search of ``setting_search``."""
from pathlib import Path
from typing import Dict, Optional, Sequence

import numpy as np

from ..util.pipelines import load_pipeline
from ..doc_arrays.tokens import batch_offsets
from ..structures import hypergraph
from ..structures.hypergraph import HYPERGRAPH
from .corpus_scores import nested_file_examples, trees_given
from .metrics import prf
from .setting_search import check_output, component_inputs, grid_search, grid_values, require_component, save_pipeline


def tune_penalty(component, examples: Sequence, step: float = 0.01, low: float = -3.0, high: float = 3.0,
                 batch_size: int = 256) -> Dict[str, float]:
    """Set the mention penalty of the ``hypergraph_ner`` component to the value
    of low, low + step, ..., high with the best F1 of the mentions (with heads:
    boundaries + type + head) on ``examples``, whose predicted Docs are the
    component's inputs (a fixed-step search; the first best value on ties).
    The hyperedge scores are computed once; each value costs one MAP
    decoding. Returns the chosen penalty and its P/R/F (``tuned_*``) and
    those of the previous penalty (``before_*``), P/R/F as fractions."""
    grid = grid_values(low, high, step)
    examples = list(examples)
    docs = [eg.predicted for eg in examples]
    heads = component.cfg["heads"]
    doc_offsets, sentence_offsets = batch_offsets(docs)
    batches = [component.hyperedge_scores(docs[i:i + batch_size]) for i in range(0, len(docs), batch_size)]
    edge_scores = np.concatenate(batches) if batches else \
        np.zeros((0, len(component.labels), HYPERGRAPH.n_kinds(heads)), dtype=np.float32)
    gold = {tuple(row) for row in component.gold_mentions(examples, doc_offsets).tolist()}
    layout = hypergraph.layout(sentence_offsets)

    def scores(penalty: float) -> Dict[str, float]:
        best = HYPERGRAPH.viterbi(edge_scores, layout, mention_penalty=penalty, heads=heads)
        predicted = {tuple(row) for row in best.mentions.tolist()}
        tp = len(gold & predicted)
        return prf(tp, len(predicted) - tp, len(gold) - tp)

    before = {"penalty": component.mention_penalty, **scores(component.mention_penalty)}
    best, _ = grid_search(grid, scores, "penalty")
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

    check_output(output)
    nlp = load_pipeline(model)
    require_component(nlp, model, component)
    pipe = nlp.get_pipe(component)
    examples = nested_file_examples(nlp.vocab, jsonl, gum, pipe.spans_key, "given" if trees_given(nlp) else "predicted")
    for eg, doc in zip(examples, component_inputs(nlp, component, examples)):
        eg.predicted = doc
    result = tune_penalty(pipe, examples, step=step, low=low, high=high)
    save_pipeline(nlp, component, {"mention_penalty": result["tuned_penalty"]}, output)
    return result
