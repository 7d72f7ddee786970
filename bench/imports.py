"""Import structure of the package: the circles between its subpackages and the imports that
run back up the layers, as ``lint-imports`` (pyproject's contracts) would see them.

    python bench/imports.py            # counts, then each circle and upward import

A circle is a strongly connected group of subpackages (``noisegauge.runner`` and
``noisegauge.stress`` importing each other directly or through others); the ``modules``
figure counts the modules of ``noisegauge`` that sit in an import cycle of their own.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import grimp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))


def _sccs(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one node."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def _package(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2])


def main() -> None:
    g = grimp.build_graph("noisegauge", cache_dir=None)
    modules = sorted(g.modules)
    by_module: dict[str, set[str]] = defaultdict(set)
    by_package: dict[str, set[str]] = defaultdict(set)
    for m in modules:
        for imported in g.find_modules_directly_imported_by(m):
            by_module[m].add(imported)
            a, b = _package(m), _package(imported)
            if a != b:
                by_package[a].add(b)
    package_circles = _sccs(by_package)
    module_circles = _sccs(by_module)
    print(f"modules {len(modules)}")
    print(f"circles between subpackages {len(package_circles)}")
    for c in package_circles:
        print("  " + " <-> ".join(p.removeprefix("noisegauge.") for p in c))
    print(f"circles between modules {len(module_circles)} "
          f"(modules in them: {sum(len(c) for c in module_circles)})")
    for c in module_circles:
        print(f"  {len(c)}: " + ", ".join(p.removeprefix("noisegauge.") for p in c))


if __name__ == "__main__":
    main()
