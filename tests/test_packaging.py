"""The wheel: one ``deskmate`` package carrying the assets the app reads at run time.

The folders app/, tools/, finetune/ and assets/ stay at the top of the repository but
install as deskmate.app, deskmate.tools, ... (pyproject's [tool.hatch.build.targets.wheel]):
a top-level ``tools`` or ``app`` would shadow, or be shadowed by, another project's in any
shared environment. The slow tests install the wheel the way users do, with pipx and uv.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Top-level names the checkout has but an installed deskmate must not own.
FOREIGN_TOP_LEVEL = ("app", "tools", "finetune", "assets", "tests", "benchmarks")
PACKAGED = ("app", "tools", "finetune", "assets")
KEY_FILES = (
    "deskmate/app/__init__.py", "deskmate/app/__main__.py", "deskmate/app/cli/__init__.py",
    "deskmate/assets/__init__.py", "deskmate/assets/config.toml",
    "deskmate/assets/models.toml", "deskmate/assets/app.tcss",
    "deskmate/tools/__init__.py", "deskmate/tools/sandbox/__init__.py",
    "deskmate/finetune/__init__.py",
)


def _checkout_files() -> set[str]:
    """Every file of the four folders, as the wheel should name it: the sandbox worker
    (started by path) and the eval suites (read as files) included."""
    return {f"deskmate/{path.relative_to(ROOT).as_posix()}"
            for folder in PACKAGED for path in (ROOT / folder).rglob("*")
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"}


def _build(kind: str, source: Path, out: Path) -> Path:
    """Build a wheel or sdist with hatchling, offline (it is in the dev extra)."""
    subprocess.run([sys.executable, "-m", "hatchling", "build", "-t", kind, "-d", str(out)],
                   cwd=source, check=True, capture_output=True)
    suffix = ".whl" if kind == "wheel" else ".tar.gz"
    return next(out.glob(f"deskmate-*{suffix}"))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return _build("wheel", ROOT, tmp_path_factory.mktemp("wheel"))


def _names(wheel: Path) -> set[str]:
    return set(zipfile.ZipFile(wheel).namelist())


def test_wheel_holds_one_deskmate_package_with_its_assets(wheel):
    names = _names(wheel)
    for required in KEY_FILES:
        assert required in names, required
    assert any(n.startswith("deskmate/assets/eval/local/") for n in names)
    assert sorted(_checkout_files() - names) == []
    dist_info = f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info/"
    strays = sorted(n for n in names if not n.startswith(("deskmate/", dist_info)))
    assert strays == []
    assert not any(n.split("/")[0] in FOREIGN_TOP_LEVEL for n in names)
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)


def test_wheel_entry_point_is_the_namespaced_cli(wheel):
    archive = zipfile.ZipFile(wheel)
    entry_points = next(n for n in archive.namelist() if n.endswith("entry_points.txt"))
    text = archive.read(entry_points).decode()
    assert "deskmate = deskmate.app.cli:main" in text


def test_wheel_built_from_the_sdist_is_the_same(wheel, tmp_path):
    """`uv tool install .` and `python -m build` go through the sdist: same files."""
    sdist = _build("sdist", ROOT, tmp_path / "sdist")
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path / "src", filter="data")
    unpacked = next((tmp_path / "src").iterdir())
    from_sdist = _build("wheel", unpacked, tmp_path / "wheel")
    assert _names(from_sdist) == _names(wheel)


def _clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """This machine's environment (pip's indexes, cache and find-links settings come
    along) minus anything that would let the test see the checkout's venv or config."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PIP_USER",
                        "DESKMATE_CONFIG")}
    return {**env, "DESKMATE_HOME": str(tmp_path / "home"), **extra}


def _install(cmd: list[str], env: dict[str, str], cwd: Path) -> None:
    """Run an installer in its own process group: on a timeout the builds it started
    (a compiler, say) go too, instead of running on after the test."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=400)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        pytest.fail(f"{cmd[:3]} took over 400 s:\n{output[-3000:]}")
    assert proc.returncode == 0, output
    print(f"{Path(cmd[0]).name} {cmd[1:3]}: {time.perf_counter() - start:.0f} s")


def _check_installed(command: Path, python: Path, env: dict[str, str], tmp_path: Path,
                     tool_root: Path) -> None:
    """The installed command finds its assets and its sandbox worker inside the package,
    and the environment owns no top-level name but ``deskmate``."""

    def deskmate(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        done = subprocess.run([str(command), *args], env=env, cwd=tmp_path, input=stdin,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        return done

    assert "  sandbox" in deskmate("--help").stdout
    models = json.loads(deskmate("models", "list", "--json").stdout)  # assets/models.toml
    assert any(m["recommended"] for m in models)
    written = Path(deskmate("config", "init").stdout.strip())  # assets/config.toml
    assert written.is_relative_to(tmp_path / "home") and "[model]" in written.read_text()
    cell = json.loads(deskmate("sandbox", "exec", "--json", "-", stdin="print(6 * 7)").stdout)
    assert (cell["status"], cell["stdout"].strip()) == ("ok", "42")

    # -I: neither the current folder nor PYTHON* variables reach sys.path.
    probe = ("import importlib.util as u, json, deskmate.tools.sandbox.isolation as iso; "
             f"print(json.dumps({{n: u.find_spec(n) is not None for n in {FOREIGN_TOP_LEVEL}}}));"
             "print(iso.worker_args('rlimits', (3, 4))[0])")
    out = subprocess.run([str(python), "-I", "-c", probe], env=env, cwd=tmp_path,
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert json.loads(out[0]) == dict.fromkeys(FOREIGN_TOP_LEVEL, False)
    worker = Path(out[1])  # the script the sandbox starts: inside the installed package
    assert worker.is_relative_to(tool_root.resolve()) and worker.is_file()


@pytest.mark.slow
def test_pipx_install_from_the_wheel_runs(wheel, tmp_path):
    """pipx as users run it: its own venv, every dependency from the index through pip,
    which reads this machine's pip config and cache (so llama-cpp-python is not rebuilt).
    The pip backend is named: pipx picks uv when it is installed (the uv test covers it)."""
    pipx_home, bin_dir = tmp_path / "pipx", tmp_path / "bin"
    env = _clean_env(tmp_path, PIPX_HOME=str(pipx_home), PIPX_BIN_DIR=str(bin_dir),
                     PIPX_MAN_DIR=str(tmp_path / "man"))
    _install([sys.executable, "-m", "pipx", "install", "--backend", "pip", str(wheel)], env,
             tmp_path)
    _check_installed(bin_dir / "deskmate", pipx_home / "venvs" / "deskmate" / "bin" / "python",
                     env, tmp_path, pipx_home)
    shutil.rmtree(pipx_home)  # a few hundred MB of venv: do not wait for pytest's cleanup


def _built_llama_wheels() -> Path | None:
    """The folder of pip's cache holding the llama-cpp-python wheel this venv was built
    with: uv keeps a cache of its own and would otherwise compile it again (10-25 min)."""
    cache = subprocess.run([sys.executable, "-m", "pip", "cache", "dir"], capture_output=True,
                           text=True).stdout.strip()
    version = importlib.metadata.version("llama-cpp-python")
    found = sorted(Path(cache).glob(f"wheels/**/llama_cpp_python-{version}-*.whl")) if cache else []
    return found[0].parent if found else None


@pytest.mark.slow
def test_uv_tool_install_from_the_wheel_runs(wheel, tmp_path):
    """uv as users run it, with a cache of its own; the interpreter is this venv's base
    (uv may not download one here), llama-cpp-python comes from pip's build of it."""
    uv = shutil.which("uv", path=str(Path(sys.executable).parent))
    llama = _built_llama_wheels()
    if uv is None or llama is None:
        pytest.skip("needs uv (dev extra) and pip's cached build of llama-cpp-python")
    tools, bin_dir = tmp_path / "uv-tools", tmp_path / "bin"
    env = _clean_env(tmp_path, UV_TOOL_DIR=str(tools), UV_TOOL_BIN_DIR=str(bin_dir),
                     UV_CACHE_DIR=str(tmp_path / "uv-cache"), UV_PYTHON_DOWNLOADS="never")
    base_python = getattr(sys, "_base_executable", sys.executable)
    _install([uv, "tool", "install", "--python", base_python, "--find-links", str(llama),
              str(wheel)], env, tmp_path)
    _check_installed(bin_dir / "deskmate", tools / "deskmate" / "bin" / "python", env,
                     tmp_path, tools)
    shutil.rmtree(tools)
    shutil.rmtree(tmp_path / "uv-cache")
