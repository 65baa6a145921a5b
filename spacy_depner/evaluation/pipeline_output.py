"""A tuned pipeline written out: the output path checked before the work,
the settings to save (those a search found, or the input's own when they
score higher on the data: ``kept_or_tuned``, the rule of find-threshold,
find-penalty and calibrate, and the line that says so: ``choice_line``),
the pipeline saved atomically with them in its component's config."""

from pathlib import Path
from typing import Dict

from ..util.atomic_files import atomic_path


def check_output(output: Path) -> None:
    """A ValueError when ``output`` is a file, or a non-empty folder that is
    not a saved pipeline (it would be replaced)."""
    output = Path(output)
    if output.is_file() or (output.is_dir() and any(output.iterdir()) and not (output / "config.cfg").is_file()):
        raise ValueError(
            f"OUTPUT {output} exists and is not a saved pipeline (no config.cfg): choose another path, or move it away"
        )


def save_pipeline(nlp, name: str, settings: Dict[str, object], output: Path) -> None:
    """Write ``settings`` to the component's config (what ``nlp.config`` and
    config.cfg show, read again at load) and save the pipeline to ``output``
    atomically (a temporary folder renamed, replacing a pipeline there,
    which may be the one loaded)."""
    config = nlp.get_pipe_config(name)
    for key, value in settings.items():
        config[key] = value
    with atomic_path(output) as temporary:
        nlp.to_disk(temporary)


def kept_or_tuned(result: Dict[str, object], tuned: Dict[str, object], force: bool = False) -> Dict[str, object]:
    """The settings to keep after a search: ``tuned``, or none (the input's
    own) when its ``before_f`` is above the search's ``tuned_f`` and not
    ``force``; ``result["chosen"]`` records which ("tuned" or "before")."""
    result["chosen"] = "before" if result["before_f"] > result["tuned_f"] and not force else "tuned"
    return tuned if result["chosen"] == "tuned" else {}


def choice_line(result: Dict[str, object], setting: str, where: str) -> str:
    """One line saying the input's settings were kept (``result["chosen"]``
    is "before") above the tuned value, with both F scores on ``where``."""
    before = result.get("before_decoding", "")
    value = result.get(f"before_{setting}")
    own = " ".join(str(v) for v in (before, "" if value is None else f"{setting} {value}") if v != "")
    return (
        f"kept the input's own decoding ({own}, F {result['before_f']:.4f} on {where}): the best {setting} "
        f"{result[f'tuned_{setting}']} scores lower (F {result['tuned_f']:.4f}); --force saves it anyway"
    )
