"""Wall-clock timings of the benchmarks and studies: the best of repeated
runs, interleaved so that every run sees the same machine load."""

import time
from typing import Callable, Dict, Tuple

from spacy_depner.util.progress import progress


def best_time(run: Callable[[], object], repeats: int) -> float:
    """Smallest wall-clock time of ``repeats`` runs, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def interleaved_best_times(runs: Dict[object, Callable[[], object]], repeats: int) -> Dict[object, float]:
    """Best time of each run over ``repeats`` rounds, one run of each per round,
    so that every run sees the same machine load."""
    seconds = {key: [] for key in runs}
    for _ in range(repeats):
        for key, run in runs.items():
            seconds[key].append(best_time(run, 1))
    return {key: min(values) for key, values in seconds.items()}


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
    for _ in progress(range(repeats), repeats, "timed rounds", unit="round"):
        for key, pipe in pipes.items():
            copies = [doc.copy() for doc in docs]
            start = time.perf_counter()
            annotated[key] = list(pipe(copies, batch_size=batch_size))
            seconds[key].append(time.perf_counter() - start)
    return {key: min(values) for key, values in seconds.items()}, annotated
