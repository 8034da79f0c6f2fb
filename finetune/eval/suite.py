"""Eval suites on disk: loading and validating a suite folder into typed tasks.

A suite is a folder (the format is a contract; README.md, "The suite format")::

    servers.json          {"mcpServers": {...}}; ${WORKSPACE} is the task's workspace
    suite.toml            optional: [selections] name = ["task-id", ...]
    site/                 optional: served over HTTP at ${SITE_URL} while a task using it runs
    helpers.py            optional: importable as ``helpers`` while each verify.py loads
    <task-id>/task.toml   prompt, servers, [setup], [check], [[rubric]]
    <task-id>/verify.py   optional: verify(workspace: Path, answer: str) -> float

Every error names the file and the key at fault, so a suite written elsewhere can be
fixed without reading this code.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import re
import sys
import threading
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from types import ModuleType
from typing import Any

from deskmate.finetune.rubrics import CATEGORIES  # what the judge scores a [[rubric]] by

CHECK_KEYS = ("answer_contains", "answer_regex", "file_exists", "file_contains", "file_absent")
TASK_KEYS = ("prompt", "servers", "setup", "check", "rubric")
# Stand-ins used to validate servers.json before any workspace exists.
PLACEHOLDERS = {"WORKSPACE": "/workspace", "SITE_URL": "http://127.0.0.1:1"}
HELPERS = "helpers"  # <suite>/helpers.py, the code its verify.py files share
# sys.modules is one for all threads: the Finetune screen's surveys load suites in worker
# threads, and without this one load took `helpers` away under another's verify.py.
_IMPORTING = threading.RLock()


class SuiteError(ValueError):
    """The suite cannot be used as written; the message names the file."""


@dataclass(frozen=True)
class Checks:
    answer_contains: tuple[str, ...] = ()
    answer_regex: str = ""
    file_exists: tuple[str, ...] = ()
    file_contains: dict[str, tuple[str, ...]] = field(default_factory=dict)
    file_absent: tuple[str, ...] = ()

    def count(self) -> int:
        return (len(self.answer_contains) + bool(self.answer_regex) + len(self.file_exists)
                + sum(len(v) for v in self.file_contains.values()) + len(self.file_absent))

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in CHECK_KEYS:
            value = getattr(self, key)
            if value:
                out[key] = ({k: list(v) for k, v in value.items()} if isinstance(value, dict)
                            else list(value) if isinstance(value, tuple) else value)
        return out


@dataclass(frozen=True)
class RubricItem:
    criterion: str
    category: str
    weight: float


Verifier = Callable[[Path, str], float]
# ``bad(key, message)``: an error naming the file being read and the key at fault.
Bad = Callable[[str, str], SuiteError]


@dataclass(frozen=True)
class Task:
    id: str  # the folder name
    path: Path  # the task folder
    prompt: str
    servers: tuple[str, ...]
    files: dict[str, str] = field(default_factory=dict)
    git_init: bool = False
    checks: Checks = Checks()
    rubric: tuple[RubricItem, ...] = ()
    verify: Verifier | None = None

    @property
    def scored(self) -> bool:
        return self.checks.count() > 0 or self.verify is not None


@dataclass(frozen=True)
class Suite:
    path: Path
    name: str
    servers: dict[str, Any]  # the raw mcpServers entries, ${...} not yet expanded
    tasks: dict[str, Task]
    selections: dict[str, tuple[str, ...]] = field(default_factory=dict)
    site: Path | None = None

    def select(self, names: list[str] | None) -> list[Task]:
        """Tasks by id or selection name (``smoke``), in the order named, each once; all (in
        suite order) when None."""
        if not names:
            return list(self.tasks.values())
        wanted: list[str] = []
        for name in names:
            ids = self.selections.get(name, (name,))
            for task_id in ids:
                if task_id not in self.tasks:
                    known = ", ".join([*self.selections, *self.tasks])
                    raise SuiteError(f"{self.path}: no task or selection {name!r} "
                                     f"(known: {known})")
                if task_id not in wanted:
                    wanted.append(task_id)
        return [self.tasks[t] for t in wanted]


def load_suite(path: Path) -> Suite:
    path = Path(path)
    if not path.is_dir():
        raise SuiteError(f"{path}: not a folder (a suite is a folder with servers.json and "
                         "one sub-folder per task)")
    servers = _load_servers(path / "servers.json")
    helpers_file = path / f"{HELPERS}.py"
    helpers = _import(helpers_file) if helpers_file.exists() else None
    tasks: dict[str, Task] = {}
    for task_file in sorted(path.glob("*/task.toml")):
        task = _load_task(task_file, servers, helpers)
        tasks[task.id] = task
    if not tasks:
        raise SuiteError(f"{path}: no tasks (expected sub-folders with a task.toml)")
    selections = _load_selections(path / "suite.toml", tasks)
    site = path / "site"
    return Suite(path=path, name=path.name, servers=servers, tasks=tasks,
                 selections=selections, site=site if site.is_dir() else None)


def _load_servers(file: Path) -> dict[str, Any]:
    from deskmate.tools.hub.dialects import ImportError_, parse_servers

    if not file.exists():
        raise SuiteError(f"{file}: missing (a suite names its MCP servers there)")
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SuiteError(f"{file}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict) or not servers:
        raise SuiteError(f"{file}: expected {{\"mcpServers\": {{NAME: {{...}}}}}}")
    try:
        result = parse_servers({"mcpServers": substitute(servers, PLACEHOLDERS)}, str(file))
    except ImportError_ as exc:
        raise SuiteError(str(exc)) from exc
    skipped = [w for w in result.warnings if "skipped" in w]
    if skipped:
        raise SuiteError(f"{file}: " + "; ".join(skipped))
    return servers


def substitute(value: Any, variables: dict[str, str]) -> Any:
    """Replace ``${NAME}`` for the given names in every string of a JSON value."""
    if isinstance(value, str):
        for name, text in variables.items():
            value = value.replace("${" + name + "}", text)
        return value
    if isinstance(value, dict):
        return {k: substitute(v, variables) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, variables) for v in value]
    return value


def _load_task(file: Path, servers: dict[str, Any], helpers: ModuleType | None) -> Task:
    data, bad = _read_toml(file)
    for key in data:
        if key not in TASK_KEYS:
            raise bad(key, f"unknown key (known: {', '.join(TASK_KEYS)})")
    prompt = data.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise bad("prompt", "a non-empty string is required")
    names = _strings(data.get("servers", []), "servers", bad)
    for name in names:
        if name not in servers:
            raise bad("servers", f"{name!r} is not in servers.json "
                      f"(there: {', '.join(servers)})")
    setup = _table(data.get("setup", {}), "setup", bad)
    for key in setup:
        if key not in ("files", "git_init"):
            raise bad(f"setup.{key}", "unknown key (known: files, git_init)")
    files = _table(setup.get("files", {}), "setup.files", bad)
    for rel, content in files.items():
        _relative(rel, f"setup.files.{rel}", bad)
        if not isinstance(content, str):
            raise bad(f"setup.files.{rel}", "the content must be a string")
    git_init = setup.get("git_init", False)
    if not isinstance(git_init, bool):
        raise bad("setup.git_init", f"expected true or false, got {git_init!r}")
    verify_file = file.parent / "verify.py"
    task = Task(id=file.parent.name, path=file.parent, prompt=prompt, servers=tuple(names),
                files=dict(files), git_init=git_init,
                checks=_checks(_table(data.get("check", {}), "check", bad), bad),
                rubric=_rubric(data.get("rubric", []), bad),
                verify=_load_verify(verify_file, helpers) if verify_file.exists() else None)
    return task


def _checks(table: dict[str, Any], bad: Bad) -> Checks:
    for key in table:
        if key not in CHECK_KEYS:
            raise bad(f"check.{key}", f"unknown check (known: {', '.join(CHECK_KEYS)})")
    regex = table.get("answer_regex", "")
    if not isinstance(regex, str):
        raise bad("check.answer_regex", "expected a string")
    try:
        re.compile(regex)
    except re.error as exc:
        raise bad("check.answer_regex", f"not a valid regular expression ({exc})") from exc
    contains = _table(table.get("file_contains", {}), "check.file_contains", bad)
    paths = {}
    for rel, needles in contains.items():
        _relative(rel, f"check.file_contains.{rel}", bad)
        paths[rel] = tuple(_strings(needles, f"check.file_contains.{rel}", bad))
    exists = _strings(table.get("file_exists", []), "check.file_exists", bad)
    absent = _strings(table.get("file_absent", []), "check.file_absent", bad)
    for rel in [*exists, *absent]:
        _relative(rel, "check", bad)
    return Checks(answer_contains=tuple(_strings(table.get("answer_contains", []),
                                                 "check.answer_contains", bad)),
                  answer_regex=regex, file_exists=tuple(exists), file_contains=paths,
                  file_absent=tuple(absent))


def _rubric(items: Any, bad: Bad) -> tuple[RubricItem, ...]:
    if not isinstance(items, list):
        raise bad("rubric", "expected [[rubric]] tables")
    out = []
    for index, item in enumerate(items, 1):
        where = f"rubric #{index}"
        if not isinstance(item, dict):
            raise bad(where, "expected a table {criterion, category, weight}")
        extra = set(item) - {"criterion", "category", "weight"}
        if extra:
            raise bad(where, f"unknown key {sorted(extra)[0]!r}")
        criterion, category = item.get("criterion"), item.get("category")
        weight = item.get("weight", 1.0)
        if not isinstance(criterion, str) or not criterion.strip():
            raise bad(f"{where}.criterion", "a non-empty string is required")
        if category not in CATEGORIES:
            raise bad(f"{where}.category", f"{category!r} is not one of {', '.join(CATEGORIES)}")
        if isinstance(weight, bool) or not isinstance(weight, int | float) or weight <= 0:
            raise bad(f"{where}.weight", f"expected a positive number, got {weight!r}")
        out.append(RubricItem(criterion, category, float(weight)))
    return tuple(out)


def _import(file: Path, helpers: ModuleType | None = None) -> ModuleType:
    """Run a suite's Python file as a fresh module; ``import helpers`` finds the suite's.

    ``helpers`` sits in ``sys.modules`` only while the file runs, so two suites with
    their own helpers.py never see each other's.
    """
    name = f"_deskmate_eval_{file.parent.name}_{file.stem}_{abs(hash(file))}"
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    with _IMPORTING:
        shadowed = sys.modules.get(HELPERS)
        if helpers is not None:
            sys.modules[HELPERS] = helpers
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise SuiteError(f"{file}: fails to import: {type(exc).__name__}: {exc}") from exc
        finally:
            if helpers is not None:
                if shadowed is None:
                    sys.modules.pop(HELPERS, None)
                else:
                    sys.modules[HELPERS] = shadowed
    return module


def _load_verify(file: Path, helpers: ModuleType | None) -> Verifier:
    module = _import(file, helpers)
    # A suite's own code: what it defines is checked here, by callable() and the binding.
    verify: Verifier | None = getattr(module, "verify", None)
    if not callable(verify):
        raise SuiteError(f"{file}: defines no function verify(workspace, answer)")
    try:
        inspect.signature(verify).bind(Path("."), "")
    except TypeError as exc:
        raise SuiteError(f"{file}: verify must take (workspace: Path, answer: str): {exc}") \
            from exc
    return verify


def _load_selections(file: Path, tasks: dict[str, Task]) -> dict[str, tuple[str, ...]]:
    if not file.exists():
        return {}
    data, bad = _read_toml(file)
    out = {}
    for name, ids in _table(data.get("selections", {}), "selections", bad).items():
        ids = _strings(ids, f"selections.{name}", bad)
        for task_id in ids:
            if task_id not in tasks:
                raise bad(f"selections.{name}", f"no task {task_id!r} in this suite")
        out[name] = tuple(ids)
    return out


def _read_toml(file: Path) -> tuple[dict[str, Any], Bad]:
    """The file's table, and ``bad(key, message)``: an error that names the file and key."""
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise SuiteError(f"{file}: not valid TOML ({exc})") from exc

    def bad(key: str, message: str) -> SuiteError:
        return SuiteError(f"{file}: {key}: {message}")

    return data, bad


def _strings(value: Any, key: str, bad: Bad) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise bad(key, "expected a list of strings")
    return list(value)


def _table(value: Any, key: str, bad: Bad) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise bad(key, "expected a table")
    return value


def _relative(rel: str, key: str, bad: Bad) -> None:
    path = PurePosixPath(rel)
    if not rel or path.is_absolute() or ".." in path.parts:
        raise bad(key, f"{rel!r} must be a relative path inside the workspace")
