"""deskmate finetune as a user runs it: help, usage errors, `finetune use`, and the
progress lines; the CLI never imports torch itself."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from conftest import deskmate

from deskmate.finetune.progress import Done, Heldout, Step, Text, describe, parse_progress
from deskmate.finetune.spec import RunError, RunSpec, TaskSource, cpu_allowed


def test_help_and_bad_usage(home):
    result = deskmate("finetune", "--help", home=home)
    assert result.returncode == 0
    for option in ("--tasks", "--steps", "--group", "--judge", "--device", "--resume",
                   "--json-progress", "use"):
        assert option in result.stdout
    bad = deskmate("finetune", "--tasks", "bogus", "--model", "nothing.gguf", home=home)
    assert bad.returncode == 2 and "sessions, generate or suite:PATH" in bad.stderr
    missing = deskmate("finetune", "--resume", "42", home=home)
    assert missing.returncode == 2 and "no finetune run 42" in missing.stderr


def test_use_sets_the_adapter_in_the_config(home, monkeypatch):
    from deskmate.app import paths
    from deskmate.app.store import open_db
    from deskmate.app.store.db import transaction
    from deskmate.finetune.runs import start_run

    spec, run_dir = start_run(RunSpec(base="b.gguf", serving_gguf="b.gguf"))
    assert run_dir.parent == paths.data_dir() / "finetune"
    assert json.loads((run_dir / "spec.json").read_text())["run_id"] == spec.run_id
    assert deskmate("finetune", "use", str(spec.run_id), home=home).returncode == 1
    adapter = run_dir / "adapter.gguf"
    adapter.write_bytes(b"GGUF")
    with transaction(open_db()) as conn:
        conn.execute("INSERT INTO adapters (run_id, name, base_model, path, created_at) "
                     "VALUES (?, 'run-x', 'b.gguf', ?, 0)", (spec.run_id, str(adapter)))
    result = deskmate("finetune", "use", str(spec.run_id), home=home)
    assert result.returncode == 0, result.stderr
    config = tomllib.loads(paths.config_file().read_text())
    assert config["model"]["adapter"] == str(adapter)
    active = open_db().execute("SELECT active FROM adapters").fetchone()[0]
    assert active == 1


def test_progress_lines_parse_and_read_the_same_everywhere(tmp_path):
    wire = {"event": "step", "step": 3, "steps": 10, "reward_mean": 0.5, "reward_std": 0.25,
            "pass_rates": {"task_fulfillment": 0.5, "checks": 1.0}, "rollout_errors": 0,
            "groups_used": 2, "loss": 0.1, "kl": 0.0, "tokens_generated": 10,
            "tokens_trained": 20, "tokens_per_s": 812.4, "tokens_per_s_generate": 1.0,
            "tokens_per_s_train": 2.0, "step_s": 1.5, "eta_s": 90.0}
    step = parse_progress(json.dumps(wire) + "\n")
    assert isinstance(step, Step)
    assert step.to_json() == wire
    assert describe(step) == ("step 3/10 · reward 0.500 ± 0.250 · task fulfillment 50% "
                              "checks 100% · 812 tok/s · ETA 1.5 min")
    heldout = parse_progress('{"event": "heldout", "which": "base", "eval_run": 7, '
                             '"reward_mean": null, "tasks": 2, "from": "a newer deskmate"}')
    assert heldout == Heldout(which="base", eval_run=7, reward_mean=None, tasks=2)
    assert describe(heldout) == "held-out base: score – on 2 tasks"
    assert parse_progress("  ") is None
    assert parse_progress("Traceback (most recent call last):") == Text(
        message="Traceback (most recent call last):")
    assert isinstance(parse_progress('{"event": "step", "step": 1}'), Text)  # fields missing
    assert isinstance(parse_progress('{"event": "new-kind"}'), Text)
    done = Done(run_id=4, steps=2, adapter="a.gguf", adapter_id=1)
    assert "heldout" not in done.to_json() and parse_progress(json.dumps(done.to_json())) == done


def test_task_sources_and_cpu_rule(tmp_path):
    assert TaskSource.parse("suite:/x/y") == TaskSource("suite", Path("/x/y"))
    assert str(TaskSource.parse("suite:/x/y")) == "suite:/x/y"
    assert TaskSource.parse("generate").kind == "generate"
    with pytest.raises(RunError, match="sessions, generate or suite:PATH"):
        _ = RunSpec(base="b", serving_gguf="b", tasks="bogus").source
    small, big = tmp_path / "small.gguf", tmp_path / "big.gguf"
    small.write_bytes(b"x" * 10)
    with open(big, "wb") as handle:
        handle.truncate(2_000_000_000)  # sparse
    assert cpu_allowed(str(small)) and not cpu_allowed(str(big))
    assert not cpu_allowed("unsloth/Qwen3-4B-Instruct-2507")


def test_a_user_error_ends_the_run_with_its_message(home, tmp_path, capsys):
    """RunError from inside the run becomes an error line, exit code 2, a failed row."""
    import signal

    from deskmate.app.store import open_db
    from deskmate.finetune.run import main
    from deskmate.finetune.runs import start_run

    big = tmp_path / "big.gguf"
    with open(big, "wb") as handle:
        handle.truncate(2_000_000_000)
    spec, run_dir = start_run(RunSpec(base=str(big), serving_gguf=str(big), device="cpu"))
    handler = signal.getsignal(signal.SIGINT)
    try:
        code = main([str(run_dir / "spec.json"), "--json-progress"])
    finally:
        signal.signal(signal.SIGINT, handler)
    assert code == 2
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["event"] == "error" and "tiny models only" in line["message"]
    status = open_db().execute("SELECT status FROM runs WHERE id = ?",
                               [spec.run_id]).fetchone()[0]
    assert status == "failed"


def test_tasks_lists_excludes_and_includes(home):
    from conftest import rated_session

    from deskmate.app.store import open_db
    from deskmate.finetune.tasks import from_sessions, task_key

    db = open_db()
    for prompt in ("Which files are in docs/?", "Who wrote notes.md?"):
        rated_session(db, prompt, "an answer")
    listed = deskmate("finetune", "tasks", home=home)
    assert listed.returncode == 0, listed.stderr
    key = task_key("Who wrote notes.md?")
    assert f"{key}  included  rated up  Who wrote notes.md?" in listed.stdout.splitlines()
    out = deskmate("finetune", "tasks", "--exclude", key[:6], home=home)
    assert out.returncode == 0 and f"{key}  excluded" in out.stdout
    assert [t.prompt for t in from_sessions(db)] == ["Which files are in docs/?"]
    bad = deskmate("finetune", "tasks", "--include", "zzz", home=home)
    assert bad.returncode == 2 and "names no task" in bad.stderr
    back = deskmate("finetune", "tasks", "--include", key, home=home)
    assert back.returncode == 0 and len(from_sessions(db)) == 2


def test_without_the_extras_the_cli_says_how_to_install_them(home, tiny_model_path,
                                                             monkeypatch):
    from click.testing import CliRunner

    from deskmate.app import paths
    from deskmate.app.cli import main
    from deskmate.app.store import open_db
    from deskmate.finetune import extras
    from deskmate.finetune.runs import list_runs

    real = extras.find_spec
    monkeypatch.setattr(extras, "find_spec", lambda name: None if name == "peft" else real(name))
    result = CliRunner().invoke(main, ["finetune", "--model", str(tiny_model_path),
                                       "--device", "cpu"])
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert "peft" in line and "torch" not in line.split("install it")[0]
    assert extras.install_command() in line and "-m pip install" in line
    assert "Traceback" not in result.output
    assert not list((paths.data_dir() / "finetune").glob("run-*"))
    assert list_runs(open_db()) == []


def test_the_install_command_reinstalls_this_checkout_editable():
    import sys

    from deskmate.finetune.extras import check_extras

    found = check_extras("cpu")
    assert found.ok and found.missing == ()
    assert found.command.startswith(sys.executable)
    # the test venv is `make`'s editable install of this checkout
    assert found.command.endswith(f"-e '{Path(__file__).parent.parent}[finetune]'")


def test_the_cli_applies_the_hardware_plan_as_the_screen_does(home, tiny_model_path,
                                                              monkeypatch):
    from click.testing import CliRunner

    from deskmate.app.cli import finetune as cli
    from deskmate.app.cli import main
    from deskmate.finetune.hardware import CPU_SETTINGS

    monkeypatch.setattr(cli, "_follow", lambda run_dir, json_progress: 0)  # no child
    result = CliRunner().invoke(main, ["finetune", "--model", str(tiny_model_path),
                                       "--device", "cpu", "--steps", "3"])
    assert result.exit_code == 0, result.output
    [spec] = home.rglob("run-*/spec.json")
    grpo = json.loads(spec.read_text())["grpo"]
    # The CPU plan's short rollouts, and what the user typed over it.
    assert grpo == {**CPU_SETTINGS, "steps": 3, "seed": 0}
    # The sampler: GRPOConfig's auto (llama.cpp on the serving GGUF) unless chosen.
    spec.parent.rename(spec.parent.with_name("run-old"))
    result = CliRunner().invoke(main, ["finetune", "--model", str(tiny_model_path),
                                       "--device", "cpu", "--rollout-engine", "policy"])
    assert result.exit_code == 0, result.output
    [spec] = [p for p in home.rglob("run-*/spec.json") if p.parent.name != "run-old"]
    assert json.loads(spec.read_text())["grpo"]["rollout_engine"] == "policy"
