"""The agent on a split of the local suite, one `deskmate eval` process a task, for one or
more commits side by side: success, score and cost per commit.

    python benchmarks/eval_runs.py [--tasks smoke] [--rev HEAD --rev BRANCH ...]
        [--model GGUF] [--mode code] [--queues 2] [--out .cache/eval-runs]

Each commit runs from a `git archive` of it (the working tree when no --rev is given), with
the settings of the issue's figures: greedy, `--max-steps 5 --max-tokens 384`, one llama.cpp
thread a process, `--stable` (the same workspace paths, site address and commit dates, so
two commits differ only where their code does). Tasks run in `--queues` processes at once;
two runs of the same task never overlap (their --stable folder is shared) and the fetch
tasks run one at a time (the stable site port): `deskmate eval --stable` holds both with
locks across processes, and this script's queues wait on them in-process as well. A
commit's task whose result is already under `--out/runs/<name>/<task>` is not run again:
an interrupted run goes on where it stopped (the working tree, which may have changed
since, always runs afresh).
Default: the `smoke` tasks with the tiny model (a check of the mechanics; agent quality
needs `--model` a Qwen2.5-Coder GGUF). The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / ".cache" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
SERVERS = ROOT / ".cache" / "mcp-servers"
_site = threading.Lock()  # the fetch tasks' stable port
_tasks: dict[str, threading.Lock] = {}  # a task's stable folder, across commits


def source(rev: str | None, out: Path) -> tuple[str, Path]:
    """The name and folder a commit runs from (``None``: this working tree)."""
    if rev is None:
        return "worktree", ROOT  # (its results are not reused: see run_task)
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", rev], check=True,
                         capture_output=True, text=True).stdout.strip()
    folder = out / "src" / sha
    if not folder.exists():
        part = folder.with_suffix(".part")
        shutil.rmtree(part, ignore_errors=True)
        part.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", sha], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(part)], input=archive, check=True)
        part.rename(folder)
    return sha, folder


def run_task(src: Path, name: str, task: str, sited: bool,
             args: argparse.Namespace) -> dict | None:
    """One task in its own process and home; its result (the eval's JSON), or None.
    ``sited``: it reads the suite's local site (served on the one stable port)."""
    folder = args.out / "runs" / name / task
    done = folder / "result.json"
    if done.exists() and src != ROOT:
        return json.loads(done.read_text())
    shutil.rmtree(folder, ignore_errors=True)  # a cut-short or earlier try's home
    home = folder / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(f"[model]\nthreads = {args.threads}\n")
    env = {**os.environ, "DESKMATE_HOME": str(home), "DESKMATE_CONFIG": str(home / "config.toml"),
           "DESKMATE_EVAL_BIN": os.pathsep.join(
               [str(SERVERS / "npm" / "node_modules" / ".bin"), str(SERVERS / "py" / "bin")])}
    if src != ROOT:  # `deskmate` from the archive (its .editable/deskmate is a link to it)
        env["PYTHONPATH"] = str(src / ".editable")
    command = [sys.executable, "-m", "deskmate.app.cli", "eval", "--suite",
               str(src / "assets" / "eval" / "local"), "--tasks", task, "--mode", args.mode,
               "--temperature", "0", "--max-steps", str(args.max_steps), "--max-tokens",
               str(args.max_tokens), "--stable", "--model", str(args.model), "--json"]
    try:
        with _tasks[task], _site if sited else contextlib.nullcontext():
            ran = subprocess.run(command, cwd=src, env=env, capture_output=True, text=True,
                                 timeout=args.task_timeout)
    except subprocess.TimeoutExpired:  # the task, not the whole report
        print(f"{name} {task}: over {args.task_timeout:g} s", file=sys.stderr)
        return None
    (folder / "stderr.txt").write_text(ran.stderr)
    lines = ran.stdout.strip().splitlines()
    if ran.returncode != 0 or not lines:
        print(f"{name} {task}: exit {ran.returncode} (see {folder / 'stderr.txt'})",
              file=sys.stderr)
        return None
    done.write_text(lines[-1])
    return json.loads(lines[-1])


# What `deskmate eval` warns when a task ran at another path or site address than its
# --stable one (a port another program held; before eval/stable.py, a second run beside
# the first): such a task does not compare with its twin in another run.
OFF_STABLE = ("not --stable", "addresses differ")


def off_stable(folder: Path, result: dict | None) -> bool:
    """Whether the eval said so: in its JSON (commits since session 36), or only in the
    warnings it printed (older commits, which this script still runs from archives)."""
    if result and any(figures.get("off_stable") for figures in result["modes"].values()):
        return True
    log = folder / "stderr.txt"
    return log.exists() and any(mark in log.read_text(errors="replace") for mark in OFF_STABLE)


def totals(results: dict[str, dict | None], folder: Path) -> dict:
    """A commit's figures over its tasks; ``folder`` holds a folder a task."""
    ran = {t: r["modes"][next(iter(r["modes"]))] for t, r in results.items() if r}
    n = len(ran) or 1
    return {"tasks": len(results), "ran": len(ran),
            "failed_to_run": sorted(t for t, r in results.items() if not r),
            "off_stable": sorted(t for t, r in results.items() if off_stable(folder / t, r)),
            "solved": sum(r["success_rate"] for r in ran.values()),
            "success": round(sum(r["success_rate"] for r in ran.values()) / n, 3),
            "score": round(sum(r["mean_score"] for r in ran.values()) / n, 3),
            "prompt_tokens_mean": round(sum(r["prompt_tokens_mean"] for r in ran.values()) / n),
            "model_calls": sum(r["model_calls_mean"] for r in ran.values()),
            "wall_s": round(sum(r["wall_s_mean"] for r in ran.values()), 1),
            "scores": {t: r["mean_score"] for t, r in sorted(ran.items())}}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--tasks", default="smoke", help="task ids or selections, comma-separated")
    parser.add_argument("--rev", action="append", help="a commit to run (repeatable)")
    parser.add_argument("--model", type=Path, default=TINY)
    parser.add_argument("--mode", choices=["code", "eager"], default="code")
    parser.add_argument("--queues", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--max-steps", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=384)
    parser.add_argument("--task-timeout", type=float, default=1800.0)
    parser.add_argument("--out", type=Path, default=ROOT / ".cache" / "eval-runs")
    args = parser.parse_args()
    args.out = args.out.resolve()
    if not args.model.exists():
        parser.error(f"no model file {args.model} (`make test` fetches the tiny one)")
    if not (SERVERS / ".installed").exists():
        parser.error(f"the suite's MCP servers are not in {SERVERS}: run `make test` once")

    from deskmate.finetune.eval.runner import uses_site
    from deskmate.finetune.eval.suite import load_suite

    suite = load_suite(ROOT / "assets" / "eval" / "local")
    tasks = list(dict.fromkeys(t for part in args.tasks.split(",")
                               for t in suite.selections.get(part.strip(), [part.strip()])))
    unknown = [t for t in tasks if t not in suite.tasks]
    if unknown:
        parser.error(f"no task or selection {', '.join(unknown)} in the local suite")
    _tasks.update({t: threading.Lock() for t in tasks})
    sources = [source(rev, args.out) for rev in (args.rev or [None])]
    model = args.model.stem
    names = [f"{sha}-{args.mode}-{model}" for sha, _ in sources]
    # Commits interleaved task by task, so a run cut short compares them on the same tasks.
    jobs = [(name, src, task) for task in tasks
            for name, (_, src) in zip(names, sources, strict=True)]
    with ThreadPoolExecutor(max_workers=args.queues) as pool:
        futures = {(name, task): pool.submit(run_task, src, name, task,
                                             uses_site(suite, suite.tasks[task]), args)
                   for name, src, task in jobs}
    report = {name: totals({task: futures[name, task].result() for task in tasks},
                           args.out / "runs" / name)
              for name in names}
    for name, figures in report.items():
        print(f"{name}: {figures['solved']:g}/{figures['ran']} solved, score "
              f"{figures['score']}, {figures['prompt_tokens_mean']:,} prompt tokens a task")
        if figures["off_stable"]:
            print(f"  off --stable (not comparable task by task): "
                  f"{', '.join(figures['off_stable'])}")
    print(json.dumps({"tasks": args.tasks, "mode": args.mode, "model": model,
                      "runs": report}))


if __name__ == "__main__":
    main()
