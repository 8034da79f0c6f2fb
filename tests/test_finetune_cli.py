"""deskmate finetune as a user runs it: help, usage errors, `finetune use`, and the
progress lines; the CLI never imports torch itself."""

from __future__ import annotations

import json
import tomllib

from conftest import deskmate

from deskmate.finetune.run import RunSpec, _human, cpu_allowed


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


def test_progress_line_and_cpu_rule(tmp_path):
    line = {"event": "step", "step": 3, "steps": 10, "reward_mean": 0.5, "reward_std": 0.25,
            "pass_rates": {"task_fulfillment": 0.5, "checks": 1.0}, "tokens_per_s": 812.4,
            "eta_s": 90.0}
    assert _human(line) == ("step 3/10  reward 0.500 ± 0.250  task_fulfillment=50% "
                            "checks=100%  812 tok/s  ETA 1.5 min")
    small, big = tmp_path / "small.gguf", tmp_path / "big.gguf"
    small.write_bytes(b"x" * 10)
    with open(big, "wb") as handle:
        handle.truncate(2_000_000_000)  # sparse
    assert cpu_allowed(str(small)) and not cpu_allowed(str(big))
    assert not cpu_allowed("unsloth/Qwen3-4B-Instruct-2507")


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
