"""The train / held-out / dev / dev2 / dev3 / dev4 split of the local suite
(assets/eval/SPLIT.md) and the held-out tasks' verifiers: each scores a correct outcome 1.0
and a wrong one below 1.0."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git_out, writes

from deskmate.finetune.eval.suite import load_suite
from deskmate.finetune.eval.workspace import prepare_workspace

LOCAL = Path(__file__).resolve().parent.parent / "assets" / "eval" / "local"


def _hashed_out(task_id: str) -> bool:
    return int(hashlib.sha256(task_id.encode()).hexdigest(), 16) % 3 == 0


def test_the_split_follows_its_rule_and_covers_every_task_once():
    suite = load_suite(LOCAL)
    train, held = set(suite.selections["train"]), set(suite.selections["heldout"])
    new, dev = set(suite.selections["heldout-new"]), set(suite.selections["dev"])
    dev2, dev3 = set(suite.selections["dev2"]), set(suite.selections["dev3"])
    dev4 = set(suite.selections["dev4"])
    assert train | held | dev | dev2 | dev3 | dev4 == set(suite.tasks)
    assert not train & held and not dev & (train | held) and not dev2 & (train | held | dev)
    assert not dev3 & (train | held | dev | dev2)
    assert not dev4 & (train | held | dev | dev2 | dev3)
    assert held == set(suite.selections["heldout-split"]) | new
    # (the dev splits are written as such: the hash decides between train and held-out)
    assert set(suite.selections["heldout-split"]) == {
        t for t in suite.tasks if _hashed_out(t) and t not in new | dev | dev2 | dev3 | dev4}
    assert len(dev) >= 20 and all(t.startswith("dev-") for t in dev)
    assert len(dev2) >= 20 and all(t.startswith("dev2-") for t in dev2)
    assert len(dev3) >= 20 and all(t.startswith("dev3-") for t in dev3)
    assert len(dev4) >= 20 and all(t.startswith("dev4-") for t in dev4)
    assert not any(_hashed_out(t) for t in train)
    assert set(suite.selections["train-quick"]) == set(suite.selections["quick"]) & train
    assert len(new) >= 15 and sum(len(suite.tasks[t].servers) > 1 for t in new) >= 10


def _commit(workspace: Path, rel: str, text: str, message: str) -> None:
    (workspace / rel).write_text(text)
    git_out(workspace, "add", rel)
    git_out(workspace, "commit", "-q", "-m", message)


def _memory(workspace: Path, *items: dict) -> None:
    with (workspace / ".memory.jsonl").open("a") as out:
        out.write("".join(json.dumps(item) + "\n" for item in items))


def _entity(name: str, kind: str, *notes: str) -> dict:
    return {"type": "entity", "name": name, "entityType": kind, "observations": list(notes)}


def _convert(hhmm: str, source: str, target: str) -> str:
    """The suite's own helpers.convert (the verifiers' reading of 'today')."""
    spec = importlib.util.spec_from_file_location("suite_helpers", LOCAL / "helpers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.convert(hhmm, source, target)


def _offices_open(workspace: Path) -> str:
    zones = json.loads((workspace / "offices.json").read_text())
    return ", ".join(office for office, zone in zones.items()
                     if "09:00" <= _convert("14:00", "UTC", zone) < "17:00")


def _london(workspace: Path) -> str:
    (workspace / "london.txt").write_text(_convert("16:45", "Asia/Kathmandu", "Europe/London"))
    return ""


# task id -> a correct outcome (changes the workspace, returns the answer)
SOLUTIONS: dict[str, Callable[[Path], str]] = {
    "fs-average-scores": writes("average.txt", "76.8\n"),
    "fs-priciest-expense": lambda w: "The hotel cost the most; the total is 1014.74 euros.",
    "fs-fix-json": writes("settings.json", '{"theme": "dark", "font_size": 14, "autosave": true}',
                          "The stray comma followed autosave."),
    "fs-count-errors": writes("errors.txt", "3", "Last ERROR: disk quota exceeded"),
    "fs-category-totals": writes("totals.json", '{"books": 25, "games": 65, "music": 15.0}'),
    "git-bump-commit": lambda w: _commit(w, "version.txt", "1.4.3\n", "Bump version to 1.4.3")
    or "",
    "git-branch-from-file": lambda w: git_out(w, "branch", "feature/export-csv"),
    "git-todo-count-commit": lambda w: _commit(w, "todo-count.txt", "3\n", "Record TODO count")
    or "",
    "mem-active-to-file": writes("active.txt", "Borealis\nDriftwood\n"),
    "mem-cities-from-json": lambda w: _memory(
        w, *(_entity(n, "person") for n in ("Aiko", "Bruno", "Chiara")),
        *(_entity(c, "city") for c in ("Osaka", "Porto")),
        *({"type": "relation", "from": p, "relationType": "works_in", "to": c}
          for p, c in (("Aiko", "Osaka"), ("Bruno", "Porto"), ("Chiara", "Osaka")))) or "",
    "mem-team-roster": writes("roster.md", "- Greta: engineer\n- Malik: product manager\n"
                                           "- Yusuf: designer\n"),
    "time-meeting-file": _london,
    "time-offices-open": _offices_open,
    "every-sum-file": writes("sum.txt", "99255\n"),
    "every-env-memory": lambda w: _memory(w, _entity("config", "setting", "secret: marmalade"))
    or "",
}

# task id -> a plausible wrong outcome (a slip a small model makes)
MISTAKES: dict[str, Callable[[Path], str]] = {
    "fs-average-scores": writes("average.txt", "76.83\n"),
    "fs-priciest-expense": lambda w: "The conference pass cost the most; the total is 1014.74.",
    "fs-fix-json": lambda w: "The stray comma followed autosave.",  # reported, not fixed
    "fs-count-errors": writes("errors.txt", "7", "Last ERROR: disk quota exceeded"),
    "fs-category-totals": writes("totals.json", '{"books": 12, "games": 40, "music": 15}'),
    "git-bump-commit": lambda w: _commit(w, "version.txt", "1.5.0\n", "Bump version to 1.5.0")
    or "",
    "git-branch-from-file": lambda w: git_out(w, "branch", "export-csv"),
    "git-todo-count-commit": writes("todo-count.txt", "3\n"),  # written, not committed
    "mem-active-to-file": writes("active.txt", "Borealis\nDriftwood\nNoor\n"),
    "mem-cities-from-json": lambda w: _memory(
        w, *(_entity(n, "person") for n in ("Aiko", "Bruno", "Chiara"))) or "",
    "mem-team-roster": writes("roster.md", "- Greta: engineer\n- Malik: product manager\n"
                                           "- Orbit: flagship\n- Yusuf: designer\n"),
    "time-meeting-file": writes("london.txt", "16:45"),
    "time-offices-open": lambda w: "Toronto, Berlin, Sydney, Lagos",
    "every-sum-file": writes("sum.txt", "99256\n"),
    "every-env-memory": lambda w: _memory(w, _entity("settings", "setting", "secret: marmalade"))
    or "",
}


def test_every_new_task_has_a_checked_solution_and_mistake():
    assert set(SOLUTIONS) == set(MISTAKES) == set(load_suite(LOCAL).selections["heldout-new"])


@pytest.mark.parametrize("task_id", sorted(SOLUTIONS))
def test_a_new_tasks_verifier_tells_right_from_wrong(task_id, tmp_path):
    task = load_suite(LOCAL).tasks[task_id]
    assert task.verify is not None
    scores = []
    for name, outcome in (("right", SOLUTIONS), ("wrong", MISTAKES)):
        workspace = prepare_workspace(task, tmp_path / name)
        answer = outcome[task_id](workspace)
        scores.append(task.verify(workspace, answer or ""))
    untouched = prepare_workspace(task, tmp_path / "untouched")
    right, wrong = scores
    assert right == 1.0, (task_id, scores)
    assert wrong < 1.0, (task_id, scores)
    assert task.verify(untouched, "") < 1.0, task_id
