"""``python -m experiments bench-cold-start``: what the first call costs.

Each workload runs as a whole new Python process, first with an empty numba
cache (``NUMBA_CACHE_DIR`` a fresh temporary folder: every kernel it uses is
compiled) and then warm (the same folder: every kernel is loaded from the
cache), and the table gives the wall seconds of both, their ratio and the
issue's bound (cold at most 2 x warm + 3 s). The workloads are the README's
``<!-- runnable -->`` blocks as a user pastes them, and, for each entity
component, loading a saved pipeline and running it on one Doc (the cold start
of a new environment, worker or container). Beside the seconds, the numba
kernels the cold process compiled (one per signature, counted by numba's
``numba:compile`` event) and the seconds spent compiling them: counts that a
busy machine does not blur.
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional

import typer

from ..kit.outputs import write_file
from ..kit.tables import machine, table

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
RUNNABLE = re.compile(r"<!-- runnable -->\n```python\n(.*?)\n```", re.S)  # the blocks tests/test_readme.py runs
COMPONENTS = ("chain_ner", "dgm_ner", "nested_ner", "hypergraph_ner")
REPORT = "SPACY_DEPNER_COLD_START_REPORT"

# Prepended to every workload: counts the functions numba compiles (one per
# signature: the package's kernels, and all of them with numba's own
# overloads such as np.empty's) and the seconds of the outermost compiles
# (a kernel compiled inside another is not counted twice), written at exit.
COUNTER = (
    """
import atexit as _atexit, json as _json, os as _os, time as _time
from numba.core import event as _event

class _Compiles(_event.Listener):
    def __init__(self):
        self.kernels, self.functions, self.seconds, self.depth, self.start = 0, 0, 0.0, 0, 0.0
    def on_start(self, ev):
        self.functions += 1
        self.kernels += ev.data["dispatcher"].py_func.__module__.startswith("spacy_depner")
        if self.depth == 0:
            self.start = _time.perf_counter()
        self.depth += 1
    def on_end(self, ev):
        self.depth -= 1
        if self.depth == 0:
            self.seconds += _time.perf_counter() - self.start

_compiles = _Compiles()
_event.register("numba:compile", _compiles)
_atexit.register(lambda: open(_os.environ["%s"], "w").write(_json.dumps(
    {"kernels": _compiles.kernels, "functions": _compiles.functions, "compile_s": _compiles.seconds})))
"""
    % REPORT
)

# Builds one small trained pipeline per component (a few updates on four
# sentences with trees), saved to sys.argv[1]/<factory>.
BUILD = """
import sys
from pathlib import Path
import spacy
from spacy.tokens import Doc, Span
from spacy.training import Example

ROWS = [
    ("John Smith visited New York".split(), [1, 2, 2, 4, 2], ["compound", "nsubj", "ROOT", "compound", "obj"],
     [(0, 2, "PER"), (3, 5, "LOC")]),
    ("Mary lives in Paris".split(), [1, 1, 3, 1], ["nsubj", "ROOT", "case", "obl"], [(0, 1, "PER"), (3, 4, "LOC")]),
    ("Paris loves Mary Smith".split(), [1, 1, 3, 1], ["nsubj", "ROOT", "compound", "obj"],
     [(0, 1, "LOC"), (2, 4, "PER")]),
    ("Ada met John Smith in London".split(), [1, 1, 3, 1, 5, 1], ["nsubj", "ROOT", "compound", "obj", "case", "obl"],
     [(0, 1, "PER"), (2, 4, "PER"), (5, 6, "LOC")]),
]

def example(nlp, name, words, heads, deps, found):
    predicted = Doc(nlp.vocab, words=words, heads=heads, deps=deps)
    reference = Doc(nlp.vocab, words=words, heads=heads, deps=deps)
    spans = [Span(reference, s, e, label=label) for s, e, label in found]
    reference.ents = spans
    reference.spans[name] = spans
    return Example(predicted, reference)

Path(sys.argv[1]).mkdir(parents=True)
for factory in sys.argv[2:]:
    nlp = spacy.blank("en")
    nlp.add_pipe(factory)
    examples = [example(nlp, factory, *row) for row in ROWS]
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(3):
        nlp.update(examples, sgd=optimizer)
    nlp.to_disk(Path(sys.argv[1]) / factory)
"""

# Loads the pipeline sys.argv[1] and runs it once on a Doc with a tree.
LOAD_AND_RUN = """
import sys
import spacy
from spacy.tokens import Doc

nlp = spacy.load(sys.argv[1])
words = "Grace Hopper worked for IBM in London".split()
doc = nlp(Doc(nlp.vocab, words=words, heads=[1, 2, 2, 2, 3, 6, 2], deps=["compound", "nsubj", "ROOT", "case", "obl",
    "case", "obl"]))
print(len(doc.ents), {key: len(group) for key, group in doc.spans.items()})
"""


class Workload(NamedTuple):
    name: str
    code: str
    args: List[str]


def readme_blocks() -> List[str]:
    """The README's runnable blocks, in order."""
    return RUNNABLE.findall(README.read_text(encoding="utf8"))


def children_cpu_seconds() -> Optional[float]:
    """User + system CPU seconds of the finished child processes (None where
    the platform does not say: Windows)."""
    try:
        import resource
    except ImportError:
        return None
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_process(workload: Workload, cache: Path, cwd: Path) -> Dict:
    """Run ``workload`` as a new process with ``cache`` as numba's cache: its
    wall and CPU seconds, and the kernels it compiled and their seconds."""
    report = cwd / "compiles.json"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), REPORT: str(report), "PYTHONPATH": str(ROOT)}
    cpu = children_cpu_seconds()
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", COUNTER + workload.code, *workload.args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{workload.name} failed:\n{done.stderr[-3000:]}")
    cpu = None if cpu is None else children_cpu_seconds() - cpu
    return {"seconds": seconds, "cpu": cpu, **json.loads(report.read_text(encoding="utf8"))}


def cold_and_warm(workload: Workload, folder: Path, warm_repeats: int) -> Dict:
    """One cold run (empty cache), then ``warm_repeats`` warm runs (median)."""
    cache, cwd = folder / "numba", folder / "cwd"
    cwd.mkdir(parents=True)
    cold = run_process(workload, cache, cwd)
    warm = [run_process(workload, cache, cwd) for _ in range(warm_repeats)]
    return {
        "cold": cold["seconds"],
        "warm": statistics.median(run["seconds"] for run in warm),
        "cold_cpu": cold["cpu"],
        "warm_cpu": None if cold["cpu"] is None else statistics.median(run["cpu"] for run in warm),
        "kernels": cold["kernels"],
        "functions": cold["functions"],
        "compile_s": cold["compile_s"],
        "warm_functions": max(run["functions"] for run in warm),
    }


def workloads(pipelines: Path, components: List[str]) -> List[Workload]:
    """The README's blocks, then loading and running each component's pipeline."""
    names = ["README first example (chain_ner)", "README nested example (nested_ner)"]
    rows = [
        Workload(names[i] if i < 2 else f"README block {i + 1}", block, []) for i, block in enumerate(readme_blocks())
    ]
    return rows + [Workload(f"load and run {name}", LOAD_AND_RUN, [str(pipelines / name)]) for name in components]


def rows_of(results: Dict[str, Dict]) -> List[List]:
    rows = []
    for name, result in results.items():
        bound = 2 * result["warm"] + 3
        rows.append(
            [
                name,
                f"{result['cold']:.1f}",
                f"{result['warm']:.1f}",
                f"{result['cold'] / result['warm']:.2f}",
                f"{bound:.1f}",
                "yes" if result["cold"] <= bound else "no",
                None if result["cold_cpu"] is None else f"{result['cold_cpu']:.1f}",
                None if result["warm_cpu"] is None else f"{result['warm_cpu']:.1f}",
                result["kernels"],
                result["functions"],
                f"{result['compile_s']:.1f}",
                result["warm_functions"],
            ]
        )
    return rows


def bench_cold_start(
    output: Path = typer.Option(..., help="Markdown table to write"),
    components: str = typer.Option(",".join(COMPONENTS), help="Components to load and run, comma-separated"),
    readme: bool = typer.Option(True, help="Also run the README's runnable blocks"),
    warm_repeats: int = typer.Option(2, help="Warm runs of each workload (the median is reported)"),
) -> None:
    """Cold (empty numba cache) and warm seconds of the README's examples and
    of loading and running each component once, as whole processes."""
    chosen = [name for name in components.split(",") if name]
    unknown = sorted(set(chosen) - set(COMPONENTS))
    if unknown:
        raise typer.BadParameter(f"unknown components {unknown}: choose among {list(COMPONENTS)}")
    results = {}
    with tempfile.TemporaryDirectory(prefix="cold-start-") as temporary:
        folder = Path(temporary)
        if chosen:  # built with a cache of its own, so that the timed runs start empty
            subprocess.run(
                [sys.executable, "-c", BUILD, str(folder / "pipelines"), *chosen],
                env={**os.environ, "NUMBA_CACHE_DIR": str(folder / "build-cache"), "PYTHONPATH": str(ROOT)},
                check=True,
                capture_output=True,
            )
        for index, workload in enumerate(workloads(folder / "pipelines", chosen)):
            if workload.args or readme:
                typer.echo(f"{workload.name} ...", err=True)
                results[workload.name] = cold_and_warm(workload, folder / f"run{index}", warm_repeats)
    text = (
        f"# Cold start: the first call from an empty numba cache\n\n{machine()}; each workload a whole new "
        f"process: cold with an empty NUMBA_CACHE_DIR, warm the median of {warm_repeats} runs with the cache "
        "the cold run filled. Bound: cold <= 2 x warm + 3 s. Kernels: the package's numba kernels (one per "
        "signature) the cold run compiled; numba functions: those and numba's own overloads they use (np.empty, "
        "...); compile s: the cold run's seconds compiling them; a warm run compiles none. CPU s: the "
        "process's user + system CPU seconds, less blurred than wall seconds by a busy machine; the counts are "
        "not blurred at all.\n\n"
        + table(
            [
                "workload",
                "cold s",
                "warm s",
                "cold / warm",
                "bound s",
                "within bound",
                "cold CPU s",
                "warm CPU s",
                "kernels compiled cold",
                "numba functions compiled cold",
                "compile s cold",
                "functions compiled warm",
            ],
            rows_of(results),
        )
        + "\n"
    )
    typer.echo(write_file(output, text))
