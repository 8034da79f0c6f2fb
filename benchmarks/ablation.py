"""One change to the agent, measured task by task: two revisions on the same eval tasks.

    python benchmarks/ablation.py [--base REV] [--change REV] [--tasks SELECTION]
                                  [--mode code|eager] [--model NAME|PATH] [--threads 1]

Each revision runs from a ``git archive`` of itself (its own package and
``DESKMATE_HOME``), greedy and with ``deskmate eval --stable``, so the two runs show
the model the same tokens wherever the change does not act: a task that differs is one
the change moved, not one a random folder name did. As root with ``unshare`` (Linux),
both run at once, each in its own mount and network namespace (a private /tmp, its own
loopback: the same paths and site port without clashing); otherwise one after the
other. Defaults: HEAD~1 against HEAD on the ``smoke`` tasks with the tiny model.

Prints each task whose result differs, then one JSON object: each revision's success
rate, mean score and prompt tokens, the tasks won and lost, and how many tasks had the
same transcript in both runs (a revision older than ``--stable`` runs without it, and
the pairing is then approximate: ``"stable"`` says which).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUITE = "assets/eval/local"


def prepare(role: str, rev: str, work: Path, threads: int) -> Path:
    """A folder holding ``rev``'s package (``pkg/deskmate``) and a home configured for it."""
    folder = work / role
    (folder / "pkg").mkdir(parents=True)
    (folder / "home").mkdir()
    (folder / "tmp").mkdir()
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True,
                             check=True).stdout
    (folder / "src").mkdir()
    subprocess.run(["tar", "-x", "-C", str(folder / "src")], input=archive, check=True)
    (folder / "pkg" / "deskmate").symlink_to(folder / "src")
    (folder / "home" / "config.toml").write_text(f"[model]\nthreads = {threads}\n")
    return folder


def command(folder: Path, args: argparse.Namespace, model: Path) -> list[str]:
    bins = [ROOT / ".cache" / "mcp-servers" / "py" / "bin",
            ROOT / ".cache" / "mcp-servers" / "npm" / "node_modules" / ".bin"]
    return [sys.executable, "-c", "from deskmate.app.cli import main; main()", "eval",
            "--suite", str(folder / "src" / SUITE), "--tasks", args.tasks, "--mode", args.mode,
            "--temperature", "0", "--max-steps", str(args.max_steps), "--max-tokens",
            str(args.max_tokens), "--model", str(model), "--json",
            *(["--stable"] if stable(folder) else []),
            *[part for b in bins if b.exists() for part in ("--servers-bin", str(b))]]


def stable(folder: Path) -> bool:
    """Whether the revision's eval has ``--stable`` (older ones run without it)."""
    return "--stable" in (folder / "src" / "app" / "cli" / "eval.py").read_text()


def isolated() -> bool:
    return os.geteuid() == 0 and shutil.which("unshare") is not None \
        and shutil.which("ip") is not None


def start(folder: Path, argv: list[str], alone: bool) -> subprocess.Popen:
    env = {**os.environ, "DESKMATE_HOME": str(folder / "home"),
           "PYTHONPATH": str(folder / "pkg")}
    log = open(folder / "eval.log", "w")  # noqa: SIM115 (closed with the process)
    if alone:
        quoted = " ".join(subprocess.list2cmdline([a]) for a in argv)
        argv = ["unshare", "-mn", "bash", "-c",
                f"ip link set lo up && mount --bind {folder / 'tmp'} /tmp && exec {quoted}"]
    return subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)


def results(folder: Path) -> dict[str, dict]:
    """Each task's result and transcript, from the run's sessions database."""
    db = sqlite3.connect(folder / "home" / "data" / "deskmate.db")
    found = {}
    for task, success, score, tokens, session in db.execute(
            "SELECT json_extract(details, '$.task'), success, score, prompt_tokens, session_id "
            "FROM eval_results"):
        transcript = [row for row in db.execute(
            "SELECT role, content FROM messages WHERE session_id = ? ORDER BY position",
            (session,))]
        found[task] = {"success": bool(success), "score": score or 0.0, "tokens": tokens or 0,
                       "transcript": transcript}
    return found


def summary(found: dict[str, dict]) -> dict:
    n = max(1, len(found))
    return {"success_rate": round(sum(r["success"] for r in found.values()) / n, 3),
            "mean_score": round(sum(r["score"] for r in found.values()) / n, 3),
            "prompt_tokens_mean": round(sum(r["tokens"] for r in found.values()) / n),
            "tasks": len(found)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="HEAD~1")
    parser.add_argument("--change", default="HEAD")
    parser.add_argument("--tasks", default="smoke", help="task ids or a selection")
    parser.add_argument("--mode", choices=("code", "eager"), default="code")
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads per run")
    parser.add_argument("--max-steps", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=384)
    parser.add_argument("--keep", action="store_true", help="keep the runs' folders")
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT))
    from deskmate.app.llm.registry import resolve_model

    model = resolve_model(args.model)
    # Not under /tmp: each isolated run gets a private /tmp of its own.
    (ROOT / ".cache").mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="ablation-", dir=ROOT / ".cache"))
    alone = isolated()
    try:
        folders = [prepare(role, rev, work, args.threads)
                   for role, rev in (("base", args.base), ("change", args.change))]
        if alone:
            runs = [start(f, command(f, args, model), True) for f in folders]
            codes = [run.wait() for run in runs]
        else:
            codes = [start(f, command(f, args, model), False).wait() for f in folders]
        for folder, code in zip(folders, codes, strict=True):
            if code != 0:
                tail = (folder / "eval.log").read_text()[-2000:]
                sys.exit(f"the eval of {folder.name} failed ({code}):\n{tail}")
        base, change = (results(f) for f in folders)
        common = sorted(set(base) & set(change))
        won = [t for t in common if change[t]["success"] and not base[t]["success"]]
        lost = [t for t in common if base[t]["success"] and not change[t]["success"]]
        same = [t for t in common if base[t]["transcript"] == change[t]["transcript"]]
        for task in common:
            if base[task]["score"] != change[task]["score"]:
                print(f"{task}: {base[task]['score']:.2f} -> {change[task]['score']:.2f}")
        print(json.dumps({"base": args.base, "change": args.change, "tasks": args.tasks,
                          "mode": args.mode, "model": model.name, "side_by_side": alone,
                          "stable": [stable(f) for f in folders],
                          "base_result": summary(base), "change_result": summary(change),
                          "won": won, "lost": lost, "same_transcript": len(same),
                          "compared": len(common)}))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
