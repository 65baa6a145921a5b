"""Long inputs: seconds and peak memory of each entity component on one
huge Doc, every measurement in a fresh Python process.

Inputs, built from the sentences of a CoNLL-U file (gold trees):

* ``real``: the first sentences of the file, about ``tokens`` tokens, joined
  into one Doc (each sentence keeps its own tree and boundaries);
* ``right-branching``: its first ``tokens`` words as a single sentence in which
  token i hangs from i - 1, so that every span is a DGM valid span (the worst
  case of ``dgm_ner``'s default lattice), at ``tokens`` and at the longest
  sentence the components accept by default (``max_sentence_length``, 500).

Each component (spaCy's ``ner`` as the baseline, ``dgm_ner``, ``chain_ner``,
``nested_ner``, ``hypergraph_ner``; default settings and models, behind the
tok2vec of ``bench``) runs in its own child process: it builds and
initializes the pipeline on the first Docs of the ``--conllu``/``--uner``
files, warms up on them, builds the long Doc, and reports the wall time of
``nlp(doc)`` and its peak RSS (``peak_mib``, which includes the pipeline and
the Doc; the idle peak before ``nlp(doc)`` is given too). A component that
refuses the Doc shows the first words of its error instead of a time.

Run as a child: ``python -m experiments.bench_long '<json job>'``.
"""

import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Sequence

from spacy_depner.util.progress import progress

COMPONENTS = ["ner", "dgm_ner", "chain_ner", "nested_ner", "hypergraph_ner"]
DEFAULT_LIMIT = 500  # max_sentence_length of dgm_ner and nested_ner
ERROR_WORDS = 24


def long_doc(vocab, conllu: str, kind: str, tokens: int):
    """The Doc of ``kind`` ("real" or "right-branching") with about ``tokens``
    tokens (exactly that many for "right-branching") from the file's sentences."""
    from spacy.tokens import Doc

    from spacy_depner.readers.conllu import read_conllu, sentences_to_doc

    sentences, count = [], 0
    for sentence in read_conllu(conllu):
        if count >= tokens:
            break
        sentences.append(sentence)
        count += len(sentence.words)
    if count < tokens:
        raise ValueError(f"{conllu} has {count:,} words, fewer than the {tokens:,} asked for")
    if kind == "real":
        return sentences_to_doc(vocab, sentences, with_trees=True)
    words = [word for sentence in sentences for word in sentence.words][:tokens]
    return Doc(vocab, words=words, heads=[0] + list(range(tokens - 1)), deps=["ROOT"] + ["dep"] * (tokens - 1))


def peak_mib() -> float:
    """This process's peak resident memory so far, MiB: VmHWM of
    /proc/self/status where there is one (Linux), else ru_maxrss (KiB on
    Linux), which on Linux starts at the parent's resident size when the
    parent is larger (exec keeps the maximum of the forking process)."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(job: Dict) -> Dict:
    """In the child process: build the pipeline of ``job["component"]``, warm
    it up, then time ``nlp`` on the long Doc."""
    import spacy

    from spacy_depner.readers.uner import create_uner_reader

    from .pipelines import LABELS, build_pipeline

    component = job["component"]
    examples = []
    for example in create_uner_reader(job["conllu"], job["uner"], dependencies="given")(spacy.blank("en")):
        examples.append(example)
        if len(examples) == 200:
            break
    nlp = build_pipeline(component, examples, labels=None if component == "ner" else LABELS, **job["settings"])
    list(nlp.pipe([eg.predicted.copy() for eg in examples]))  # numba compilation, caches
    doc = long_doc(nlp.vocab, job["long_conllu"], job["kind"], job["tokens"])
    result = {"tokens": len(doc), "longest sentence": max(len(s) for s in doc.sents), "idle MiB": round(peak_mib())}
    start = time.perf_counter()
    try:
        doc = nlp(doc)
        result["seconds"] = time.perf_counter() - start
        result["outcome"] = "decoded"
    except ValueError as error:
        result["seconds"] = None
        result["outcome"] = "refused: " + " ".join(str(error).split()[:ERROR_WORDS]) + " ..."
    result["peak MiB"] = round(peak_mib())
    return result


def run_child(job: Dict, timeout: float) -> Dict:
    """``measure(job)`` in a fresh Python process; a crash or a timeout is its outcome."""
    command = [sys.executable, "-m", "experiments.bench_long", json.dumps(job)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=Path(__file__).parents[2])
    except subprocess.TimeoutExpired:
        return {"seconds": None, "outcome": f"no result after {timeout:.0f} s (stopped)"}
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return {"seconds": None, "outcome": f"crashed (exit status {done.returncode}): {last[:120]}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def long_rows(
    conllu: Path, uner: Path, long_conllu: Path, tokens: int, timeout: float, components: Sequence[str] = COMPONENTS
) -> List[Dict]:
    """One row per input and component (default settings; on the longest
    right-branching sentence also ``dgm_ner`` without its limit): longest
    sentence, seconds of ``nlp(doc)`` (None if refused), idle and peak RSS in
    MiB, outcome."""
    runs = [
        (kind, n, component, {})
        for kind, n in [("real", tokens), ("right-branching", DEFAULT_LIMIT), ("right-branching", tokens)]
        for component in components
    ]
    if "dgm_ner" in components:
        runs.append(("right-branching", tokens, "dgm_ner", {"max_sentence_length": None}))
    rows = []
    for kind, n, component, settings in progress(runs, len(runs), "long-input runs", unit="run"):
        job = {
            "component": component,
            "settings": settings,
            "kind": kind,
            "tokens": n,
            "conllu": str(conllu),
            "uner": str(uner),
            "long_conllu": str(long_conllu),
        }
        result = run_child(job, timeout)
        name = component + "".join(f" ({key}: {json.dumps(value)})" for key, value in settings.items())
        rows.append(
            {
                "input": f"{kind}, {result.get('tokens', n):,} tokens",
                "component": name,
                "longest sentence": result.get("longest sentence"),
                "seconds": result["seconds"],
                "idle RSS (MiB)": result.get("idle MiB"),
                "peak RSS (MiB)": result.get("peak MiB"),
                "outcome": result["outcome"],
            }
        )
    return rows


def long_section(conllu: Path, uner: Path, long_conllu: Path, tokens: int, timeout: float) -> str:
    """The markdown section of ``bench``: title and table."""
    from ..kit.tables import records_table

    return (
        f"## Long inputs: one Doc from {long_conllu.name}, each component in a fresh process "
        f"(seconds of nlp(doc); peak RSS, and idle before nlp(doc))\n\n"
        + records_table(long_rows(conllu, uner, long_conllu, tokens, timeout))
    )


if __name__ == "__main__":
    print(json.dumps(measure(json.loads(sys.argv[1]))))
