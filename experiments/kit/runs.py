"""Training runs of the studies: ``spacy train`` commands, run one thread
each, several at a time, their output to log files; with seeds, every
seed's runs in its own folder (``seeds.seed_folder``)."""

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Dict, Hashable, List, Optional, Tuple

from tqdm import tqdm

from .outputs import write_json
from .seeds import seed_folder


def train_command(
    config: Path,
    output: Path,
    data: Path,
    steps: int,
    limit: int,
    overrides: List[str],
    seed: Optional[int] = None,
    eval_frequency: Optional[int] = None,
) -> List[str]:
    """``spacy train CONFIG`` to OUTPUT on the data directory DATA, at most
    ``steps`` steps, evaluated every ``eval_frequency`` steps and at least four
    times (the default: four times), ``limit`` train and dev items (0: all),
    with ``[system] seed = seed`` if given (the configs' ``[training] seed``
    is ``${system.seed}``)."""
    seeded = [] if seed is None else ["--system.seed", str(seed)]
    every = max(1, steps // 4) if not eval_frequency else max(1, min(eval_frequency, steps // 4))
    return [
        sys.executable,
        "-m",
        "spacy",
        "train",
        str(config),
        "--output",
        str(output),
        "--paths.data",
        str(data),
        "--training.max_steps",
        str(steps),
        "--training.eval_frequency",
        str(every),
        "--corpora.train.limit",
        str(limit),
        "--corpora.dev.limit",
        str(limit),
        *seeded,
        *overrides,
    ]


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


def finished(folder: Path, name: str) -> bool:
    """Whether ``spacy train`` finished the run NAME of ``run_seeds`` in a
    seed's FOLDER: it writes FOLDER/NAME/model-last at every evaluation, and
    its closing line "Saved pipeline to output directory" to the run's log only at the end."""
    log = folder / "logs" / f"{name}.log"  # run_seeds's log of NAME
    return (
        (folder / name / "model-last").is_dir()
        and log.is_file()
        and "Saved pipeline to output directory" in log.read_text(encoding="utf8", errors="replace")
    )


def run_pool(runs: Dict[Hashable, Tuple[str, List[str], Path]], jobs: int) -> Dict[Hashable, float]:
    """Run ``runs[key] = (title, command, log)`` ``jobs`` at a time
    (``run_logged``), with a bar of the runs done / total and its ETA on
    stderr and each run's log path; the wall seconds per key."""
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(run_logged, command, log): key for key, (_, command, log) in runs.items()}
        bar = tqdm(total=len(runs), desc="models trained", unit="model", dynamic_ncols=True)
        for title, _, log in runs.values():
            bar.write(f"training {title}: log {log}")
        seconds = {}
        for future in as_completed(futures):
            key = futures[future]
            title, _, log = runs[key]
            seconds[key] = round(future.result(), 1)
            bar.update(1)
            bar.write(f"done {title} in {seconds[key]:.0f} s ({log})")
        bar.close()
    return seconds


def run_all(
    runs: Dict[str, List[str]], output: Path, jobs: int, seconds_file: str = "train_seconds.json", **settings
) -> Dict[str, float]:
    """Run the commands ``jobs`` at a time (``run_pool``, logs to
    OUTPUT/logs/NAME.log); write the ``settings`` and the wall seconds per
    name to OUTPUT/SECONDS_FILE and return those seconds."""
    done = run_pool({name: (name, command, output / "logs" / f"{name}.log") for name, command in runs.items()}, jobs)
    seconds = {name: done[name] for name in runs}
    write_json(output / seconds_file, {**settings, "seconds": seconds})
    return seconds


def run_seeds(
    runs: Dict[int, Dict[str, List[str]]],
    output: Path,
    jobs: int,
    seconds_file: str = "train_seconds.json",
    resume: bool = False,
    **settings,
) -> Dict[str, Dict[str, Optional[float]]]:
    """Run the commands of every seed, ``runs[seed][name]``, all (seed,
    name) runs ``jobs`` at a time (``run_pool``, logs to
    OUTPUT/seed_<s>/logs/NAME.log); write the ``settings``, the seeds and
    the wall seconds per seed and name (``{"seconds": {"0": {NAME: s}}}``)
    to OUTPUT/SECONDS_FILE and return those seconds. With ``resume``, a run
    that ``finished`` in its seed folder is kept, not run again; its seconds
    are those of the previous OUTPUT/SECONDS_FILE (None if it has none), and
    the file keeps the seconds of the runs not named here, read when it is
    written (so resumed runs of different models may share a folder)."""
    path = output / seconds_file
    previous = json.loads(path.read_text())["seconds"] if resume and path.is_file() else {}
    flat = {
        (seed, name): (f"{name} (seed {seed})", command, seed_folder(output, seed) / "logs" / f"{name}.log")
        for seed, named in runs.items()
        for name, command in named.items()
        if not (resume and finished(seed_folder(output, seed), name))
    }
    done = run_pool(flat, jobs) if flat else {}
    seconds = {
        str(seed): {
            name: done[seed, name] if (seed, name) in done else previous.get(str(seed), {}).get(name) for name in named
        }
        for seed, named in runs.items()
    }
    if resume and path.is_file():  # the runs of other models, or written meanwhile by another resumed run, are kept
        recorded = json.loads(path.read_text())
        seeds = sorted(set(runs) | {int(seed) for seed in recorded["seconds"]})
        seconds = {
            str(seed): {**recorded["seconds"].get(str(seed), {}), **seconds.get(str(seed), {})} for seed in seeds
        }
    else:
        seeds = sorted(runs)
    write_json(path, {**settings, "seeds": seeds, "seconds": seconds})
    return seconds
