"""Sandbox latency at each isolation level this machine offers, side by side.

    python benchmarks/sandbox.py [--starts 15] [--runs 300]

Per level (bwrap, unshare = deskmate's own jail, rlimits; a level that cannot start
here is listed under "unavailable" with the reason):
- cold_start_ms: Sandbox().start() until the worker is ready, then closed (median of
  --starts; the levels take turns, so a busy machine slows each alike).
- cell_roundtrip_ms_p50 / _p95: a trivial cell (``1 + 1``) in a warm sandbox. Goal ≤ 30 ms.
- handler_roundtrip_ms_p50: a cell making one trivial call to the host handler.
Top level: the default level's figures (as before), and ``unshare_vs_bwrap_cold`` (goal
≤ 2: the jail must not cost more than twice bwrap's cold start).
The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from deskmate.tools.sandbox import Sandbox, detect_isolation
from deskmate.tools.sandbox.isolation import LEVELS, OVERRIDE_ENV, unavailable


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


def at_level(level: str):
    """Sandboxes made after this run at ``level`` (the override caps the level)."""
    os.environ[OVERRIDE_ENV] = level
    assert detect_isolation().level == level


def cold_start_ms() -> float:
    started = time.perf_counter()
    with Sandbox():
        took = (time.perf_counter() - started) * 1000
    return took


def warm(runs: int) -> dict:
    handler = lambda kind, payload: payload["args"][0]  # noqa: E731
    with Sandbox(handler, namespace={"servers": {"echo": ["echo"]}}) as box:
        cells = timed_cells(box, "1 + 1", runs)
        calls = timed_cells(box, "echo.echo(1)", runs)
    return {"cell_roundtrip_ms_p50": round(statistics.median(cells), 3),
            "cell_roundtrip_ms_p95": round(statistics.quantiles(cells, n=20)[-1], 3),
            "handler_roundtrip_ms_p50": round(statistics.median(calls), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=15)
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    default = detect_isolation()  # probed once, outside the timings
    skipped = {level: why for level in LEVELS if (why := unavailable(level)) and
               level != "rlimits"}
    levels = [level for level in LEVELS if level not in skipped]
    cold: dict[str, list[float]] = {level: [] for level in levels}
    for _ in range(args.starts):  # the levels take turns
        for level in levels:
            at_level(level)
            cold[level].append(cold_start_ms())
    report: dict[str, dict] = {}
    for level in levels:
        at_level(level)
        report[level] = {"cold_start_ms": round(statistics.median(cold[level]), 1),
                         "cold_start_ms_min": round(min(cold[level]), 1), **warm(args.runs)}
        print(f"{level}: {report[level]}")
    os.environ.pop(OVERRIDE_ENV, None)
    ratio = (round(report["unshare"]["cold_start_ms"] / report["bwrap"]["cold_start_ms"], 2)
             if "unshare" in report and "bwrap" in report else None)
    print(f"default isolation: {default.details}")
    print(json.dumps({**report.get(default.level, {}), "isolation": default.level,
                      "levels": report, "unavailable": skipped,
                      "unshare_vs_bwrap_cold": ratio}))


if __name__ == "__main__":
    main()
