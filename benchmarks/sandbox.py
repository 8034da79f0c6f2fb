"""Sandbox latency: what one code cell and one tool call cost the agent loop.

    python benchmarks/sandbox.py

- cold_start_ms: Sandbox().start() until the worker is ready (median of 5).
- cell_roundtrip_ms_p50 / _p95: a trivial cell (``1 + 1``) in a warm sandbox, 300 runs.
  Goal ≤ 30 ms.
- handler_roundtrip_ms_p50: a cell making one trivial call to the host handler.
- isolation: the level measured here.
The last line printed is one JSON object.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from deskmate.tools.sandbox import Sandbox, detect_isolation

RUNS = 300


def timed_cells(box: Sandbox, code: str, runs: int) -> list[float]:
    for _ in range(10):  # warm up
        box.execute(code)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        result = box.execute(code)
        times.append((time.perf_counter() - started) * 1000)
        if result.status != "ok":
            raise SystemExit(f"benchmark cell failed: {result}")
    return times


def main() -> None:
    isolation = detect_isolation()  # probed once, outside the timings
    cold = []
    for _ in range(5):
        started = time.perf_counter()
        with Sandbox():
            cold.append((time.perf_counter() - started) * 1000)
    handler = lambda kind, payload: payload["args"][0]  # noqa: E731
    with Sandbox(handler, namespace={"servers": {"echo": ["echo"]}}) as box:
        cells = timed_cells(box, "1 + 1", RUNS)
        calls = timed_cells(box, "echo.echo(1)", RUNS)
    report = {
        "cell_roundtrip_ms_p50": round(statistics.median(cells), 3),
        "cell_roundtrip_ms_p95": round(statistics.quantiles(cells, n=20)[-1], 3),
        "handler_roundtrip_ms_p50": round(statistics.median(calls), 3),
        "cold_start_ms": round(statistics.median(cold), 1),
        "isolation": isolation.level,
    }
    print(f"isolation: {isolation.details}")
    print(json.dumps(report))


if __name__ == "__main__":
    main()
