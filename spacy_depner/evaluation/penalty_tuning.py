"""The mention penalty of ``hypergraph_ner`` tuned on development data for F1
(Lu & Roth 2015, sec. 3.7: a fixed-step search over the bias added to every
T -> I hyperedge), by the grid search of ``setting_search``."""

from pathlib import Path
from typing import Dict, Optional, Sequence

from ..util.pipelines import load_pipeline
from .component_decoding import component_inputs, require_component
from .corpus_scores import nested_file_examples, trees_given
from .metrics import prf
from .pipeline_output import check_output, kept_or_tuned, save_pipeline
from .setting_search import grid_search, grid_values


def tune_penalty(
    component, examples: Sequence, step: float = 0.01, low: float = -3.0, high: float = 3.0, batch_size: int = 256
) -> Dict[str, float]:
    """Set the mention penalty of the ``hypergraph_ner`` component to the value
    of low, low + step, ..., high with the best F1 of the mentions (with heads:
    boundaries + type + head) on ``examples``, whose predicted Docs are the
    component's inputs (a fixed-step search; the first best value on ties).
    Each batch goes through the component's own steps: ``problem`` once (read,
    model, temperatures), then, for each value, ``solve`` (its decoding, the
    mentions off the whitespace) and its ``threshold``, the marginals computed
    only where the mentions need them. Returns the chosen penalty and its
    P/R/F (``tuned_*``) and those of the previous penalty (``before_*``),
    P/R/F as fractions."""
    grid = grid_values(low, high, step)
    examples = list(examples)
    chunks = [examples[i : i + batch_size] for i in range(0, len(examples), batch_size)]
    problems = [component.problem([eg.predicted for eg in chunk]) for chunk in chunks]
    golds = [
        {tuple(row) for row in component.gold_mentions(chunk, problem.batch.doc_offsets).tolist()}
        for chunk, problem in zip(chunks, problems)
    ]
    previous = component.mention_penalty

    def scores(penalty: float) -> Dict[str, float]:
        component.mention_penalty = penalty
        tp = n_predicted = n_gold = 0
        for problem, gold in zip(problems, golds):
            prediction = component.solve(problem, with_probabilities=False)
            _, mentions = component.confident(prediction.probabilities, prediction.mentions)
            predicted = {tuple(row) for row in mentions.tolist()}
            tp, n_predicted, n_gold = tp + len(gold & predicted), n_predicted + len(predicted), n_gold + len(gold)
        return prf(tp, n_predicted - tp, n_gold - tp)

    try:
        before = {"penalty": previous, **scores(previous)}
        best, _ = grid_search(grid, scores, "penalty")
    finally:
        component.mention_penalty = previous
    component.mention_penalty = best["penalty"]
    return {**{f"tuned_{k}": v for k, v in best.items()}, **{f"before_{k}": v for k, v in before.items()}}


def tune_pipeline_penalty(
    model: Path,
    output: Path,
    jsonl: Optional[Path] = None,
    gum: Optional[Path] = None,
    component: str = "hypergraph_ner",
    step: float = 0.01,
    low: float = -3.0,
    high: float = 3.0,
    force: bool = False,
) -> Dict[str, object]:
    """``tune_penalty`` of the hypergraph_ner component ``component`` of the
    pipeline at ``model`` on a GENIA or GUM development file (the components
    before it annotate the inputs); the tuned pipeline, its config.cfg
    holding the tuned value, is saved to ``output`` atomically (a
    temporary folder renamed, replacing a pipeline there, which may be
    ``model``), or with its own penalty when that scores higher on the data
    (``before_f`` above ``tuned_f``), unless ``force`` (``kept_or_tuned``:
    ``chosen`` in the result)."""

    check_output(output)
    nlp = load_pipeline(model)
    require_component(nlp, model, component)
    pipe = nlp.get_pipe(component)
    examples = nested_file_examples(nlp.vocab, jsonl, gum, pipe.spans_key, "given" if trees_given(nlp) else "predicted")
    for eg, doc in zip(examples, component_inputs(nlp, component, examples)):
        eg.predicted = doc
    result = tune_penalty(pipe, examples, step=step, low=low, high=high)
    tuned = kept_or_tuned(result, {"mention_penalty": result["tuned_penalty"]}, force)
    pipe.mention_penalty = tuned.get("mention_penalty", result["before_penalty"])
    save_pipeline(nlp, component, tuned, output)
    return result
