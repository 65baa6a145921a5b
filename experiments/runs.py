"""Training runs of the studies: ``spacy train`` commands, run one thread
each, several at a time, their output to log files."""
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Dict, List

from tqdm import tqdm

from .outputs import write_json


def train_command(config: Path, output: Path, data: Path, steps: int, limit: int, overrides: List[str]) -> List[str]:
    """``spacy train CONFIG`` to OUTPUT on the data directory DATA, ``steps``
    steps (evaluated four times), ``limit`` train and dev items (0: all)."""
    return [sys.executable, "-m", "spacy", "train", str(config), "--output", str(output), "--paths.data", str(data),
            "--training.max_steps", str(steps), "--training.eval_frequency", str(max(1, steps // 4)),
            "--corpora.train.limit", str(limit), "--corpora.dev.limit", str(limit), *overrides]


def run_logged(command: List[str], log: Path) -> float:
    """Run a command with one thread, its output to ``log``; its wall time in seconds."""
    log.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    start = time.perf_counter()
    with log.open("w") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed (exit {done.returncode}); see {log}")
    return time.perf_counter() - start


def run_all(runs: Dict[str, List[str]], output: Path, jobs: int, seconds_file: str = "train_seconds.json",
            **settings) -> Dict[str, float]:
    """Run the commands ``jobs`` at a time (``run_logged``, logs to
    OUTPUT/logs/NAME.log), with a bar of the models done / total and its
    ETA on stderr and each model's log path; write the ``settings`` and the wall seconds per
    name to OUTPUT/SECONDS_FILE and return those seconds."""
    logs = {name: output / "logs" / f"{name}.log" for name in runs}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(run_logged, command, logs[name]): name for name, command in runs.items()}
        bar = tqdm(total=len(runs), desc="models trained", unit="model", dynamic_ncols=True)
        for name in runs:
            bar.write(f"training {name}: log {logs[name]}")
        seconds = {}
        for future in as_completed(futures):
            name = futures[future]
            seconds[name] = round(future.result(), 1)
            bar.update(1)
            bar.write(f"done {name} in {seconds[name]:.0f} s ({logs[name]})")
        bar.close()
    seconds = {name: seconds[name] for name in runs}
    write_json(output / seconds_file, {**settings, "seconds": seconds})
    return seconds
