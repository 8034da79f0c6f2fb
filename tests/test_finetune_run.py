"""The run's preparation: tasks from the store with rubrics, the editable rubrics.toml,
and a resumed run that trains on exactly the tasks it started with."""

from __future__ import annotations

import contextlib
import json
import re

import pytest
from conftest import rated_session

from deskmate.app.store import open_db
from deskmate.finetune.pipeline import _prepare_tasks
from deskmate.finetune.rubrics import load_toml
from deskmate.finetune.spec import RunSpec


def test_prepare_tasks_stores_lists_and_resumes(home, tmp_path):
    db = open_db()
    for i, prompt in enumerate(["Which files are in docs/?", "What changed in the last commit?",
                                "How many open issues are there?", "Who wrote notes.md?"]):
        rated_session(db, prompt, f"answer {i}")
    spec = RunSpec(base="b.gguf", serving_gguf="b.gguf", heldout=0.25)
    events = []

    def no_judge():
        raise AssertionError("session tasks come with criteria: no judge call")

    with contextlib.ExitStack() as stack:
        tasks, hub = _prepare_tasks(spec, db, tmp_path, no_judge, stack, events.append)
    assert hub is None and len(tasks) == 4 and all(t.id for t in tasks)
    assert [t.split for t in tasks].count("heldout") == 1
    assert json.loads((tmp_path / "tasks.json").read_text()) == [t.id for t in tasks]
    rubrics = load_toml(tmp_path / "rubrics.toml")
    assert [e.key for e in rubrics.entries] == [t.key for t in tasks]
    assert rubrics.entries[0].rubric == tasks[0].rubric
    rated_session(db, "A new prompt after the run started", "x")
    with contextlib.ExitStack() as stack:
        again, _ = _prepare_tasks(spec, db, tmp_path, no_judge, stack, events.append)
    assert [(t.id, t.prompt, t.split, t.rubric) for t in again] == [
        (t.id, t.prompt, t.split, t.rubric) for t in tasks]


def test_heldout_suite_tasks_are_scored_by_the_eval_harness(home, tmp_path, monkeypatch):
    """verify.py (which training's answer checks lack) decides the held-out score."""
    from deskmate.app.agent.scripted import ScriptedModel
    from deskmate.finetune.heldout import evaluate_heldout
    from deskmate.finetune.judge import Judge
    from deskmate.finetune.pipeline import _store_adapter
    from deskmate.finetune.runs import start_run
    from deskmate.finetune.tasks import from_suite, save_tasks

    suite = tmp_path / "suite"
    (suite / "t1").mkdir(parents=True)
    (suite / "servers.json").write_text(json.dumps(
        {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}))
    (suite / "t1" / "task.toml").write_text('prompt = "What is six times seven?"\n')
    (suite / "t1" / "verify.py").write_text(
        "def verify(workspace, answer):\n    return float('42' in answer)\n")
    monkeypatch.setattr("deskmate.app.llm.llamacpp.LlamaCppModel",
                        lambda path, *, context, seed, adapter=None:
                        ScriptedModel(["It is 42." if adapter else "It is 41."]))
    spec, _ = start_run(RunSpec(base="b.gguf", serving_gguf="b.gguf",
                                tasks=f"suite:{suite}", mode="eager"))
    db = open_db()
    adapter = tmp_path / "adapter.gguf"
    adapter_id = _store_adapter(db, spec, adapter)
    events = []
    out = evaluate_heldout(db, spec, save_tasks(db, from_suite(suite)), Judge(None), None,
                           adapter, adapter_id, events.append)
    assert out["base"]["reward_mean"] == 0.0 and out["adapter"]["reward_mean"] == 1.0
    for which in ("base", "adapter"):
        run_id = out[which]["eval_run"]
        config = json.loads(db.execute("SELECT config FROM runs WHERE id = ?",
                                       [run_id]).fetchone()[0])
        assert (config["finetune_run"], config["which"]) == (spec.run_id, which)
        used = db.execute("SELECT adapter_id FROM eval_results WHERE run_id = ?",
                          [run_id]).fetchall()
        assert used == [(adapter_id if which == "adapter" else None,)]
    assert [e.which for e in events] == ["base", "adapter"]


def test_edited_rubric_weights_reach_the_run(home, tmp_path):
    db = open_db()
    rated_session(db, "Which files are in docs/?", "a.md")
    edited = tmp_path / "edited.toml"
    edited.write_text("[weights]\ntask_fulfillment = 3\n")
    spec = RunSpec(base="b.gguf", serving_gguf="b.gguf", rubrics=str(edited), heldout=0)
    with contextlib.ExitStack() as stack:
        _prepare_tasks(spec, db, tmp_path, None, stack, [].append)
    assert load_toml(tmp_path / "rubrics.toml").weights["task_fulfillment"] == 3.0


def test_a_suite_run_serves_its_site_to_every_rollout(home, tmp_path):
    """run() gives suite tasks their own worlds: ${SITE_URL} is the suite's site, served
    for the whole run and stopped with it."""
    import urllib.request

    from deskmate.app.agent.scripted import ScriptedModel
    from deskmate.finetune.environment import run_in
    from deskmate.finetune.pipeline import _environment
    from deskmate.finetune.rollout import RolloutSettings
    from deskmate.finetune.tasks import from_suite

    suite = tmp_path / "suite"
    (suite / "t1").mkdir(parents=True)
    (suite / "site").mkdir()
    (suite / "site" / "price.txt").write_text("12.50")
    (suite / "servers.json").write_text(json.dumps(
        {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}))
    (suite / "t1" / "task.toml").write_text('prompt = "What does ${SITE_URL}/price.txt say?"\n'
                                            '[check]\nanswer_contains = ["12.50"]\n')
    spec = RunSpec(base="b.gguf", serving_gguf="b.gguf", tasks=f"suite:{suite}")

    def read_the_page(messages):
        url = re.search(r"(http://\S+?/price\.txt)", messages[-1].content).group(1)
        seen.append(url)
        return urllib.request.urlopen(url, timeout=10).read().decode()

    seen: list[str] = []
    with contextlib.ExitStack() as stack:
        environment = _environment(spec, None, open_db(), stack)
        rollout = run_in(environment, ScriptedModel([read_the_page]), from_suite(suite)[0],
                         settings=RolloutSettings(mode="eager"))
        assert (rollout.answer, rollout.checks, rollout.error) == ("12.50", 1.0, "")
    with pytest.raises(OSError):
        urllib.request.urlopen(seen[0], timeout=2)


def test_suite_tasks_with_checks_get_no_judge_rubric(home, tmp_path):
    """File checks and verify.py score a suite task in its workspace: no judge needed."""
    suite = tmp_path / "suite"
    for name, task in {"files": '[check]\nfile_exists = ["out.txt"]\n',
                       "verified": "", "bare": ""}.items():
        (suite / name).mkdir(parents=True)
        (suite / name / "task.toml").write_text(
            f'prompt = "Task {name}"\nservers = ["time"]\n{task}')
    (suite / "verified" / "verify.py").write_text(
        "def verify(workspace, answer):\n    return 1.0\n")
    (suite / "servers.json").write_text(json.dumps(
        {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}))
    asked = []

    def judge_model():
        asked.append(True)
        raise RuntimeError("no judge here")

    spec = RunSpec(base="b.gguf", serving_gguf="b.gguf", tasks=f"suite:{suite}", heldout=0.0)
    with contextlib.ExitStack() as stack, pytest.raises(RuntimeError, match="no judge"):
        _prepare_tasks(spec, open_db(), tmp_path / "run", judge_model, stack, lambda e: None)
    assert asked == [True]  # the task without any check, only
    (suite / "bare" / "task.toml").write_text('prompt = "Task bare"\nservers = ["time"]\n'
                                               '[check]\nanswer_contains = ["x"]\n')
    (tmp_path / "run2").mkdir()
    with contextlib.ExitStack() as stack:
        tasks, _ = _prepare_tasks(spec, open_db(), tmp_path / "run2", judge_model, stack,
                                  lambda e: None)
    assert sorted(t.metadata["task"] for t in tasks) == ["bare", "files", "verified"]
    assert asked == [True] and all(t.metadata["checked"] for t in tasks)


def _no_policy(*args, **kwargs):
    raise AssertionError("the run must stop before loading the policy")


def test_an_architecture_the_exporter_refuses_stops_the_run_before_training(home, tmp_path,
                                                                             monkeypatch):
    """phi3 (phi4-mini) used to train for hours and then fail at the export."""
    from test_finetune_export import write_base

    from deskmate.finetune import pipeline, policy
    from deskmate.finetune.spec import RunError

    monkeypatch.setattr(policy, "load_policy", _no_policy)
    phi = write_base(tmp_path / "phi4-mini.gguf", "phi3")
    spec = RunSpec(base=str(phi), serving_gguf=str(phi), device="cpu")
    with pytest.raises(RunError, match=r"architecture 'phi3'.*llama, qwen2, qwen3"):
        pipeline.run(spec, tmp_path, lambda event: None)


def test_a_gguf_base_is_not_trained_on_the_gpu(home, tmp_path, monkeypatch, tiny_model_path):
    """It would load as full bf16 without gradient checkpointing under a 4-bit estimate."""
    from deskmate.app.llm.base import ModelError
    from deskmate.finetune import pipeline, policy
    from deskmate.finetune.spec import RunError

    monkeypatch.setattr(policy, "resolve_device", lambda device: "cuda")
    with pytest.raises(ModelError, match="Hugging Face checkpoint"):
        policy.load_policy(tiny_model_path, policy.PolicyConfig(device="cuda"))
    monkeypatch.setattr(policy, "load_policy", _no_policy)
    spec = RunSpec(base=str(tiny_model_path), serving_gguf=str(tiny_model_path),
                   device="cuda")
    with pytest.raises(RunError, match="Hugging Face checkpoint"):
        pipeline.run(spec, tmp_path, lambda event: None)


def test_lora_targets_keep_what_the_model_has_and_the_exporter_writes():
    import torch

    from deskmate.app.llm.base import ModelError
    from deskmate.finetune.policy import PolicyConfig, lora_targets

    class Phi3Layer(torch.nn.Module):  # phi3's fused projections
        def __init__(self) -> None:
            super().__init__()
            self.qkv_proj, self.o_proj = torch.nn.Linear(2, 6), torch.nn.Linear(2, 2)
            self.gate_up_proj, self.down_proj = torch.nn.Linear(2, 4), torch.nn.Linear(2, 2)

    assert lora_targets(Phi3Layer(), PolicyConfig().target_modules) == ("o_proj", "down_proj")
    with pytest.raises(ModelError, match="none of the LoRA targets"):
        lora_targets(torch.nn.Sequential(torch.nn.Linear(2, 2)), ("q_proj", "qkv_proj"))
