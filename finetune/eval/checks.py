"""A task's deterministic score: its declarative checks and its verify.py.

Each assertion is one check worth 0 or 1: every string of ``answer_contains``, the
``answer_regex``, every path of ``file_exists`` / ``file_absent``, every (path,
substring) of ``file_contains``; ``verify.py`` adds one check worth its value in
[0, 1]. The score is their mean; success is a score of exactly 1.
"""

from __future__ import annotations

import re
import traceback
from dataclasses import dataclass
from pathlib import Path

from deskmate.finetune.eval.suite import Task


@dataclass(frozen=True)
class CheckResult:
    name: str  # e.g. "file_contains notes.md: 'Paris'"
    value: float
    detail: str = ""  # why it failed, when it did


@dataclass(frozen=True)
class Score:
    value: float | None  # None: the task has no deterministic check (rubric only)
    checks: tuple[CheckResult, ...]

    @property
    def success(self) -> bool | None:
        return None if self.value is None else self.value == 1.0


def score_task(task: Task, workspace: Path, answer: str) -> Score:
    results = [*_declarative(task, workspace, answer)]
    if task.verify is not None:
        results.append(run_verify(task, workspace, answer))
    if not results:
        return Score(None, ())
    return Score(sum(r.value for r in results) / len(results), tuple(results))


def _declarative(task: Task, workspace: Path, answer: str):
    c = task.checks
    folded = answer.casefold()
    for needle in c.answer_contains:
        ok = needle.casefold() in folded
        yield CheckResult(f"answer_contains {needle!r}", float(ok),
                          "" if ok else "not in the final answer")
    if c.answer_regex:
        ok = re.search(c.answer_regex, answer) is not None
        yield CheckResult(f"answer_regex {c.answer_regex!r}", float(ok),
                          "" if ok else "no match in the final answer")
    for rel in c.file_exists:
        ok = (workspace / rel).exists()
        yield CheckResult(f"file_exists {rel}", float(ok), "" if ok else "missing")
    for rel, needles in c.file_contains.items():
        text = _read(workspace / rel)
        for needle in needles:
            ok = text is not None and needle in text
            why = "" if ok else ("file missing" if text is None else "not in the file")
            yield CheckResult(f"file_contains {rel}: {needle!r}", float(ok), why)
    for rel in c.file_absent:
        ok = not (workspace / rel).exists()
        yield CheckResult(f"file_absent {rel}", float(ok), "" if ok else "still there")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def run_verify(task: Task, workspace: Path, answer: str) -> CheckResult:
    """verify.py's value; an exception or a value outside [0, 1] scores 0, with why."""
    assert task.verify is not None
    name = f"verify.py ({task.id})"
    try:
        value = task.verify(workspace, answer)
    except Exception as exc:
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return CheckResult(name, 0.0, f"raised {type(exc).__name__}: {exc} "
                                      f"(line {where.lineno})")
    if isinstance(value, bool):
        value = float(value)
    if not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        return CheckResult(name, 0.0, f"returned {value!r}, not a number in [0, 1]")
    return CheckResult(name, float(value), "" if value == 1.0 else "verify < 1")
