"""Check the package's shape: imports point only downward, no cycles, no private names across modules,
no module over the line limit.

    python scripts/check_layers.py [--max-lines 600]

The layers are listed below, top first; a module may import modules of its own layer or of layers below it,
never above. Within a layer the imports must not form a cycle. Every import counts, including imports inside
functions and under ``if TYPE_CHECKING:`` (a hidden import is still a dependency). A name that starts with one
underscore belongs to its module: no other module imports it. Private modules (``_thrift``, ``_kernels``) have
one door each. The graph is read with :mod:`ast`; nothing is imported or run.
"""
from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "pqbloom"

#: top first; a prefix names a module or a subpackage (``pqbloom.file`` covers ``pqbloom.file.*``)
LAYERS: list[list[str]] = [
    ["pqbloom", "pqbloom.spark", "pqbloom.cli"],
    ["pqbloom.api"],
    ["pqbloom.scan"],
    ["pqbloom.file"],
    ["pqbloom.table"],
    ["pqbloom.statistics", "pqbloom.schema"],
    ["pqbloom.encodings", "pqbloom.compression", "pqbloom.bloom", "pqbloom.xxhash64", "pqbloom.crypto",
     "pqbloom.kernels", "pqbloom.kernels_reference", "pqbloom.buffers"],
    ["pqbloom.format", "pqbloom.io", "pqbloom.limits", "pqbloom.arrays"],
    ["pqbloom.errors", "pqbloom._version"],
]
#: private module -> the modules allowed to import it (``pqbloom`` itself: any module of the package)
DOORS: dict[str, tuple[str, ...]] = {"pqbloom._thrift": ("pqbloom.format",), "pqbloom._kernels": ("pqbloom.kernels", "pqbloom.buffers"),
                                     "pqbloom._version": ("pqbloom",)}
GENERATED = ("pqbloom._thrift",)


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def resolve(mod: str, is_pkg: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def collect(modules: dict[str, Path]) -> tuple[dict[str, set[str]], list[str]]:
    """module -> imported package modules; and the private-name violations."""
    graph: dict[str, set[str]] = {m: set() for m in modules}
    private: list[str] = []
    for mod, path in modules.items():
        is_pkg = path.name == "__init__.py"
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            targets: list[tuple[str, str | None]] = []
            if isinstance(node, ast.Import):
                targets = [(a.name, None) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                src = resolve(mod, is_pkg, node)
                for a in node.names:
                    sub = f"{src}.{a.name}"
                    targets.append((sub, None) if sub in modules else (src, a.name))
            for target, name in targets:
                if not target.startswith("pqbloom"):
                    continue
                if any(target == g or target.startswith(g + ".") for g in GENERATED):
                    doors = DOORS.get(target.split(".")[0] + "." + target.split(".")[1], ())
                    if not any(mod == d or mod.startswith(d + ".") for d in doors):
                        private.append(f"{mod}:{node.lineno} imports private module {target}")
                    continue
                real = target
                while real not in modules and "." in real:
                    real = real.rsplit(".", 1)[0]
                if real == mod:
                    continue
                graph[mod].add(real)
                if name and name.startswith("_") and not name.startswith("__"):
                    private.append(f"{mod}:{node.lineno} imports private name {name!r} from {real}")
                for seg in real.split(".")[1:]:
                    if seg.startswith("_") and not seg.startswith("__"):
                        doors = DOORS.get(real.split(seg)[0] + seg, ())
                        if not any(mod == d or mod.startswith(d + ".") for d in doors):
                            private.append(f"{mod}:{node.lineno} imports private module {real}")
                        break
    return graph, private


def layer_of(mod: str) -> int | None:
    for i, layer in enumerate(LAYERS):
        for prefix in layer:
            if mod == prefix or mod.startswith(prefix + "."):
                return i
    return None


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        work = [(v, iter(sorted(graph[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            for w in it:
                if w not in graph:
                    continue
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-lines", type=int, default=600)
    args = ap.parse_args()
    modules = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))
               if not any(module_name(p).startswith(g) for g in GENERATED)}
    problems: list[str] = []
    for mod, path in modules.items():
        n = len(path.read_text().splitlines())
        if n > args.max_lines:
            problems.append(f"{mod} has {n} lines (limit {args.max_lines})")
    graph, private = collect(modules)
    problems += private
    for comp in cycles(graph):
        problems.append("import cycle: " + " -> ".join(comp))
    if LAYERS:
        for mod, deps in graph.items():
            lm = layer_of(mod)
            if lm is None:
                problems.append(f"{mod} is in no layer")
                continue
            for d in sorted(deps):
                ld = layer_of(d)
                if ld is not None and ld < lm:
                    problems.append(f"{mod} (layer {lm}) imports {d} (layer {ld}, above it)")
    for p in problems:
        print(p)
    print(f"{len(modules)} modules, {sum(len(v) for v in graph.values())} imports: "
          f"{'OK' if not problems else f'{len(problems)} problem(s)'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
