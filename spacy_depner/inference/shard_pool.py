"""Processes that each run a job over input shards they read themselves.

A job (``ShardJob``) turns one input shard into one output shard file,
written atomically, and reports its progress (documents, words) as it goes.
``run_shards`` runs a job over the shards left: in this process for one
process, else in ``n_process`` worker processes that take the next shard
from a queue as they finish one. Nothing but shard numbers and counts
crosses a process boundary, each worker limits the BLAS, OpenMP and torch
threads to one (two processes with a thread pool each on every core only
wait on each other), and under ``fork`` (the default where the platform has
it) the workers share the pipeline the parent loaded; under ``spawn`` the
job, with its pipeline, is pickled to each worker. A worker's error stops
the others and is raised in the parent, a ValueError (a bad input line,
named ``file:line``) as it was raised; the shards done are kept.
"""

import multiprocessing
import os
import queue
import sys
import traceback
from typing import Callable, Iterable, List, Optional, Protocol

from .input_shards import InputShard

Report = Callable[[int, int], None]


class ShardJob(Protocol):
    def run(self, shard: InputShard, report: Report) -> None:
        """Write the output shard of ``shard`` (atomically); call
        ``report(docs, words)`` for the documents done since the last call."""


def limit_threads() -> None:
    """One thread for BLAS/OpenMP (threadpoolctl) and torch in this process."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def die_with_parent() -> None:
    """On Linux, have the kernel kill this process when its parent dies
    (``PR_SET_PDEATHSIG``): a killed run leaves no worker writing behind it.
    Elsewhere the workers notice at their next shard (``worker_main``)."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def default_start_method() -> str:
    """``fork`` on Linux (workers share the parent's loaded pipeline), else ``spawn``."""
    return "fork" if sys.platform.startswith("linux") else "spawn"


def worker_main(job: ShardJob, shards: List[InputShard], tasks, results) -> None:
    """A worker: runs ``job`` on each shard number taken from ``tasks`` until
    None, putting ``("progress", docs, words)``, ``("done", number)`` and at
    most one ``("error", number, is_value_error, message)`` on ``results``;
    stops when the parent is gone."""
    die_with_parent()
    parent = os.getppid()
    limit_threads()

    def report(docs: int, words: int) -> None:
        results.put(("progress", docs, words))

    for number in iter(tasks.get, None):
        if os.getppid() != parent:
            return
        try:
            job.run(shards[number], report)
        except BaseException as error:  # noqa: BLE001 - every error reaches the parent
            message = str(error) if isinstance(error, ValueError) else traceback.format_exc()
            results.put(("error", number, isinstance(error, ValueError), message))
            return
        results.put(("done", number))


def run_shards(
    job: ShardJob,
    shards: List[InputShard],
    pending: Iterable[int],
    n_process: int,
    report: Report,
    start_method: Optional[str] = None,
) -> None:
    """Run ``job`` on ``shards[i]`` for each ``i`` of ``pending`` (in order
    of ``pending`` as processes come free), ``report`` called in this
    process with every worker's progress."""
    pending = list(pending)
    if n_process < 1:
        raise ValueError(f"n_process={n_process}: give at least 1")
    if n_process == 1 or len(pending) <= 1:
        for number in pending:
            job.run(shards[number], report)
        return
    context = multiprocessing.get_context(start_method or default_start_method())
    tasks, results = context.Queue(), context.Queue()
    for number in pending:
        tasks.put(number)
    workers = [
        context.Process(target=worker_main, args=(job, shards, tasks, results), daemon=True)
        for _ in range(min(n_process, len(pending)))
    ]
    for _ in workers:
        tasks.put(None)
    for worker in workers:
        worker.start()
    left = set(pending)
    try:
        while left:
            try:
                message = results.get(timeout=1.0)
            except queue.Empty:
                dead = [w for w in workers if w.exitcode not in (None, 0)]
                if dead or all(w.exitcode is not None for w in workers):
                    raise RuntimeError(
                        f"A worker process of the corpus run ended (exit code {dead[0].exitcode if dead else 0}) "
                        f"with {len(left)} shards left, e.g. {shards[min(left)].where()}: if it ran out of "
                        "memory, give a smaller --batch-size or fewer --n-process; rerun to continue"
                    ) from None
                continue
            if message[0] == "progress":
                report(message[1], message[2])
            elif message[0] == "done":
                left.discard(message[1])
            else:
                _, number, is_value_error, text = message
                if is_value_error:
                    raise ValueError(text)
                raise RuntimeError(f"A worker failed on {shards[number].where()}:\n{text}")
    finally:
        for worker in workers:
            if worker.is_alive():
                worker.terminate()
        for worker in workers:
            worker.join()
        tasks.close()
        results.close()
