"""The other pass of a nested space compiled in a background process from
an empty numba cache (spacy_depner/numba_runtime/background_compile.py): the
main process loads it from the cache instead of compiling it, gets the same
values, and leaves no process or lock behind; the switch, one CPU and a
lock held by another process start nothing."""

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from spacy_depner.numba_runtime import background_compile
from spacy_depner.structures.nested._mentions import RUNNER

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, os, sys, time
import numpy as np
from numba.core import event
from spacy_depner.numba_runtime import background_compile
from spacy_depner.structures.nested._mentions import RUNNER
from spacy_depner.structures.nested import _mentions
from spacy_depner.structures.nested.drivers import DRIVERS

compiled = []
class Listener(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__name__)
    def on_end(self, ev):
        pass
event.register("numba:compile", Listener())

rng = np.random.default_rng(0)
offsets = np.array([0, 4, 9])
scores = rng.normal(size=(int(_mentions.dense_span_offsets(offsets)[-1]), 2))
best, labels = _mentions.viterbi(scores, offsets, "quadratic")
child = background_compile._running.get(("marginals", "quadratic"))
log_z, marginals = _mentions.marginals(scores, offsets, "quadratic")
lock = background_compile._locks.get(("marginals", "quadratic"))
print(json.dumps({
    "started": child is not None,
    "child_pid": None if child is None else child.pid,
    "child_returncode": None if child is None else child.poll(),
    "lock": None if lock is None else str(lock),
    "compiled": compiled,
    "cache_hits": sum(DRIVERS["quadratic"][1].scaled.stats.cache_hits.values()),
    "log_z": log_z.tolist(),
    "marginals": marginals.tolist(),
    "labels": labels.tolist(),
}))
"""


def run_script(folder: Path, switch: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=folder,
        env={
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "NUMBA_CACHE_DIR": str(folder / f"cache-{switch}"),
            background_compile.SWITCH: switch,
        },
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.slow
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one CPU: nothing is compiled in the background")
def test_the_marginals_compiled_beside_viterbi_load_from_the_cache_with_the_same_values(tmp_path):
    background = run_script(tmp_path, "1")
    assert background["started"] and background["child_returncode"] == 0
    assert "scaled_marginals" not in background["compiled"] and background["cache_hits"] == 1
    assert "viterbi" in background["compiled"]  # the main process compiled the pass it called first
    assert not Path(background["lock"]).exists()
    with pytest.raises(ProcessLookupError):
        os.kill(background["child_pid"], 0)
    alone = run_script(tmp_path, "0")
    assert not alone["started"] and "scaled_marginals" in alone["compiled"] and alone["cache_hits"] == 0
    for key in ("log_z", "marginals", "labels"):
        assert background[key] == alone[key]


def fake_dispatcher(folder: Path, compiled: bool = False):
    """A dispatcher as ``needs_compiling`` reads it: its overloads and its cache index."""
    return SimpleNamespace(
        overloads={"sig": None} if compiled else {},
        _cache=SimpleNamespace(_cache_file=SimpleNamespace(_index_path=str(folder / "kernel.nbi"))),
    )


def test_nothing_starts_when_switched_off_compiled_cached_or_locked(tmp_path, monkeypatch):
    started = []
    monkeypatch.setattr(background_compile.subprocess, "Popen", lambda *a, **k: started.append(a))
    monkeypatch.setattr(background_compile, "_running", {})
    monkeypatch.setattr(background_compile, "_locks", {})
    monkeypatch.setenv(background_compile.SWITCH, "0")

    def start(dispatcher):
        return background_compile.start("viterbi", "cyk", dispatcher, RUNNER)

    assert not start(fake_dispatcher(tmp_path))
    monkeypatch.setenv(background_compile.SWITCH, "1")
    assert not start(fake_dispatcher(tmp_path, compiled=True))
    (tmp_path / "kernel.nbi").touch()
    assert not start(fake_dispatcher(tmp_path))
    (tmp_path / "kernel.nbi").unlink()
    (tmp_path / "kernel.nbi.compiling").touch()  # another process compiles it now
    assert not start(fake_dispatcher(tmp_path))
    monkeypatch.setattr(background_compile.os, "cpu_count", lambda: 1)
    (tmp_path / "kernel.nbi.compiling").unlink()
    assert not start(fake_dispatcher(tmp_path))
    assert started == [] and not (tmp_path / "kernel.nbi.compiling").exists()
    monkeypatch.setattr(background_compile.os, "cpu_count", lambda: 2)
    assert start(fake_dispatcher(tmp_path))
    assert len(started) == 1 and (tmp_path / "kernel.nbi.compiling").exists()
    assert started[0][0][-3:] == ["viterbi", "cyk", str(tmp_path / "kernel.nbi.compiling")]
    assert not start(fake_dispatcher(tmp_path))  # one per process
