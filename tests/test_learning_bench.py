"""The parts of benchmarks/learning.py: the task family, its split, its scoring, and one
held-out rollout of the tiny model on llama.cpp against the real MCP servers."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from deskmate.tools.hub import Hub

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/ is no package

from benchmarks.learning import evaluate
from benchmarks.learning_tasks import (
    environment,
    make_family,
    score,
    servers,
    write_workspace,
)


def test_the_split_is_disjoint_and_covers_every_kind():
    family = make_family()
    assert len(family.train) == len(family.heldout) == 30
    assert {t.split for t in family.train} == {"train"}
    assert {t.split for t in family.heldout} == {"heldout"}
    assert not {t.key for t in family.train} & {t.key for t in family.heldout}
    for kind in ("time", "sum", "echo", "file"):
        train = {t.prompt for t in family.train if t.metadata["kind"] == kind}
        held = {t.prompt for t in family.heldout if t.metadata["kind"] == kind}
        assert train and held
    # the values themselves are disjoint: a held-out city never trains
    zones = {t.metadata["zone"] for t in family.train if t.metadata["kind"] == "time"}
    assert zones.isdisjoint(t.metadata["zone"] for t in family.heldout
                            if t.metadata["kind"] == "time")
    assert make_family() == family  # the same tasks every run


def test_score_weighs_the_tool_its_arguments_and_the_answer(tmp_path):
    family = make_family()
    tokyo = next(t for t in family.train if t.metadata.get("zone") == "Asia/Tokyo")
    now = datetime(2026, 12, 2, 1, 30, tzinfo=ZoneInfo("UTC"))
    call = [("time", "get_current_time", {"timezone": "Asia/Tokyo"})]
    assert score(tokyo, call, "It is 10:28 in Tokyo.", tmp_path, now) == 1.0
    assert score(tokyo, call, "It is 11:30 in Tokyo.", tmp_path, now) == 0.5
    assert score(tokyo, [], "It is 10:30 in Tokyo.", tmp_path, now) == 0.5
    wrong_zone = [("time", "get_current_time", {"timezone": "Europe/Paris"})]
    assert score(tokyo, wrong_zone, "no idea", tmp_path, now) == 0.25  # the right tool
    assert score(tokyo, wrong_zone + call, "no idea", tmp_path, now) == 0.5
    other_tool = [("time", "convert_time", {"timezone": "Asia/Tokyo"})]
    assert score(tokyo, other_tool, "no idea", tmp_path, now) == 0.0
    add = next(t for t in family.heldout if t.metadata["kind"] == "sum")
    a, b = add.metadata["a"], add.metadata["b"]
    assert score(add, [("everything", "get-sum", {"a": a, "b": b})], f"{a + b}", tmp_path) \
        == 1.0
    assert score(add, [], f"{a + b + 1}", tmp_path) == 0.0
    assert score(add, [("everything", "get-sum", {"a": a, "b": 1})], "", tmp_path) == 0.25


@pytest.mark.slow
def test_one_heldout_rollout_of_the_tiny_model_on_real_servers(tiny_model_path, mcp_bin,
                                                               tmp_path):
    family = make_family()
    task = next(t for t in family.heldout if t.metadata["kind"] == "file")
    workspace = write_workspace(tmp_path / "workspace")
    with Hub(servers(workspace, mcp_bin), tmp_path / "logs") as hub:
        assert all(s.status == "ready" for s in hub.start()), hub.states()
        names = {(t.server, t.name) for t in hub.tools()}
        assert names == {("time", "get_current_time"), ("everything", "echo"),
                         ("everything", "get-sum"), ("filesystem", "read_text_file")}
        env = environment(hub, workspace)
        with env(task) as world:  # the prompt names the real file of the workspace
            assert str(workspace) in world.prompt
            assert Path(world.prompt.split("file ")[-1].rstrip("?")).is_file()
        result = evaluate(tiny_model_path, None, [task], env, seed=0, max_tokens=32,
                          max_steps=2)
    assert result.score in (0.0, 0.5, 1.0)
    assert sum(result.statuses.values()) == 1
    assert len(result.answers) == 1 and result.answers[0][0] == task.key
