"""A task's world: a fresh workspace folder, and the MCP servers configured for it.

Suites name servers the way users run them (``npx -y @scope/server-x ARGS``,
``uvx mcp-server-y ARGS``). Given server folders (``--servers-bin``, or
``DESKMATE_EVAL_BIN``: folders separated by ``os.pathsep``), a server whose package
has an executable of the same name in one of them runs that instead: tests and CI use
the servers ``make test`` installs, offline, without rewriting the suite.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from deskmate.finetune.eval.suite import Suite, Task, substitute
from deskmate.tools.hub import Hub, ServerConfig
from deskmate.tools.hub.status import not_ready

BIN_ENV = "DESKMATE_EVAL_BIN"
# A name no path holds: the workspace's folder starts with "deskmate-eval-", and with
# that as the author, an answer that only echoed the path passed git-last-author.
GIT_USER = ("Robin Quill", "robin.quill@deskmate.invalid")
STABLE_DATE = "2026-01-05T09:00:00+00:00"  # of the first commit, with --stable


class WorkspaceError(RuntimeError):
    """The workspace or its servers could not be prepared."""


def prepare_workspace(task: Task, root: Path, stable: bool = False) -> Path:
    """Write the task's files into ``root/workspace`` and make it a repo if asked
    (``stable``: its first commit dated ``STABLE_DATE``, so its hash and log are the
    same every run)."""
    workspace = root / "workspace"
    workspace.mkdir(parents=True)
    for rel, content in task.files.items():
        target = workspace / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    if task.git_init:
        name, email = GIT_USER
        env = ({**os.environ, "GIT_AUTHOR_DATE": STABLE_DATE, "GIT_COMMITTER_DATE": STABLE_DATE}
               if stable else None)
        for args in (["init", "-q", "-b", "main"], ["config", "user.name", name],
                     ["config", "user.email", email], ["add", "-A"],
                     ["commit", "-q", "--allow-empty", "-m", "Initial commit"]):
            done = subprocess.run(["git", *args], cwd=workspace, capture_output=True,
                                  text=True, env=env)
            if done.returncode != 0:
                raise WorkspaceError(f"{task.path}: git {args[0]} failed in the workspace: "
                                     f"{done.stderr.strip()}")
    return workspace.resolve()


def bin_folders(extra: Sequence[Path] = ()) -> list[Path]:
    env = [Path(p) for p in os.environ.get(BIN_ENV, "").split(os.pathsep) if p]
    return [Path(p).resolve() for p in [*extra, *env]]


def server_configs(suite: Suite, task: Task, variables: dict[str, str],
                   bins: Sequence[Path] = ()) -> list[ServerConfig]:
    from deskmate.tools.hub.dialects import parse_servers

    entries = {name: suite.servers[name] for name in task.servers}
    result = parse_servers({"mcpServers": substitute(entries, variables)},
                           str(suite.path / "servers.json"))
    return [resolve_command(cfg, bins) for cfg in result.servers]


def start_servers(suite: Suite, task: Task, variables: dict[str, str],
                  bins: Sequence[Path], log_dir: Path) -> Hub:
    """The task's servers, started and all ready (a ``tools.hub.Hub``, for the caller to
    close); WorkspaceError naming each one that is not, with the hub already closed."""
    from deskmate.tools.hub import Hub

    hub = Hub(server_configs(suite, task, variables, bins), log_dir)
    failed = [s for s in hub.start() if s.status != "ready"]
    if failed:
        hub.close()
        raise WorkspaceError("; ".join(not_ready(s, limit=300) for s in failed))
    return hub


def resolve_command(cfg: ServerConfig, bins: Sequence[Path]) -> ServerConfig:
    """``npx -y PKG ARGS`` / ``uvx PKG ARGS`` → ``BIN/NAME ARGS`` when BIN/NAME exists."""
    if cfg.transport != "stdio" or not bins:
        return cfg
    launcher = Path(cfg.command).name
    args = list(cfg.args)
    if launcher == "npx":
        flags = {"-y", "--yes", "-q", "--quiet"}
        while args and args[0] in flags:
            args.pop(0)
    elif launcher == "uvx":
        if args[:1] == ["--from"] and len(args) >= 3:
            args = args[2:]  # uvx --from PKG COMMAND ARGS: COMMAND is the executable
    else:
        return cfg
    if not args:
        return cfg
    package, rest = args[0], args[1:]
    for name in executable_names(package):
        for folder in bins:
            candidate = folder / name
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return replace(cfg, command=str(candidate), args=tuple(rest))
    return cfg


def executable_names(package: str) -> list[str]:
    """``@scope/server-x@1.2`` → server-x, mcp-server-x; ``mcp-server-y==1`` → mcp-server-y."""
    bare = re.sub(r"(?<=.)@[^/]*$", "", package)  # npm version, not the scope's @
    bare = re.split(r"[=<>~!\[]", bare, maxsplit=1)[0]
    base = bare.rsplit("/", 1)[-1]
    names = [base]
    if not base.startswith("mcp-"):
        names.append(f"mcp-{base}")
    return names
