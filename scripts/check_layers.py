"""Check the package's shape: imports point only downward, no cycles, no private names across modules,
no module over the line limit.

    python scripts/check_layers.py [--max-lines 600]      # exit 1 on any problem
    python scripts/check_layers.py --print-layers         # the layout list of docs/layout.md, from LAYERS
    python scripts/check_layers.py --update-docs          # rewrite that list in docs/layout.md

The layers are listed below, top first; a module may import modules of its own layer or of layers below it,
never above. Every module of the package is placed: by the longest entry of :data:`LAYERS` that is its name
or a package above it (the entry ``pqbloom`` places the package's ``__init__`` only, so a new top-level module
needs an entry of its own). A module no entry places is a problem, as is an entry that places nothing.

Every import counts, including imports inside functions and under ``if TYPE_CHECKING:`` (a hidden import is
still a dependency), loads by name (``importlib.import_module``, ``__import__``: a constant string, or an
f-string over a literal list, is followed; a load that cannot be resolved is a problem unless
:data:`DYNAMIC_LOADS` names it with a reason) and the ``cimport``/``import`` lines of the Cython sources
(``.pyx``, ``.pxd``: each is a module of its own, placed like the others; a ``cimport`` of a module that is
neither in the package nor a C namespace Cython ships is a problem).

Thrift (:data:`THRIFT_HOME`, :data:`STRUCT_HOLDERS`; the reason is in ``docs/architecture.md``): only
``pqbloom.format`` builds Thrift structs or names the generated classes, so no other module imports ``T`` or
names a ``T.`` attribute (``T.PageHeader``), and ``pqbloom._thrift`` is a private module whose one door is
``pqbloom.format``. Decoded structs stay in ``pqbloom.format`` and ``pqbloom.file``: any other module imports from
``pqbloom.format`` only the names of :data:`PLAIN_FORMAT_NAMES` (records, enums, bytes; every name of the
modules in :data:`PLAIN_FORMAT_MODULES`) and reads none of :data:`STRUCT_ATTRIBUTES` (fields only a Thrift
struct has, and the file layer's doors to its structs).

No cycle: neither between modules nor between packages (each module collapsed to its top-level package or
module, ``pqbloom.scan.read`` -> ``pqbloom.scan``): a strongly connected component of either graph is a
problem. A name that starts with one underscore belongs to its module: no other module imports it. A private
module is imported only from inside itself, by its siblings, or by its doors (:data:`DOORS`). The sources are
read (:mod:`ast` for Python, line patterns for Cython); nothing is imported or run.

Use :func:`check` from a test: it takes a repository root and returns the problems.
"""
from __future__ import annotations

import argparse
import ast
import itertools
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "pqbloom"
SOURCES = (".py", ".pyx", ".pxd")


@dataclass(frozen=True)
class Layer:
    """One layer: its title and its entries (a module or a package -> what it holds, markdown for docs/layout.md)."""

    title: str
    entries: dict[str, str]


#: top first; an entry names a module or a package (``pqbloom.file`` places ``pqbloom.file`` and ``pqbloom.file.*``)
LAYERS: tuple[Layer, ...] = (
    Layer("the faces", {
        "pqbloom": "the public face only",
        "pqbloom.__main__": "`python -m pqbloom`, the command without its console script",
        "pqbloom.cli": "the `pqbloom` command: `main.py` the commands, `convert.py` / `infer.py` / `textio.py` CSV "
                       "and JSON Lines ingest, `layout.py` / `svg.py` the byte map",
        "pqbloom.spark": "the Spark data source: `reader.py`, `writer.py`, `schema.py`, over public names",
    }),
    Layer("the one-call API", {
        "pqbloom.api": "`ParquetFile` (a `FileReader` that also takes `filters=`), `read_table`, `read_metadata`, "
                       "`read_schema`, `write_table`",
    }),
    Layer("datasets", {
        "pqbloom.datasets": "many files as one table, over the filter engine's public names: `discover.py` the "
                            "data files of a local or remote directory and their Hive partition values, `read.py` "
                            "many files read as one table (partition pruning, schema checks, remote files opened "
                            "in waves), `sources.py` (`Dataset`, `dataset()`: directories, lists, globs and URLs), "
                            "`write.py` (`write_to_dataset`, Hive directory names, local and remote atomic sinks)",
    }),
    Layer("the filter engine", {
        "pqbloom.scan": "expressions and verdicts over the members of the file reader `file/row_access.py` lists "
                        "(no IO, no Thrift, no decryption): `expr.py` expressions, `parse.py` DNF lists and "
                        "the text grammar, `bind.py` literals to a column's physical domain, `evaluate.py` exact "
                        "three-valued evaluation, `prune.py` statistics verdicts for every row group at once, "
                        "`prune_row_group.py` Bloom filter, dictionary and page-index verdicts, `read.py` late "
                        "materialization's evaluation side (repeated leaves, page-by-page scans), `plan.py` `plan_file` "
                        "/ `read_filtered`, `explain.py` `Explain`",
    }),
    Layer("files", {
        "pqbloom.file": "bytes <-> columns, knowing no filters: `reader.py` `FileReader` (footer, columns, chunk "
                        "metadata and ranges, Bloom filter access, unfiltered reads), `metadata.py` "
                        "(`FileMetadata`, `RowGroupMetadata`, `ColumnChunkMetadata`, `ColumnStatistics`), "
                        "`footer.py`, `pages.py` (the one page codec: header, CRC, decryption, decompression, "
                        "levels, values), `flat_chunk.py` (a flat fixed-width chunk decoded whole by the "
                        "compiled page loop, `_kernels/chunkloop.pyx`, or handed back to `pages.py`), "
                        "`page_walk.py` (the rows of each page of a chunk without an offset "
                        "index, from its headers), `selection.py` (`RowSelection`, `PageLayout`), `page_index.py` "
                        "(the page index read in coalesced batches, decrypted: `PageStatistics`), `row_reads.py` "
                        "(`RowGroupReader`: the rows of a `RowSelection`, page selection, IO coalescing, decoding), "
                        "`page_reads.py` (decoding some pages of a chunk), `dictionary_probe.py` (a dictionary page "
                        "for pruning), `footer_stats.py` (`FooterStats`), `row_access.py` (the reader's members "
                        "the filter engine uses), `column_reader.py` (chunk assembly), `select.py` (column "
                        "selection), `levels.py` (record shredding and assembly), `bloom_reader.py` / "
                        "`bloom_site.py` (reading a Bloom filter; when a stored one may be trusted), `chunk_layout.py` (where "
                        "chunks, pages and Bloom filters lie, from the footer and page headers), `writer.py` "
                        "(`ParquetWriter`: row groups, Bloom filter placement, page index, footer), "
                        "`column_writer.py` (`ColumnChunkWriter`: one column chunk), `options.py` "
                        "(`WriterOptions`, `BloomFilterOptions`), `sorting.py` (`SortingColumn`), `versions.py` "
                        "(the `version` option's types), `encryption.py` (Parquet Modular Encryption of a file's "
                        "modules, and its crypto metadata in the footer's structs); the only package besides "
                        "`format/` that reads decoded Thrift structs",
    }),
    Layer("in-memory data", {
        "pqbloom.table": "`column.py` (`Column`, `NestedColumn`), `table.py` (`Table`), `build.py` (from Python "
                         "values, numpy, pyarrow), `outputs.py` (to Python, numpy and Arrow), `int96.py` (INT96 "
                         "timestamps, range-checked), `arrow.py`, `arrow_schema.py` (the footer's "
                         "`ARROW:schema`), `decimals.py`, `nulls.py`, `pandas.py` / `pandas_meta.py` (DataFrames "
                         "and pandas' metadata, as pyarrow converts them), `polars_frames.py` (polars DataFrames "
                         "without pyarrow), `arrow_c_types.py` / `arrow_c_export.py` / `arrow_c_protocol.py` / "
                         "`arrow_c_import.py` (the Arrow PyCapsule interface out and in, without pyarrow)",
    }),
    Layer("schemas and statistics", {
        "pqbloom.schema": "`fields.py` `Field`, `LogicalType`, type strings; `tree.py` `Schema`, leaf columns, the "
                          "logical tree",
        "pqbloom.statistics": "`compute.py` write side, `read.py` which statistics to trust, `order.py` sort "
                              "orders, `page_index.py`",
    }),
    Layer("leaves", {
        "pqbloom.encodings": "pure functions over buffers; `dispatch.py` encodes and decodes by `Encoding`",
        "pqbloom.compression": "the codec registry; a page decompresses into a scratch buffer its caller holds",
        "pqbloom.bloom": "the split-block Bloom filter",
        "pqbloom.xxhash64": "vectorized XXH64",
        "pqbloom.crypto": "ciphers, key tools, properties; `options.py` the key options of the CLI and the Spark "
                          "data source",
        "pqbloom.memory": "a read's buffers and their owners: `pool.py` the pool of large column buffers "
                          "(`_kernels/pool.pyx`), `scratch.py` per-thread reused buffers of a read's transient "
                          "bytes, handed out as leases their holder releases",
        "pqbloom.kernels": "the compiled kernels of `_kernels/` behind checked arguments and typed errors, or "
                           "their numpy reference: `__init__.py` `MODULES` (the one list, which setup.py reads) "
                           "and which are compiled, one wrapper per family (`hybrid.py`, `binary.py`, "
                           "`levels.py`, `decimals.py`, `delta.py`, `pageheader.py`, `objects.py`, `chunkloop.py`: "
                           "the compiled page loop, whose reference is the Python page loop), `reference/` "
                           "the numpy oracles of the same names and the bit-level decoders they share (`bits.py`)",
        "pqbloom.arrow_c": "the Arrow C Data and Stream Interfaces' structs and PyCapsules (`_kernels/arrow_c.pyx`, "
                           "through `pqbloom.kernels`), without pyarrow",
    }),
    Layer("formats and bytes", {
        "pqbloom.format": "the only package that builds Thrift structs or names the generated `_thrift/`; decoded "
                          "structs go to the file layer only, every other package gets format's records: "
                          "`codec.py` compact protocol, `footer.py` lazy footers, `enums.py` the enums and the one "
                          "physical-type dtype table, `schema.py` schema elements, `statistics.py` statistics, "
                          "column orders and page indexes, `pages.py` page headers, `metadata.py` column metadata, "
                          "row groups and the footer, `crypto.py` crypto metadata, `bloom.py` the Bloom filter "
                          "header, `flatbuf.py`",
        "pqbloom.io": "counted range reads and atomic sinks; `__init__.py` the face (names only), `local.py` "
                      "`RangeReader` over local files, bytes and file objects (regular files only), `sinks.py` atomic "
                      "local sinks (a temporary file, then a rename), `remote.py` range requests and sinks on fsspec "
                      "and pyarrow filesystems, `sources.py` URLs and `filesystem=` to readers and sinks",
        "pqbloom.limits": "the per-read memory ceiling (`memory_limit`), charged before each allocation a file sizes",
        "pqbloom.arrays": "the in-memory arrays: numpy for fixed widths, `BinaryArray` (one buffer and offsets) for "
                          "byte arrays",
    }),
    Layer("the bottom", {
        "pqbloom.errors": "every error derives from `pqbloom.errors.ParquetError`",
        "pqbloom._version": "the version, in one place",
        "pqbloom._thrift": "generated by `scripts/gen_thrift.py` from `thrift/parquet.thrift`, which records the "
                           "IDL's and the bindings' hashes in `thrift/GENERATED.json` so that the tests check them "
                           "without the compiler (CI regenerates with it)",
        "pqbloom._kernels": "the compiled Cython kernels (`.pyx`, with `_util.pxd` their shared inline helpers, "
                            "`arrow_c_abi.pxd` the Arrow C Data Interface structs)",
    }),
)
#: private module -> the modules allowed to import it besides itself and its siblings (``pqbloom``: any module)
DOORS: dict[str, tuple[str, ...]] = {
    "pqbloom._thrift": ("pqbloom.format",),
    "pqbloom._kernels": ("pqbloom.kernels",),
    "pqbloom._version": ("pqbloom",),
}
#: generated modules: no line limit
GENERATED = ("pqbloom._thrift",)
#: module -> why a load by name in it cannot be resolved here (its targets are then not checked)
DYNAMIC_LOADS: dict[str, str] = {
    "pqbloom": "the lazy face (__getattr__) loads the modules of its _LAZY table, the same ones its "
               "TYPE_CHECKING block imports (read here as imports), or a submodule named by the caller",
}
#: a cycle between packages tolerated for now (exactly these packages) -> why, and what breaks it; reported as a
#: note; a problem when another package joins it, and once it is gone (so that the entry goes too)
KNOWN_CYCLES: dict[frozenset[str], str] = {}
#: the one package that builds Thrift structs and names the generated classes (``T``, ``pqbloom._thrift``)
THRIFT_HOME = "pqbloom.format"
#: the packages that hold decoded Thrift structs: the format decodes them, the file layer reads them
STRUCT_HOLDERS = ("pqbloom.format", "pqbloom.file")
#: modules of pqbloom.format without any struct code: every name of theirs may be imported anywhere
PLAIN_FORMAT_MODULES = ("pqbloom.format.enums", "pqbloom.format.flatbuf")
#: the names of pqbloom.format (and its modules) that give and take no Thrift struct, only format's records,
#: enums, plain values and bytes: the only ones a module outside STRUCT_HOLDERS imports. A name not listed
#: (a decoder, a builder returning a struct, a conversion taking one) is the file layer's.
PLAIN_FORMAT_NAMES = frozenset({
    # enumerations and dtypes (pqbloom.format.enums, re-exported by the package)
    "PhysicalType", "Encoding", "PageType", "CompressionCodec", "ConvertedType", "FieldRepetitionType",
    "BoundaryOrder", "NUMERIC_DTYPES", "numpy_dtype", "name_of",
    # the codec's plain helpers
    "gc_paused", "ACCELERATED",
    # records, and their constants
    "SchemaElement", "LogicalAnnotation", "LOGICAL_KINDS", "StatisticsFields", "ColumnIndexFields", "COLUMN_ORDERS",
    "AlgorithmParams", "ColumnCrypto", "FileCryptoFields", "BloomFilterHeaderFields", "AES_GCM_V1", "AES_GCM_CTR_V1",
    # records or plain values <-> bytes
    "encode_column_index", "encode_bloom_filter_header", "decode_bloom_filter_header", "encode_file_crypto_metadata",
    "decode_file_crypto_metadata", "footer_key_metadata",
})
#: attributes only decoded Thrift structs have (fields no pqbloom object of the same name shadows), and the
#: file layer's doors to its structs (``FileReader.thrift_metadata``, ``chunk_metadata``): outside
#: STRUCT_HOLDERS, reading one means a decoded struct leaked out of the file layer
STRUCT_ATTRIBUTES = frozenset({
    "thrift_metadata", "chunk_metadata", "thrift_spec",
    "meta_data", "crypto_metadata", "encrypted_column_metadata", "footer_signing_key_metadata", "column_orders",
    "encoding_stats", "logicalType", "isAdjustedToUTC", "bitWidth", "isSigned", "numBytes", "data_page_header",
    "data_page_header_v2", "dictionary_page_header", "index_page_header", "page_locations",
    "ENCRYPTION_WITH_FOOTER_KEY", "ENCRYPTION_WITH_COLUMN_KEY",
})
#: C namespaces Cython ships (``cimport`` of these is not of the package)
CYTHON_NAMESPACES = frozenset({"libc", "libcpp", "cpython", "posix", "cython", "numpy", "openmp"})

#: the page holding the layout list, between these markers
LAYOUT_DOC = Path("docs") / "layout.md"
LAYOUT_BEGIN = "<!-- layers: generated from scripts/check_layers.py (python scripts/check_layers.py --update-docs) -->"
LAYOUT_END = "<!-- /layers -->"


@dataclass(frozen=True)
class Ref:
    """One import of a module: ``names`` of a from-import (else empty); ``how`` import, load or cimport."""

    line: int
    module: str
    names: tuple[str, ...] = ()
    how: str = "import"


def within(mod: str, prefix: str) -> bool:
    return mod == prefix or mod.startswith(prefix + ".")


def discover(root: Path) -> dict[str, list[Path]]:
    """module name -> its source files (a ``.pyx`` and its ``.pxd`` share one name)."""
    out: dict[str, list[Path]] = {}
    for path in sorted((root / PACKAGE).rglob("*")):
        if path.suffix not in SOURCES or "__pycache__" in path.parts or not path.is_file():
            continue
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.setdefault(".".join(parts), []).append(path)
    return out


def absolute(mod: str, is_pkg: bool, level: int, name: str | None) -> str:
    """The absolute name of a relative import ``level`` dots up from ``mod``."""
    if level == 0:
        return name or ""
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


# -- Python ---------------------------------------------------------------------------------------------------

def literal_strings(node: ast.expr, tree: ast.Module) -> set[str] | None:
    """The strings a literal (or a module-level name bound to one) holds: a string, or a tuple/list/set of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        out: set[str] = set()
        for elt in node.elts:
            if not (isinstance(elt, ast.Constant) and isinstance(elt.value, str)):
                return None
            out.add(elt.value)
        return out
    if isinstance(node, ast.Name):
        for stmt in tree.body:
            if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                    and stmt.targets[0].id == node.id):
                return literal_strings(stmt.value, tree)
            if (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == node.id
                    and stmt.value is not None):
                return literal_strings(stmt.value, tree)
    return None


def name_values(name: str, at: ast.AST, parents: dict[ast.AST, ast.AST], tree: ast.Module) -> set[str] | None:
    """The strings ``name`` can hold at ``at``: bound by an enclosing loop or comprehension over a literal,
    or at module level."""
    node: ast.AST | None = at
    while node is not None:
        loops: list[tuple[ast.expr, ast.expr]] = []
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            loops = [(g.target, g.iter) for g in node.generators]
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            loops = [(node.target, node.iter)]
        for target, it in loops:
            if isinstance(target, ast.Name) and target.id == name:
                return literal_strings(it, tree)
        node = parents.get(node)
    return literal_strings(ast.Name(id=name), tree)


def string_values(node: ast.expr, parents: dict[ast.AST, ast.AST], tree: ast.Module) -> set[str] | None:
    """Every string ``node`` can evaluate to, or None when that is not known statically."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.Name):
        return name_values(node.id, node, parents, tree)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = string_values(node.left, parents, tree), string_values(node.right, parents, tree)
        return None if left is None or right is None else {a + b for a in left for b in right}
    if isinstance(node, ast.JoinedStr):
        pieces: list[set[str]] = []
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                pieces.append({part.value})
            elif (isinstance(part, ast.FormattedValue) and part.conversion == -1 and part.format_spec is None
                  and (values := string_values(part.value, parents, tree)) is not None):
                pieces.append(values)
            else:
                return None
        return {"".join(p) for p in itertools.product(*pieces)}
    return None


def is_load(func: ast.expr, loaders: set[str]) -> bool:
    if isinstance(func, ast.Attribute):
        return func.attr == "import_module"
    return isinstance(func, ast.Name) and (func.id == "__import__" or func.id in loaders)


def statements(tree: ast.Module) -> list[ast.stmt]:
    """Every statement, nested ones too (an import is a statement: the expressions need no walk)."""
    out: list[ast.stmt] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.stmt):
            out.append(node)
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            stack.extend(getattr(node, field, ()))
    return out


def python_refs(mod: str, path: Path, is_pkg: bool) -> tuple[list[Ref], list[str]]:
    """The imports of a Python module, and its loads by name that cannot be resolved."""
    text = path.read_text()
    tree = ast.parse(text, str(path))
    refs: list[Ref] = []
    for node in statements(tree):
        if isinstance(node, ast.Import):
            refs += [Ref(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            src = absolute(mod, is_pkg, node.level, node.module)
            refs.append(Ref(node.lineno, src, tuple(a.name for a in node.names)))
    # a load by name spells one of these (the walk over every expression is the slow part)
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and node.args] \
        if "import_module" in text or "__import__" in text else []
    loaders = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
               and node.module == "importlib" for a in node.names if a.name == "import_module"} if calls else set()
    calls = [node for node in calls if is_load(node.func, loaders)]
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)} if calls else {}
    unresolved: list[str] = []
    for node in calls:
        values = string_values(node.args[0], parents, tree)
        if values is None:
            unresolved.append(f"{mod}:{node.lineno} loads a module by a name that cannot be resolved "
                              f"statically: {ast.unparse(node)}")
            continue
        package = next((k.value for k in node.keywords if k.arg == "package"),
                       node.args[1] if len(node.args) > 1 and isinstance(node.func, ast.Attribute) else None)
        for value in sorted(values):
            level = len(value) - len(value.lstrip("."))
            rest = value[level:] or None
            if not level:
                refs.append(Ref(node.lineno, value, how="load"))
            elif isinstance(package, ast.Name) and package.id in ("__package__", "__name__"):
                # __name__ as the anchor makes the module itself the package the name is relative to
                refs.append(Ref(node.lineno, absolute(mod, is_pkg or package.id == "__name__", level, rest), how="load"))
            elif isinstance(package, ast.Constant) and isinstance(package.value, str):
                refs.append(Ref(node.lineno, absolute(package.value, True, level, rest), how="load"))
            else:
                unresolved.append(f"{mod}:{node.lineno} loads {value!r} relative to a package not known here")
    return refs, unresolved


# -- Cython ---------------------------------------------------------------------------------------------------

CY_STRING = re.compile(r'("""|\'\'\')(.*?)\1', re.S)
CY_FROM = re.compile(r"^\s*from\s+(\.*[\w.]*)\s+(cimport|import)\s+(.+)$")
CY_IMPORT = re.compile(r"^\s*(cimport|import)\s+([\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)\s*$")


def cython_refs(mod: str, path: Path) -> list[Ref]:
    """The ``import``/``cimport`` lines of a Cython source (docstrings and comments skipped)."""
    text = CY_STRING.sub(lambda m: "\n" * m.group(0).count("\n"), path.read_text())
    lines = [re.sub(r"#.*$", "", line).rstrip() for line in text.splitlines()]
    refs: list[Ref] = []
    i = 0
    while i < len(lines):
        start, stmt = i + 1, lines[i]
        while (stmt.count("(") > stmt.count(")") or stmt.endswith("\\")) and i + 1 < len(lines):
            i += 1
            stmt = stmt.rstrip("\\") + " " + lines[i].strip()
        i += 1
        if m := CY_FROM.match(stmt):
            src = absolute(mod, False, len(m[1]) - len(m[1].lstrip(".")), m[1].lstrip(".") or None)
            names = tuple(n.split()[0] for n in m[3].replace("(", " ").replace(")", " ").split(",") if n.strip())
            refs.append(Ref(start, src, names, "cimport" if m[2] == "cimport" else "import"))
        elif m := CY_IMPORT.match(stmt):
            refs += [Ref(start, n.split()[0], how="cimport" if m[1] == "cimport" else "import")
                     for n in m[2].split(",")]
    return refs


# -- the checks -----------------------------------------------------------------------------------------------

def placement(mod: str) -> tuple[int, str] | None:
    """The layer of ``mod`` and the entry that places it: the longest entry that is ``mod`` or a package above
    it (the package's own entry places its ``__init__`` only)."""
    best: tuple[int, str] | None = None
    for i, layer in enumerate(LAYERS):
        for prefix in layer.entries:
            hit = mod == prefix if prefix == PACKAGE else within(mod, prefix)
            if hit and (best is None or len(prefix) > len(best[1])):
                best = (i, prefix)
    return best


def package_of(mod: str) -> str:
    """The unit of the package graph: the top-level package or module (``pqbloom.scan.read`` -> ``pqbloom.scan``)."""
    return ".".join(mod.split(".")[:2])


def private_module_problems(mod: str, target: str, line: int) -> list[str]:
    """A private module (a ``_name`` segment) is imported from inside it, by its siblings or by its doors."""
    parts = target.split(".")
    for k in range(1, len(parts)):
        if not parts[k].startswith("_") or parts[k].startswith("__"):
            continue
        private, parent = ".".join(parts[: k + 1]), ".".join(parts[:k])
        doors = DOORS.get(private)
        if within(mod, private):
            continue
        allowed = any(within(mod, d) for d in doors) if doors is not None else within(mod, parent)
        if not allowed:
            return [f"{mod}:{line} imports private module {target}"]
    return []


def sccs(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def push(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)

    for v in sorted(graph):
        if v in index:
            continue
        push(v)
        work = [(v, iter(sorted(graph[v])))]
        while work:
            node, it = work[-1]
            for w in it:
                if w not in graph:
                    continue
                if w not in index:
                    push(w)
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
    return out


def build_graph(modules: dict[str, list[Path]]) -> tuple[dict[str, set[str]], list[str]]:
    """module -> the package modules it imports; and the problems found on the way (unknown modules,
    unresolved loads, private names and modules)."""
    graph: dict[str, set[str]] = {m: set() for m in modules}
    problems: list[str] = []
    for mod, paths in modules.items():
        refs: list[Ref] = []
        for path in paths:
            if path.suffix == ".py":
                found, unresolved = python_refs(mod, path, path.name == "__init__.py")
                refs += found
                if unresolved and mod not in DYNAMIC_LOADS:
                    problems += unresolved
            else:
                refs += cython_refs(mod, path)
        for ref in refs:
            if not within(ref.module, PACKAGE):
                if ref.how == "cimport" and ref.module.split(".")[0] not in CYTHON_NAMESPACES:
                    problems.append(f"{mod}:{ref.line} cimports unknown module {ref.module}")
                continue
            if ref.module not in modules:
                problems.append(f"{mod}:{ref.line} {ref.how}s unknown module {ref.module}")
                continue
            targets: list[tuple[str, str | None]] = []
            if ref.names:
                for name in ref.names:
                    sub = f"{ref.module}.{name}"
                    targets.append((sub, None) if sub in modules else (ref.module, name))
            else:
                targets.append((ref.module, None))
            for target, name in targets:
                problems += private_module_problems(mod, target, ref.line)
                if name and name.startswith("_") and not name.startswith("__") and target != mod:
                    problems.append(f"{mod}:{ref.line} imports private name {name!r} from {target}")
                if target != mod:
                    graph[mod].add(target)
    for mod in DYNAMIC_LOADS:
        if mod not in modules:
            problems.append(f"DYNAMIC_LOADS names {mod}, which is not a module of the package")
    return graph, problems


def layer_problems(modules: dict[str, list[Path]], graph: dict[str, set[str]]) -> list[str]:
    problems: list[str] = []
    seen: dict[str, int] = {}
    for i, layer in enumerate(LAYERS):
        for prefix in layer.entries:
            if prefix in seen:
                problems.append(f"LAYERS lists {prefix} twice (layers {seen[prefix] + 1} and {i + 1})")
            seen[prefix] = i
            if not any(placement(m) == (i, prefix) for m in modules):
                problems.append(f"LAYERS entry {prefix} (layer {i + 1}) places no module")
    layer = {mod: place[0] for mod in graph if (place := placement(mod)) is not None}
    for mod in sorted(graph):
        if mod not in layer:
            problems.append(f"{mod} is in no layer (add it to LAYERS in scripts/check_layers.py)")
            continue
        lm = layer[mod]
        for dep in sorted(graph[mod]):
            if (ld := layer.get(dep)) is not None and ld < lm:
                problems.append(f"{mod} (layer {lm + 1}) imports {dep} (layer {ld + 1}, above it)")
    return problems


def cycle_problems(graph: dict[str, set[str]]) -> tuple[list[str], list[str]]:
    """The cycles between modules and between packages; and the notes of the known ones (:data:`KNOWN_CYCLES`)."""
    notes: list[str] = []
    problems = ["import cycle between modules: " + " <-> ".join(comp) for comp in sccs(graph)]
    packages: dict[str, set[str]] = {}
    witness: dict[tuple[str, str], str] = {}
    for mod, deps in graph.items():
        packages.setdefault(package_of(mod), set())
        for dep in sorted(deps):
            a, b = package_of(mod), package_of(dep)
            if a != b:
                packages[a].add(b)
                witness.setdefault((a, b), f"{mod} imports {dep}")
    found = sccs(packages)
    for comp in found:
        edges = [witness[(a, b)] for a in comp for b in sorted(packages[a]) if b in comp]
        text = "import cycle between packages: " + " <-> ".join(comp) + " (" + "; ".join(edges) + ")"
        if frozenset(comp) in KNOWN_CYCLES:
            notes.append(f"note: known {text}: {KNOWN_CYCLES[frozenset(comp)]}")
        else:
            problems.append(text)
    problems += [f"KNOWN_CYCLES lists a cycle that is gone: {' <-> '.join(sorted(c))} (remove the entry)"
                 for c in KNOWN_CYCLES if not any(c <= set(comp) for comp in found)]
    return problems, notes


def thrift_problems(modules: dict[str, list[Path]]) -> list[str]:
    """Where a module outside :data:`THRIFT_HOME` names the generated Thrift classes (imports ``T``, names a
    ``T.`` attribute), or a module outside :data:`STRUCT_HOLDERS` imports a struct-handing name of
    pqbloom.format (not in :data:`PLAIN_FORMAT_NAMES`) or reads an attribute of :data:`STRUCT_ATTRIBUTES`."""
    problems: list[str] = []
    for mod, paths in sorted(modules.items()):
        if within(mod, THRIFT_HOME) or any(within(mod, g) for g in GENERATED):
            continue
        holder = any(within(mod, h) for h in STRUCT_HOLDERS)
        for path in paths:
            if path.suffix != ".py":
                continue
            tree = ast.parse(path.read_text(), str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom):
                    src = absolute(mod, path.name == "__init__.py", node.level, node.module)
                    if not within(src, THRIFT_HOME):
                        continue
                    for alias in node.names:
                        sub = f"{src}.{alias.name}"
                        target, name = (sub, None) if sub in modules else (src, alias.name)
                        if alias.name == "T" and name is not None:
                            problems.append(f"{mod}:{node.lineno} imports T (the generated Thrift classes) from "
                                            f"{target}: only {THRIFT_HOME} names them")
                        elif not holder and not _plain_format_import(target, name):
                            what = f"{name!r} from {target}" if name is not None else f"module {target}"
                            problems.append(f"{mod}:{node.lineno} imports {what}, which gives or takes Thrift structs "
                                            f"(only {' and '.join(STRUCT_HOLDERS)} hold them; see PLAIN_FORMAT_NAMES)")
                elif isinstance(node, ast.Import) and not holder:
                    for alias in node.names:
                        if within(alias.name, THRIFT_HOME) and not _plain_format_import(alias.name, None):
                            problems.append(f"{mod}:{node.lineno} imports module {alias.name}, which gives or takes "
                                            f"Thrift structs (only {' and '.join(STRUCT_HOLDERS)} hold them)")
                elif isinstance(node, ast.Attribute):
                    if isinstance(node.value, ast.Name) and node.value.id == "T" and node.attr[:1].isupper():
                        problems.append(f"{mod}:{node.lineno} names T.{node.attr}: only {THRIFT_HOME} builds Thrift "
                                        f"structs or names the generated classes")
                    elif not holder and node.attr in STRUCT_ATTRIBUTES:
                        problems.append(f"{mod}:{node.lineno} reads .{node.attr}, a field of a decoded Thrift struct "
                                        f"(or the file layer's door to one): only {' and '.join(STRUCT_HOLDERS)} "
                                        f"read them; use pqbloom's own metadata objects")
    return problems


def _plain_format_import(target: str, name: str | None) -> bool:
    """Whether importing ``name`` from ``target`` (or the module ``target`` itself, ``name`` None) brings no
    Thrift struct code outside the struct holders."""
    if any(within(target, m) for m in PLAIN_FORMAT_MODULES):
        return True
    return name is not None and name in PLAIN_FORMAT_NAMES


@dataclass
class Report:
    """What :func:`analyse` found: the problems, the notes of what is tolerated (:data:`KNOWN_CYCLES`), the
    modules and the import graph."""

    problems: list[str]
    notes: list[str]
    modules: dict[str, list[Path]]
    graph: dict[str, set[str]]


def analyse(root: Path = ROOT, max_lines: int = 600) -> Report:
    """Check the package under ``root`` (a repository root holding ``pqbloom/``)."""
    modules = discover(root)
    problems: list[str] = []
    for mod, paths in modules.items():
        if any(within(mod, g) for g in GENERATED):
            continue
        for path in paths:
            n = len(path.read_text().splitlines())
            if n > max_lines:
                problems.append(f"{path.relative_to(root)} has {n} lines (limit {max_lines})")
    graph, found = build_graph(modules)
    problems += found
    problems += layer_problems(modules, graph)
    problems += thrift_problems(modules)
    cycles, notes = cycle_problems(graph)
    return Report(problems + cycles, notes, modules, graph)


def check(root: Path = ROOT, max_lines: int = 600) -> list[str]:
    """Every problem of the package under ``root``; empty when it passes."""
    return analyse(root, max_lines).problems


# -- the layout list of docs/layout.md -----------------------------------------------------------------------------

def display_name(root: Path, prefix: str) -> str:
    if prefix == PACKAGE:
        return "__init__.py"
    rel = prefix.split(".", 1)[1].replace(".", "/")
    if (root / PACKAGE / rel).is_dir():
        return rel + "/"
    return next((rel + s for s in SOURCES if (root / PACKAGE / (rel + s)).exists()), rel)


def layers_markdown(root: Path = ROOT) -> str:
    """The layout list of docs/layout.md: one numbered item per layer, top first, one bullet per entry."""
    out: list[str] = []
    for i, layer in enumerate(LAYERS):
        number = f"{i + 1}. "
        pad = " " * 4  # four spaces nest the bullets under the item in Python-Markdown (MkDocs) as on GitHub
        out.append(f"{number}{layer.title[0].upper() + layer.title[1:]}:")
        for prefix, doc in layer.entries.items():
            out.append(textwrap.fill(f"`{display_name(root, prefix)}`: {doc}.", width=110, initial_indent=pad + "- ",
                                     subsequent_indent=pad + "  ", break_on_hyphens=False, break_long_words=False))
    return "\n".join(out) + "\n"


def doc_with_layers(text: str, root: Path = ROOT) -> str:
    """``text`` (docs/layout.md) with the part between its layer markers replaced by :func:`layers_markdown`."""
    begin, end = text.index(LAYOUT_BEGIN) + len(LAYOUT_BEGIN), text.index(LAYOUT_END)
    return text[:begin] + "\n" + layers_markdown(root) + text[end:]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-lines", type=int, default=600)
    ap.add_argument("--root", type=Path, default=ROOT, help="the repository root (default: this script's)")
    ap.add_argument("--print-layers", action="store_true", help="print the layout list of docs/layout.md and exit")
    ap.add_argument("--update-docs", "--update-readme", action="store_true", dest="update_docs",
                    help="rewrite the layout list in docs/layout.md (--update-readme: its old name)")
    args = ap.parse_args(argv)
    if args.print_layers:
        print(layers_markdown(args.root), end="")
        return 0
    if args.update_docs:
        page = args.root / LAYOUT_DOC
        page.write_text(doc_with_layers(page.read_text(), args.root))
        return 0
    report = analyse(args.root, args.max_lines)
    for p in report.notes + report.problems:
        print(p)
    print(f"{len(report.modules)} modules, {sum(map(len, report.graph.values()))} imports, {len(LAYERS)} layers: "
          f"{'OK' if not report.problems else f'{len(report.problems)} problem(s)'}")
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
