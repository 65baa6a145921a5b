"""The import graph of the repository, read from the source (every import,
also those inside functions): no module imports a layer below its own, in
the order docs/architecture.md gives, and no circle joins modules. Layers
from the inside out: numba_runtime, structures, Doc arrays, ml, pipeline, readers,
evaluation, inference, workflows, cli, then experiments (not shipped); ``util`` may be
imported by every layer; the package's own ``__init__``/``__main__`` sit on
top."""

import ast
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
