"""The CI smoke: `deskmate eval --tasks smoke` with the real tiny model, both modes.

SmolLM2-135M rarely solves a task, so this asserts the mechanics (servers start, the
agent runs in both modes, everything is scored and recorded, the JSON is whole), never
the score.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_smoke_selection_with_the_tiny_model(home, tiny_model_path, mcp_bin):
    env = {**os.environ, "DESKMATE_HOME": str(home), "DESKMATE_EVAL_BIN": os.pathsep.join(
        [str(mcp_bin / "py" / "bin"), str(mcp_bin / "npm" / "node_modules" / ".bin")])}
    done = subprocess.run(
        [sys.executable, "-m", "deskmate.app.cli", "eval",
         "--suite", str(ROOT / "assets/eval/local"),
         "--tasks", "smoke", "--mode", "both", "--model", str(tiny_model_path),
         "--max-steps", "2", "--max-tokens", "96", "--temperature", "0", "--json"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=540)
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads(done.stdout.strip().splitlines()[-1])
    smoke = {"fs-read-config", "every-sum", "fetch-price"}
    for mode in ("code", "eager"):
        m = data["modes"][mode]
        assert set(m["tasks"]) == smoke and m["runs"] == 3
        assert m["errors"] == 0, done.stderr[-3000:]  # every server and the sandbox started
        assert 0.0 <= m["success_rate"] <= 1.0 and 0.0 <= m["mean_score"] <= 1.0
        # (SmolLM2's template drops the tool schemas: eager prompts are short)
        assert m["model_calls_mean"] >= 1 and m["prompt_tokens_mean"] > 0
    conn = sqlite3.connect(home / "data" / "deskmate.db")
    rows = conn.execute("SELECT r.mode, s.model, t.user_message FROM eval_results r "
                        "JOIN sessions s ON s.id = r.session_id JOIN turns t ON "
                        "t.session_id = s.id WHERE r.run_id = ?", (data["run_id"],)).fetchall()
    assert len(rows) == 6
    # prompts reached the model with ${WORKSPACE} and ${SITE_URL} expanded
    assert all("${" not in message for _, _, message in rows)
    assert any("http://127.0.0.1:" in message for _, _, message in rows)
    assert conn.execute("SELECT status FROM runs WHERE id = ?",
                        (data["run_id"],)).fetchone() == ("finished",)
