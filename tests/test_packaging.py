"""The wheel carries the assets the app reads at run time."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_contains_packages_and_assets(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(tmp_path), str(ROOT)], check=True)
    wheel = next(tmp_path.glob("deskmate-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in ("assets/config.toml", "assets/models.toml", "assets/app.tcss",
                     "app/cli/__init__.py", "app/llm/llamacpp.py", "tools/__init__.py",
                     "finetune/__init__.py"):
        assert required in names, required
    assert not any(n.startswith("tests/") for n in names)
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "deskmate = app.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
