"""``deskmate chat`` with no prompt: the terminal chat, driven through a real pty with
the real CLI, the tiny llama.cpp model and the SQLite store of an isolated home.

A turn streams; Ctrl-C cancels a long one (recorded as cancelled) and the chat goes on;
/new starts a second session; Ctrl-D quits with status 0; the next start recalls the
last prompt with Up (the prompt history the app keeps too). The context meter after each
answer, /context, and /compact by hand and by itself near the window.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
import time

import pytest

from deskmate.app.store import get_session, list_sessions, open_db

PROMPT = "› ".encode()


class Terminal:
    """A child process on a pty: what it wrote so far, and keys to send it."""

    def __init__(self, args: list[str], env: dict[str, str],
                 sigint: signal.Handlers = signal.SIG_DFL) -> None:
        pid, fd = pty.fork()
        if pid == 0:  # the child: the CLI, on the pty
            # SIGINT as given, whatever this suite inherited (`make test &` in a script
            # runs it with SIGINT ignored, and execve keeps an ignored signal ignored).
            signal.signal(signal.SIGINT, sigint)
            os.execve(sys.executable, [sys.executable, "-m", "deskmate.app.cli", *args], env)
        self.pid, self.fd = pid, fd
        self.out = b""
        self.code: int | None = None  # the exit status, once reaped

    def expect(self, wanted: bytes, timeout: float = 180, after: int = 0) -> int:
        """Wait until ``wanted`` was written after offset ``after``; its end offset."""
        deadline = time.monotonic() + timeout
        while (at := self.out.find(wanted, after)) < 0:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {wanted!r} in {self.out[after:][-2000:]!r}")
            ready, _, _ = select.select([self.fd], [], [], min(left, 0.5))
            if ready:
                try:
                    self.out += os.read(self.fd, 65536)
                except OSError:  # the child is gone
                    raise AssertionError(f"exited before {wanted!r}: {self.out[-2000:]!r}") \
                        from None
        return at + len(wanted)

    def more(self, count: int, after: int, timeout: float = 180) -> int:
        """Wait until ``count`` more bytes came after offset ``after``."""
        deadline = time.monotonic() + timeout
        while len(self.out) < after + count and time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.5)
            if ready:
                self.out += os.read(self.fd, 65536)
        assert len(self.out) >= after + count, self.out[after:]
        return len(self.out)

    def send(self, data: bytes) -> None:
        os.write(self.fd, data)

    def say(self, line: bytes, after: int) -> int:
        """Type ``line`` and Enter; the offset after its echo. Wait for the echo before
        the prompt that follows the answer: the prompt the line was typed at may come
        after ``after`` too, and a key sent while the answer streams can be lost."""
        self.send(line + b"\r")
        return self.expect(line + b"\r\n", after=after)

    def wait(self, timeout: float = 180) -> int:
        # As long as ``expect`` waits: under load (CI's 2 cores beside an eval) closing
        # the model and the session once took over 60 s.
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                ready, _, _ = select.select([self.fd], [], [], 0.2)
                if ready:
                    self.out += os.read(self.fd, 65536)
            except OSError:
                pass
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.code = os.waitstatus_to_exitcode(status)
                return self.code
        raise AssertionError(f"still running: {self.out[-2000:]!r}")

    def close(self) -> None:
        """Kill the child if a failed test left it running (this test's own pid)."""
        if self.code is None:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)


@pytest.fixture
def env(home):
    return {**os.environ, "DESKMATE_HOME": str(home), "TERM": "xterm", "COLUMNS": "100",
            "LINES": "30"}


def test_the_terminal_chat_streams_cancels_and_records(env, tiny_model_path):
    # Started with SIGINT ignored, as a background job of a script starts it: Ctrl-C
    # must cancel the turn all the same.
    term = Terminal(["chat", "-m", str(tiny_model_path), "-t", "0", "--max-tokens", "2000"],
                    env, sigint=signal.SIG_IGN)
    try:
        at = term.expect(PROMPT)
        at = term.say(b"Say hello.", after=at)
        at = term.expect(PROMPT, after=at)  # answered: the prompt is back
        at = term.say(b"Write a very long story about a cat and a dog, in many chapters.", after=at)
        at = term.more(20, after=at)  # streaming: some of the answer is out
        term.send(b"\x03")
        at = term.expect(b"[cancelling", after=at)
        at = term.expect(PROMPT, after=at)
        term.send(b"/bogus\r")
        at = term.expect(b"/bogus is not a command here", after=at)
        # Each line at its prompt: a line typed ahead is echoed twice (by the terminal,
        # then after readline's prompt), and the prompt before that second echo was read
        # as the answer's end: the Ctrl-D below went in mid-turn and was lost.
        at = term.expect(PROMPT, after=at)
        term.send(b"/new\r")
        at = term.expect(b"[a new session]", after=at)
        at = term.expect(PROMPT, after=at)
        at = term.say(b"Hi again.", after=at)
        at = term.expect(PROMPT, after=at)
        term.send(b"\x04")  # Ctrl-D
        assert term.wait() == 0
    finally:
        term.close()
    db = open_db()
    second, first = list_sessions(db)  # newest first
    turns = get_session(db, first.id).turns
    assert [t.status for t in turns] == ["answered", "cancelled"]
    assert turns[0].user_message == "Say hello."
    assert get_session(db, first.id).messages[-1].content.endswith("[cancelled by the user]")
    assert [t.user_message for t in get_session(db, second.id).turns] == ["Hi again."]

    # The next start recalls the last prompt (the app's history file too).
    term = Terminal(["chat", "-m", str(tiny_model_path), "-t", "0", "--max-tokens", "4"], env)
    try:
        at = term.expect(PROMPT)
        term.send(b"\x1b[A\r")
        at = term.expect(b"Hi again.\r\n", after=at)
        at = term.expect(PROMPT, after=at)
        term.send(b"/exit\r")
        assert term.wait() == 0
    finally:
        term.close()
    newest = list_sessions(db)[0]
    assert [t.user_message for t in get_session(db, newest.id).turns] == ["Hi again."]


def test_the_terminal_chat_meters_the_context_and_compacts(env, home, tiny_model_path):
    """A dim ``ctx used/window`` after each answer; ``/context`` in words; ``/compact``
    with one turn says there is nothing older, with two it summarises (the compacted
    session goes on recording); a window the session nears compacts by itself."""
    from deskmate.app.store.compaction import SUMMARY_HEAD

    term = Terminal(["chat", "-m", str(tiny_model_path), "-t", "0", "--max-tokens", "32"],
                    env)
    try:
        at = term.expect(PROMPT)
        at = term.say(b"/context", after=at)
        at = term.expect(b"no model call read this session yet", after=at)
        at = term.expect(PROMPT, after=at)
        at = term.say(b"My cat is called Tom. Say hi.", after=at)
        at = term.expect(b"ctx ", after=at)  # after the answer: the meter
        at = term.expect(b"/8.2k", after=at)  # against the model's 8192-token window
        at = term.expect(PROMPT, after=at)
        at = term.say(b"/compact", after=at)
        at = term.expect(b"[not compacted: 1 turn(s) so far", after=at)
        at = term.expect(PROMPT, after=at)
        at = term.say(b"What is 2 + 2?", after=at)
        at = term.expect(PROMPT, after=at)
        at = term.say(b"/compact", after=at)
        at = term.expect(b"[compacted: ", after=at)
        at = term.expect(PROMPT, after=at)
        at = term.say(b"/context", after=at)
        at = term.expect(b"just compacted", after=at)
        at = term.expect(PROMPT, after=at)
        at = term.say(b"Thanks.", after=at)
        at = term.expect(PROMPT, after=at)
        at = term.say(b"/context", after=at)
        at = term.expect(b"of the 8,192-token window", after=at)
        at = term.expect(PROMPT, after=at)
        term.send(b"\x04")
        assert term.wait() == 0
    finally:
        term.close()
    db = open_db()
    compacted, full = list_sessions(db)  # newest first: the session goes on compacted
    assert [t.user_message for t in get_session(db, full.id).turns] == [
        "My cat is called Tom. Say hi.", "What is 2 + 2?"]
    messages = get_session(db, compacted.id).messages
    assert messages[1].content.startswith(SUMMARY_HEAD)
    assert [m.content for m in messages if m.role == "user"][-2:] == [
        "What is 2 + 2?", "Thanks."]

    # A window of 256 tokens (a turn here fills about 55): past 80% of it after a few
    # turns, compacted by itself after the answer.
    (home / "config.toml").write_text("[model]\ncontext = 256\n")
    term = Terminal(["chat", "-m", str(tiny_model_path), "-t", "0", "--max-tokens", "32"],
                    env)
    try:
        at = term.expect(PROMPT)
        for line in (b"Tell me about cats.", b"And dogs?", b"And birds?", b"And fish?",
                     b"And cows?", b"And bees?"):
            at = term.say(line, after=at)
            at = term.expect(PROMPT, after=at)
            if b"[compacted: " in term.out:
                break
        assert b"nears the model's context window: compacting" in term.out, term.out
        assert b"[compacted: " in term.out, term.out
        term.send(b"\x04")
        assert term.wait() == 0
    finally:
        term.close()
