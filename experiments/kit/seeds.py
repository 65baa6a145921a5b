"""The training seeds of the studies: the ``--seeds`` lists, the folder of
each seed's pipelines (``MODELS/seed_<s>/<model>``), and the seeds a models
folder holds. JSON files key their per-seed results by the seed as text
(``"0"``), as JSON keys are text."""

import re
from pathlib import Path
from typing import List, Optional, Sequence

SEED_FOLDER = re.compile(r"seed_(\d+)")


def parse_seeds(text: str, option: str = "--seeds") -> List[int]:
    """``"0,1,2"`` as [0, 1, 2]: distinct non-negative integers, sorted."""
    parts = [part.strip() for part in str(text).split(",")]
    if not all(part.isdigit() for part in parts):
        raise ValueError(f"{option} {text!r}: give non-negative integers separated by commas, e.g. {option} 0,1,2")
    seeds = [int(part) for part in parts]
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"{option} {text!r} lists a seed twice: give each seed once")
    return sorted(seeds)


def seed_folder(models: Path, seed: int) -> Path:
    """The folder of the pipelines (and logs) that seed ``seed`` trained: MODELS/seed_<seed>."""
    return Path(models) / f"seed_{seed}"


def seeds_present(models: Path) -> List[int]:
    """The seeds whose folder MODELS/seed_<s> exists, sorted."""
    if not Path(models).is_dir():
        return []
    return sorted(
        int(match.group(1))
        for path in Path(models).iterdir()
        if path.is_dir() and (match := SEED_FOLDER.fullmatch(path.name))
    )


def chosen_seeds(models: Path, seeds: Optional[str] = None) -> List[int]:
    """The seeds ``seeds`` ("0,1,2"), each of which must have its folder in
    MODELS; without ``seeds``, every seed whose folder MODELS holds."""
    present = seeds_present(models)
    if seeds is None:
        if not present:
            raise ValueError(
                f"{models} holds no seed_<s> folder of trained pipelines: run the study's train "
                "command first (it writes MODELS/seed_<s>/<model>), or check --models"
            )
        return present
    chosen = parse_seeds(seeds)
    missing = [seed for seed in chosen if seed not in present]
    if missing:
        raise ValueError(
            f"--seeds {seeds}: no pipelines of seed {', '.join(map(str, missing))} in {models} "
            f"(it holds {', '.join(map(str, present)) or 'no seed'}): train those seeds first "
            "(train --seeds), or leave out --seeds to use the seeds present"
        )
    return chosen


def seed_keys(seeds: List[int]) -> List[str]:
    """The seeds as the keys of the JSON files ("0", "1", ...)."""
    return [str(seed) for seed in seeds]


def pick_names(chosen: Optional[str], known: Sequence[str], option: str = "--models") -> List[str]:
    """The names of ``chosen`` ("all" or None: every one; else names
    separated by commas) among ``known``, in the order of ``known``; an
    unknown or empty choice is a ValueError naming the option."""
    if chosen is None or chosen.strip() == "all":
        return list(known)
    names = [name.strip() for name in chosen.split(",") if name.strip()]
    for name in names:
        if name not in known:
            raise ValueError(f"{option}: no model {name!r} in the study; give some of {', '.join(known)}, or all")
    if not names:
        raise ValueError(f"{option} is empty: give model names separated by commas, or all")
    return [name for name in known if name in names]


def trained_names(models: Path, seeds: List[int], names: Sequence[str], command: str = "train") -> List[str]:
    """The names of ``names`` whose pipeline (MODELS/seed_<s>/NAME/model-best)
    every seed of ``seeds`` holds, in the order of ``names`` (a study trained
    with --models holds some only). A model that some of the seeds hold and
    others do not is a ValueError, and so is a folder that holds none."""
    present = []
    for name in names:
        held = [seed for seed in seeds if (seed_folder(models, seed) / name / "model-best").is_dir()]
        if held and len(held) < len(seeds):
            missing = ", ".join(str(seed) for seed in seeds if seed not in held)
            raise ValueError(
                f"{models}: {name} is trained for seed {', '.join(map(str, held))} but not for seed {missing}: "
                f"train it for those seeds too ({command} --seeds), or pass --seeds to use the seeds that have it"
            )
        if held:
            present.append(name)
    if not present:
        raise ValueError(f"{models}: no trained model of the study in seed_{seeds[0]}: run `{command}` first")
    return present
