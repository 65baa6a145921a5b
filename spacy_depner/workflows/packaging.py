"""A trained pipeline as a pip-installable package (``spacy package``: an
sdist, and optionally a wheel), its evaluation in the meta.

The meta that ``spacy package`` writes has the requirement on spacy-depner
(whose entry points register the components, so the package needs no code
of its own), the dev scores that ``spacy train`` weighed, the P/R/F of the
evaluations given (``python -m spacy_depner evaluate --output``'s JSON) as
``performance`` and in the ``notes`` of its README, and the sources and
licence; a LICENSES_SOURCES file in the package lists them.
"""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import srsly
from spacy.util import get_minor_version_range, load_config

MEASURES = ("p", "r", "f")


def non_commercial(licence: Optional[str]) -> bool:
    """Whether a licence (such as CC BY-NC-SA 4.0) forbids commercial use."""
    return "-NC" in (licence or "")


def check_saved_pipeline(pipeline: Path) -> None:
    """A ValueError unless PIPELINE is a saved pipeline directory."""
    if not (Path(pipeline) / "meta.json").is_file() or not (Path(pipeline) / "config.cfg").is_file():
        raise ValueError(
            f"{pipeline} is not a saved pipeline (no meta.json and config.cfg): give a directory such "
            "as spacy train's model-best"
        )


def training_scores(pipeline: Path) -> Dict[str, Tuple[float, float]]:
    """The dev scores in PIPELINE's meta.json ``performance`` that its
    config's [training.score_weights] weighs (not null, not per type):
    {name: (score, weight)}."""
    performance = srsly.read_json(pipeline / "meta.json").get("performance", {})
    weights = load_config(pipeline / "config.cfg", interpolate=False)["training"]["score_weights"]
    return {
        name: (performance[name], weight)
        for name, weight in weights.items()
        if weight is not None and isinstance(performance.get(name), (int, float))
    }


def evaluation_scores(result: Dict, where: str) -> Dict[str, float]:
    """The P/R/F of an evaluation JSON (``evaluate`` / ``evaluate-nested --output``)."""
    missing = [measure for measure in MEASURES if not isinstance(result.get(measure), (int, float))]
    if missing:
        raise ValueError(
            f"{where} has no {', '.join(missing)}: give the JSON that "
            "`python -m spacy_depner evaluate --output` (or evaluate-nested) writes"
        )
    return {measure: float(result[measure]) for measure in MEASURES}


def evaluation_notes(scores: Dict[str, Dict[str, float]]) -> str:
    """The README lines of the P/R/F of each split (percent)."""
    return "\n".join(
        f"- {split}: F1 {s['f'] * 100:.2f}, P {s['p'] * 100:.2f}, R {s['r'] * 100:.2f} (%)"
        for split, s in scores.items()
    )


def package_meta(
    pipeline: Path,
    name: str,
    version: str,
    performance: Dict,
    notes: str,
    description: Optional[str],
    licence: Optional[str] = None,
    sources: Optional[List[Dict]] = None,
) -> Dict:
    """The meta.json that ``spacy package --meta-path`` lays over PIPELINE's
    (spaCy adds its labels, components and the requirements its config
    implies): PERFORMANCE after the dev scores that training weighed, NOTES,
    and the licence and sources (default: those of PIPELINE's meta.json)."""
    import spacy_depner

    check_saved_pipeline(pipeline)
    own = srsly.read_json(pipeline / "meta.json")
    lang = own.get("lang", "en")
    licence = licence or own.get("license") or None
    text = description or own.get("description") or f"spacy-depner pipeline {name}."
    if non_commercial(licence) and "Non-commercial" not in text:
        text += f" Non-commercial use only: licensed {licence}."
    return {
        "lang": lang,
        "name": name[len(lang) + 1 :] if name.startswith(lang + "_") else name,
        "version": version,
        "description": text,
        "license": licence or "",
        "requirements": [f"spacy-depner{get_minor_version_range(spacy_depner.__version__)}"],
        "sources": sources if sources is not None else own.get("sources", []),
        "performance": {**{key: score for key, (score, _) in training_scores(pipeline).items()}, **performance},
        "notes": notes,
    }


def licences_text(meta: Dict) -> str:
    """LICENSES_SOURCES: the package's licence and every source's."""
    lines = [
        f"{meta['lang']}_{meta['name']} {meta['version']}: licence {meta['license'] or 'not given'}"
        + (", the most restrictive of its sources." if meta["sources"] else "."),
        *([f"Non-commercial use only: licensed {meta['license']}."] if non_commercial(meta["license"]) else []),
    ]
    if meta["sources"]:
        lines += ["", "Sources:"]
        lines += [
            f"- {s.get('name', '?')}: {s.get('license', '?')}; {s.get('author', '?')}; {s.get('url', '?')}"
            for s in meta["sources"]
        ]
    return "\n".join(lines) + "\n"


def build_package(pipeline: Path, output: Path, meta: Dict, wheel: bool) -> List[Path]:
    """``spacy package`` of PIPELINE with META (and a LICENSES_SOURCES file)
    into OUTPUT: the sdist, and with WHEEL the wheel that pip builds from it
    (offline, no build isolation); their paths."""
    from spacy.cli.package import package

    check_saved_pipeline(pipeline)
    output.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as staging:
        staged = Path(staging) / "pipeline"
        shutil.copytree(pipeline, staged)
        (staged / "LICENSES_SOURCES").write_text(licences_text(meta), encoding="utf8")
        srsly.write_json(Path(staging) / "meta.json", meta)
        package(
            staged,
            output,
            meta_path=Path(staging) / "meta.json",
            create_sdist=True,
            require_parent=True,
            force=True,
            silent=True,
        )
    full = f"{meta['lang']}_{meta['name']}-{meta['version']}"
    built = [output / full / "dist" / f"{full}.tar.gz"]
    if not built[0].is_file():
        raise RuntimeError(f"spacy package wrote no {built[0]}")
    if wheel:
        command = [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--wheel-dir",
            str(built[0].parent),
            str(built[0]),
        ]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        built += sorted(built[0].parent.glob(f"{full}-*.whl"))
    return built
