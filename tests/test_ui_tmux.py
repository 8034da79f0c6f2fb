"""The real app in a real terminal (tmux), with the real tiny model: type, see the answer."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from shutil import which as shutil_which

import pytest
import tomli_w
from conftest import ROOT

pytestmark = pytest.mark.slow


class Tmux:
    def __init__(self) -> None:
        self.socket = f"deskmate-test-{uuid.uuid4().hex[:8]}"  # our own tmux server

    def run(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True,
                              text=True, check=True).stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "app")

    def wait_for(self, predicate, timeout: float, what: str) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.screen()
            if predicate(text):
                return text
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}; the screen:\n{self.screen()}")


def test_the_app_answers_in_a_real_terminal(home, tiny_model_path):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(tomli_w.dumps({"model": {
        "name": str(tiny_model_path), "context": 2048, "max_tokens": 24,
        "temperature": 0.0, "seed": 0}}))
    assert shutil_which("tmux"), "this test needs tmux (apt-get install tmux)"
    tmux = Tmux()
    # The pane's size, also in COLUMNS/LINES: under pytest the pane's shell was handed
    # COLUMNS=80 LINES=24, which Textual prefers to the pane's 120x40; the status line
    # then cut "ready" off whenever the sandbox label was long (as at unshare).
    command = (f"cd {ROOT} && env DESKMATE_HOME={home} TERM=xterm-256color COLUMNS=120 "
               f"LINES=40 {sys.executable} -m deskmate.app")
    tmux.run("new-session", "-d", "-s", "app", "-x", "120", "-y", "40", command)
    try:
        tmux.wait_for(lambda s: "ready" in s, 120, "the model and the agent")
        tmux.run("send-keys", "-t", "app", "-l", "What is the capital of France?")
        tmux.run("send-keys", "-t", "app", "Enter")
        ended = ("answered", "max_steps", "repetition", "timeout", "error")
        tmux.wait_for(lambda s: "generated" in s and any(f"{w} · " in s for w in ended),
                      180, "the turn to finish")
        time.sleep(0.5)
        from deskmate.app.store import get_session, list_sessions, open_db

        db = open_db()
        [summary] = list_sessions(db)
        answer = get_session(db, summary.id).turns[0].final_answer
        assert answer, "the model gave no final answer"
        first_words = " ".join(answer.split()[:3])
        screen = tmux.screen()
        assert "What is the capital of France?" in screen
        assert first_words in " ".join(screen.split()), (first_words, screen)
    finally:
        subprocess.run(["tmux", "-L", tmux.socket, "kill-server"], capture_output=True)
