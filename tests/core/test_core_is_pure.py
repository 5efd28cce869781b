"""The core imports no Excel library, no cloud SDK and no CLI framework (STYLE habit 1)."""

import subprocess
import sys

FORBIDDEN = ("openpyxl", "xlsxwriter", "xlwings", "boto3", "botocore", "google", "typer", "rich", "click",
             "pandas", "pyarrow")


def test_importing_the_core_loads_no_face_or_sdk():
    code = (
        "import sys, pkgutil, importlib, finops\n"
        "def walk(pkg):\n"
        "    for m in pkgutil.iter_modules(pkg.__path__, pkg.__name__ + '.'):\n"
        "        if m.name == 'finops.cli':\n"
        "            continue\n"
        "        mod = importlib.import_module(m.name)\n"
        "        if m.ispkg:\n"
        "            walk(mod)\n"
        "walk(finops)\n"
        f"bad = sorted({{n.split('.')[0] for n in sys.modules}} & set({FORBIDDEN!r}))\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "", f"core imported: {result.stdout.strip()}"
