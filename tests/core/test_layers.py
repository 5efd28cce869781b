"""The direction of dependencies, read from every import statement (``ast``), not from one import run.

Layers: connectors -> core -> faces. The core (``finops/`` without its CLI and Python API faces)
imports no face, no connector and no Excel library; a connector imports no face; a face imports no
other face. The CLI reads and writes workbooks (``finops reconcile``, ``finops template``, ``finops
plan``) through the interface the core names (:mod:`finops.workbooks`), which loads the workbook
package registered as an entry point, so no import statement of the CLI names ``templates``. A face
imports a name from the package that exports it (``from finops.sizing import size_workload``), not from
that package's submodule.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXCEL_LIBRARIES = ("openpyxl", "xlsxwriter", "xlwings", "formulas", "defusedxml")

#: Face -> where its modules live.
FACES: dict[str, tuple[str, ...]] = {
    "addin": ("addin",),
    "templates": ("templates",),
    "cli": ("finops/cli", "finops/__main__.py"),
    "api": ("finops/api.py",),
}
#: Module prefixes of each face, as an import names them.
FACE_MODULES: dict[str, tuple[str, ...]] = {
    "addin": ("addin",),
    "templates": ("templates",),
    "cli": ("finops.cli", "finops.__main__"),
    "api": ("finops.api",),
}


def _files(where: str) -> list[Path]:
    path = ROOT / where
    return [path] if path.suffix == ".py" else sorted(path.rglob("*.py"))


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[tuple[int, str, tuple[str, ...]]]:
    """(line, absolute module, names) of every import in ``path``, relative ones resolved."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name, ()) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((node.lineno, target, tuple(a.name for a in node.names)))
    return found


def _is(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _core_files() -> list[Path]:
    faces = {ROOT / "finops" / "cli", ROOT / "finops" / "__main__.py", ROOT / "finops" / "api.py"}
    return [p for p in sorted((ROOT / "finops").rglob("*.py")) if not any(p == f or f in p.parents for f in faces)]


def _violations(files: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    return [f"{p.relative_to(ROOT)}:{line} imports {module}" for p in files for line, module, _ in _imports(p)
            if _is(module, forbidden)]


def test_the_core_imports_no_face_connector_or_excel_library():
    faces = tuple(m for prefixes in FACE_MODULES.values() for m in prefixes)
    assert _violations(_core_files(), (*faces, "connectors", *EXCEL_LIBRARIES)) == []


def test_connectors_import_no_face():
    faces = tuple(m for prefixes in FACE_MODULES.values() for m in prefixes)
    assert _violations(_files("connectors"), faces) == []


@pytest.mark.parametrize("face", sorted(FACES))
def test_a_face_imports_no_other_face(face):
    others = tuple(m for name, prefixes in FACE_MODULES.items() if name != face for m in prefixes)
    files = [p for where in FACES[face] for p in _files(where)]
    assert _violations(files, others) == []


@pytest.mark.parametrize("face", sorted(FACES))
def test_a_face_imports_what_a_package_exports_from_the_package(face):
    """``from finops.sizing.choice import size_workload`` is refused when ``finops.sizing`` exports it."""
    bypassed = []
    for path in (p for where in FACES[face] for p in _files(where)):
        for line, module, names in _imports(path):
            parts = module.split(".")
            if parts[0] != "finops" or len(parts) < 3 or _is(module, ("finops.cli",)):
                continue
            package = importlib.import_module(".".join(parts[:2]))
            exported = [n for n in names if n in getattr(package, "__all__", ())]
            if exported:
                bypassed.append(f"{path.relative_to(ROOT)}:{line} imports {', '.join(exported)} from {module}")
    assert bypassed == []


def test_the_checks_see_a_violation(tmp_path):
    """The parser resolves relative imports: a core module reaching a face is caught."""
    package = tmp_path / "finops" / "tco"
    package.mkdir(parents=True)
    bad = package / "leak.py"
    bad.write_text("from ..cli import app\nimport xlsxwriter\nfrom addin.udfs import FINOPS_TCO\n")
    global ROOT
    kept, ROOT = ROOT, tmp_path
    try:
        found = _violations([bad], ("finops.cli", "addin", *EXCEL_LIBRARIES))
    finally:
        ROOT = kept
    assert found == ["finops/tco/leak.py:1 imports finops.cli", "finops/tco/leak.py:2 imports xlsxwriter",
                     "finops/tco/leak.py:3 imports addin.udfs"]
