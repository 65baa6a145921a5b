"""A config whose encoder is a torch layer says, in its header, which extra brings torch: without it spaCy's
commands end in a bare ModuleNotFoundError (thinc imports torch when it builds the layer)."""

import re
from pathlib import Path

from experiments.configs.compose import composed_paths

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def header(path: Path) -> str:
    lines = path.read_text(encoding="utf8").splitlines()
    return "\n".join(lines[: next(i for i, line in enumerate(lines) if not line.startswith("#"))])


def test_every_config_with_a_torch_layer_names_the_project_extra():
    with_torch = [p for p in composed_paths(CONFIGS) if re.search(r'"spacy\.Torch', p.read_text(encoding="utf8"))]
    assert {p.stem for p in with_torch} >= {"genia_nested", "genia_hypergraph", "genia_spancat"}
    for path in with_torch:
        assert 'pip install "spacy-depner[project]"' in header(path), path
        assert "ModuleNotFoundError" in header(path), path
    for path in set(composed_paths(CONFIGS)) - set(with_torch):
        assert "spacy-depner[project]" not in header(path), path
