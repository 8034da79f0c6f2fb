"""TUI benchmark: start-up, streaming throughput and typing latency of the chat.

Run: `.venv/bin/python benchmarks/tui.py` (no arguments). Prints a few lines, then
one JSON object on the last line:

- first_paint_s: process start → the first screen painted (a real `DeskmateApp` in a
  fresh interpreter, headless; the model is not loaded yet at that point, as in the
  real app, where it loads in a worker). Goal ≤ 0.8. Beside it,
  first_paint_textual_floor_s: a bare Textual app with the same widgets, and their ratio.
- stream_ui_tok_s: tokens per second the chat view absorbs from a scripted model that
  produces them as fast as it can (one token ≈ one 4-character chunk), measured from
  Enter to the final render of the answer. Goal ≥ 200.
- input_latency_ms_p95: while a paced model streams, keys are posted to the app the way
  the terminal driver posts them; the time until each appears in the prompt, p95.

Everything runs in a temporary DESKMATE_HOME; nothing is recorded in yours.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

STREAM_TOKENS = 3000
PACED_TPS = 150  # the model speed during the latency measurement
KEYS = 60

PROBE = """
import time
from deskmate.app.config import Config
from deskmate.app.ui.app import DeskmateApp

class Probe(DeskmateApp):
    def on_ready(self):
        print("painted", time.time(), flush=True)
        self.exit()

def no_model(config, spec):
    from deskmate.app.llm import NoModelConfigured
    raise NoModelConfigured()

Probe(Config(), model_factory=no_model, record=False).run(headless=True)
"""


# The floor: a bare Textual app with the chat screen's widgets (header, a scrolling
# transcript, a text area, footer), no deskmate code. What Textual itself costs to start
# here, measured beside ours.
FLOOR = """
import time
from textual.app import App
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header, Static, TextArea

class Floor(App):
    BINDINGS = [(f"f{n}", "bell", f"Key {n}") for n in range(1, 11)]

    def compose(self):
        yield Header()
        with VerticalScroll():
            yield Static("welcome")
        yield TextArea()
        yield Footer()

    def on_ready(self):
        print("painted", time.time(), flush=True)
        self.exit()

Floor().run(headless=True)
"""


def first_paint(runs: int = 5) -> tuple[float, float]:
    """Medians of ours and of the floor, interleaved (this machine's load drifts)."""
    times: dict[str, list[float]] = {"ours": [], "floor": []}
    for _ in range(runs):
        for name, code in (("ours", PROBE), ("floor", FLOOR)):
            started = time.time()
            out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                                 text=True, cwd=ROOT, env=os.environ, check=True,
                                 timeout=60).stdout
            painted = float(next(line for line in out.splitlines()
                                 if line.startswith("painted")).split()[1])
            times[name].append(painted - started)
    return statistics.median(times["ours"]), statistics.median(times["floor"])


class PacedModel:
    """Replies in ~4-character tokens: the first reply as fast as it can, the next ones
    at ``tps`` tokens per second."""

    def __init__(self, tokens: int, tps: float) -> None:
        from deskmate.app.llm import ModelInfo

        self.tokens, self.tps, self.replies = tokens, tps, 0
        self.info = ModelInfo(name="paced", backend="bench", context_size=1 << 16)

    def stream(self, messages, params=None, cancel=None):
        from deskmate.app.llm import Delta, Finished, Usage

        self.replies += 1
        tps = 0 if self.replies == 1 else self.tps

        # Prose like a long answer: a paragraph or list item every ~40 tokens, some
        # inline markup (a block per token would measure widget mounting, not streaming).
        words = ["word", "text", "more", "data", "**b**", "`c`", "and", "then"]
        out = []
        started = time.perf_counter()
        for i in range(self.tokens):
            if cancel is not None and cancel.is_set():
                break
            sep = "\n\n" if i % 40 == 39 else ("\n\n- " if i % 200 == 119 else " ")
            piece = words[i % len(words)] + sep
            out.append(piece)
            yield Delta(piece)
            if tps:
                delay = started + (i + 1) / tps - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
        yield Finished("".join(out), "stop", Usage(completion_tokens=len(out)))

    def close(self) -> None:
        pass


async def _wait(pilot, predicate, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("the app did not get there in time")
        await asyncio.sleep(0.01)  # pilot.pause waits for a quiet screen: never, mid-stream


async def stream_and_type() -> tuple[float, float]:
    from textual import events

    from deskmate.app.config import Config
    from deskmate.app.ui.app import DeskmateApp

    model = PacedModel(STREAM_TOKENS, PACED_TPS)
    app = DeskmateApp(Config(), model_factory=lambda c, s: model, mode="eager", record=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await _wait(pilot, lambda: app.conversation.runtime is not None)
        prompt = app.chat.query_one("#prompt")
        prompt.load_text("stream please")
        started = time.perf_counter()
        prompt.submit()  # not pilot.press: it would wait for the whole stream
        await _wait(pilot, lambda: app.chat.busy)
        await _wait(pilot, lambda: not app.chat.busy)
        tok_s = STREAM_TOKENS / (time.perf_counter() - started)

        prompt.load_text("again")
        prompt.submit()
        await _wait(pilot, lambda: app.chat.busy)
        await asyncio.sleep(0.5)
        latencies = []
        for _ in range(KEYS):
            if not app.chat.busy:
                break
            before = len(prompt.text)
            t0 = time.perf_counter()
            app.post_message(events.Key("x", "x"))
            while len(prompt.text) == before:
                await asyncio.sleep(0.0005)
            latencies.append((time.perf_counter() - t0) * 1000)
            await asyncio.sleep(0.05)
        app.chat.cancel()
        await _wait(pilot, lambda: not app.chat.busy)
    latencies.sort()
    p95 = latencies[int(0.95 * (len(latencies) - 1))] if latencies else float("nan")
    return tok_s, p95


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        os.environ["DESKMATE_HOME"] = home
        os.environ.pop("DESKMATE_CONFIG", None)
        paint, floor = first_paint()
        print(f"first paint: {paint:.3f} s; a bare Textual app with the same widgets: "
              f"{floor:.3f} s (medians of 5)")
        tok_s, p95 = asyncio.run(stream_and_type())
        print(f"stream: {tok_s:,.0f} tok/s absorbed; typing p95 while streaming "
              f"{PACED_TPS} tok/s: {p95:.1f} ms")
    print(json.dumps({"first_paint_s": round(paint, 3),
                      "first_paint_textual_floor_s": round(floor, 3),
                      "first_paint_ratio": round(paint / floor, 2),
                      "stream_ui_tok_s": round(tok_s, 1),
                      "input_latency_ms_p95": round(p95, 2)}))


if __name__ == "__main__":
    main()
