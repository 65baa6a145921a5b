"""The import graph of the repository, read from the source (every import,
also those inside functions): no module imports a layer below its own, in
the order docs/architecture.md gives, and no circle joins modules. Layers
from the inside out: numba_runtime, structures, Doc arrays, ml, pipeline, readers,
evaluation, inference, workflows, cli, then experiments (not shipped); ``util`` may be
imported by every layer; the package's own ``__init__``/``__main__`` sit on
top."""

import ast
import re
from pathlib import Path
from typing import Dict, Set

ROOT = Path(__file__).parents[1]
LAYERS = [
    "numba_runtime",
    "structures",
    "doc_arrays",
    "ml",
    "pipeline",
    "readers",
    "evaluation",
    "inference",
    "workflows",
    "serving",
    "cli",
    "experiments",
]
ANYWHERE = {"util"}


def module_files() -> Dict[str, Path]:
    """{dotted module name: its file} of spacy_depner and experiments (a package by its __init__)."""
    files = {}
    for package in ("spacy_depner", "experiments"):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return files


def imported(name: str, path: Path, modules: Set[str]) -> Set[str]:
    """The modules of ``modules`` that ``name`` (its file ``path``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def graph() -> Dict[str, Set[str]]:
    files = module_files()
    return {name: imported(name, path, set(files)) for name, path in files.items()}


def layer(name: str):
    """The layer index of a module, None for one on top (the packages' __init__/__main__) or in util."""
    parts = name.split(".")
    if parts[0] == "experiments":
        return LAYERS.index("experiments")
    if len(parts) < 2 or parts[1] in ANYWHERE or parts[1] not in LAYERS:
        return None
    return LAYERS.index(parts[1])


def test_no_import_points_down_the_layers():
    upward = []
    for name, targets in graph().items():
        own = layer(name)
        for target in targets:
            theirs = layer(target)
            if own is not None and theirs is not None and theirs > own:
                upward.append(f"{name} ({LAYERS[own]}) imports {target} ({LAYERS[theirs]})")
            if name.split(".")[0] == "spacy_depner" and target.split(".")[0] == "experiments":
                upward.append(f"{name} imports {target}: the library never imports experiments")
            if target.split(".")[-1] == "__main__":
                upward.append(f"{name} imports {target}")
    assert upward == []


def test_no_circle_in_the_import_graph():
    """Tarjan's strongly connected components over the modules; a package's
    ``__init__`` importing its own submodules is left out (they import it
    implicitly)."""
    edges = {name: {t for t in targets if not name.startswith(t + ".")} for name, targets in graph().items()}
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    assert circles == []


def test_the_graph_is_read():
    """The reader finds imports of every kind (relative, absolute, inside functions)."""
    edges = graph()
    assert "spacy_depner.structures.protocol" in edges["spacy_depner.structures.chain.structure"]
    assert "spacy_depner.pipeline.entity_pipe" in edges["spacy_depner.pipeline.dgm_ner"]
    assert (
        layer("spacy_depner.cli.app")
        > layer("spacy_depner.pipeline.dgm_ner")
        > layer("spacy_depner.structures.protocol")
    )


def architecture_module_map(text: str) -> Dict[str, Set[str]]:
    """{folder under spacy_depner/: the module files the code block of docs/architecture.md's "Where things live"
    names in it}: a line ``  NAME/`` opens a folder (four spaces: a folder inside the last one), the lines
    indented below it continue it."""
    block = text.split("## Where things live", 1)[1].split("```", 2)[1]
    folders: Dict[str, Set[str]] = {}
    outer, current = "", None
    for line in block.splitlines():
        opened = re.match(r"^( {2}| {4})([\w]+)/\s", line + " ")
        if opened and len(opened.group(1)) == 2:
            outer = current = opened.group(2)
        elif opened:
            current = f"{outer}/{opened.group(2)}"
        elif not line.startswith("  ") or not line.strip():
            current = None if not line.startswith(" ") else current
        if current is not None:
            folders.setdefault(current, set()).update(re.findall(r"\b(\w+\.py)\b", line))
    return folders


def test_the_architecture_page_names_every_module():
    """docs/architecture.md's module map names every module of the library, in its folder."""
    named = architecture_module_map((ROOT / "docs" / "architecture.md").read_text(encoding="utf8"))
    missing = []
    for path in sorted((ROOT / "spacy_depner").rglob("*.py")):
        folder = path.parent.relative_to(ROOT / "spacy_depner").as_posix()
        if path.name in ("__init__.py", "__main__.py") and folder in (".", ""):
            continue
        if path.name == "__init__.py" or path.name in named.get(folder, set()):
            continue
        missing.append(f"{folder}/{path.name}")
    assert missing == [], f"add them to the module map of docs/architecture.md: {missing}"


def test_the_module_map_is_read_per_folder():
    text = "## Where things live\n\n```\nspacy_depner/\n  ml/   a.py, b.py\n        c.py\n    sub/  d.py\n  cli/  e.py\n```\n"
    assert architecture_module_map(text) == {"ml": {"a.py", "b.py", "c.py"}, "ml/sub": {"d.py"}, "cli": {"e.py"}}
