"""``run_cell``: one cell of code run in the persistent namespace, like a notebook.

The cell is compiled under the name "<cell N>" (its source kept for tracebacks), its
last expression's value kept in ``_`` and returned as a repr (a text of several lines
as itself), and whatever it raises turned into a status and an error text trimmed to
the cells' own frames.
"""

from __future__ import annotations

import ast
import importlib.util
import linecache
import traceback

from . import failing_values, hints
from .rlimits import CPULimitExceeded, cpu_life, cpu_spent, set_cpu_budget
from .state import CELL_PREFIX, Toolspace, WorkerState


def run_cell(code: str, number: int, ns: dict, limits: dict, state: WorkerState) -> dict:
    """The ``done`` frame of one cell: status, error, value (and ``restart`` when the
    worker has used the CPU time it may use in all)."""
    filename = f"{CELL_PREFIX}{number}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    status, error, value = "ok", "", None
    servers = {name: ns[name] for name in state.toolspace.server_names if name in ns}
    rerouted: set[str] = set()
    state.in_cell = True
    try:
        set_cpu_budget(limits["cpu_s"])
        tree = ast.parse(code, filename, "exec")
        for taken, names in server_imports(tree, state.toolspace.server_names):
            print(f"(`{taken}`: {' and '.join(names)} "
                  f"{'is a server object' if len(names) == 1 else 'are server objects'} "
                  "here, already defined: no import needed)")
        ns[SERVERS] = servers
        rerouted = reroute_shadowed_calls(tree, state.toolspace)
        for skipped in drop_unused_missing_imports(tree):
            print(f"(skipped `{skipped}`: not installed here, and nothing in this code "
                  "uses it)")
        last = None
        final = tree.body[-1] if tree.body else None
        if isinstance(final, ast.Expr):  # the value of a last expression is shown
            tree.body.pop()
            last = ast.Expression(final.value)
        exec(compile(tree, filename, "exec"), ns)
        if last is not None:
            result = eval(compile(last, filename, "eval"), ns)
            if result is not None:
                ns["_"] = result
                # A text of several lines (a file, a listing) reads as itself: its repr
                # is one line of \n escapes that small models misread.
                multiline = isinstance(result, str) and "\n" in result.strip()
                value = result if multiline else repr(result)
    except MemoryError as exc:
        status, error = "memory", _safe_format(exc, "MemoryError: out of memory", state)
    except CPULimitExceeded:
        status = "timeout"
        error = f"CPU time limit exceeded ({limits['cpu_s']} s of CPU for one cell)"
    except KeyboardInterrupt:
        status, error = "killed", "interrupted"
    except BaseException as exc:
        status, error = "error", _safe_format(exc, repr(exc), state)
    finally:
        state.in_cell = False
        set_cpu_budget(None)
    restore_servers(ns, servers, rerouted)
    done = {"type": "done", "status": status, "error": error, "value": value}
    if cpu_spent(limits["cpu_s"]):
        done["restart"] = True
        done["error"] = "; ".join(filter(None, [error, "the sandbox used the CPU time it "
                                                f"may use in all ({cpu_life()} s)"]))
    return done


def restore_servers(ns: dict, servers: dict[str, object], rerouted: set[str]) -> None:
    """Put back a server's object that the cell's code assigned (``for time in
    times:`` made ``time`` a str), with a note that says so; ``rerouted``: the names
    whose tool calls went to the server all the same (``reroute_shadowed_calls``)."""
    for name, server in servers.items():
        if ns.get(name) is server:
            continue
        kind = f"a {type(ns[name]).__name__}" if name in ns else "nothing"
        ns[name] = server
        calls = (f"its calls {name}.<tool>(…) still went to the server, and " if name in rerouted
                 else "")
        print(f"(`{name}` is the {name} server's object; this code set it to {kind}, so "
              f"{calls}it is the server again: give your own variables other names)")


# The name a cell's namespace holds the servers' objects under, for rerouted calls.
SERVERS = "__deskmate_servers__"


def reroute_shadowed_calls(tree: ast.Module, toolspace: Toolspace) -> set[str]:
    """In a cell that binds a server's name to something else (``time, title =
    line.split()``, ``for git in repos``), point each ``time.convert_time`` — the name
    followed by one of that server's tools — at the server's object, whatever the name
    holds when the line runs; the names so rerouted. Server names are common words, and
    small models use them for their own values in the very loop that calls the tool:
    every call then failed with "'str' object has no attribute 'convert_time'"."""
    servers = set(toolspace.server_names)
    bound = {node.id for node in ast.walk(tree)
             if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del)
             and node.id in servers}
    bound |= {node.arg for node in ast.walk(tree)
              if isinstance(node, ast.arg) and node.arg in servers}
    if not bound:
        return set()
    rerouted: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        target = node.value
        if (isinstance(target, ast.Name) and isinstance(target.ctx, ast.Load)
                and target.id in bound
                and target.id in toolspace.tool_servers.get(node.attr, ())):
            node.value = ast.copy_location(
                ast.Subscript(value=ast.Name(SERVERS, ast.Load()),
                              slice=ast.Constant(target.id), ctx=ast.Load()), target)
            rerouted.add(target.id)
    ast.fix_missing_locations(tree)
    return rerouted


def server_imports(tree: ast.Module,
                   servers: tuple[str, ...]) -> list[tuple[str, list[str]]]:
    """Take out the cell's top-level imports of a server's object (each as its source
    and the servers it named): ``import
    filesystem`` (no such module: the cell would fail before its calls), ``import time``
    (Python's module would hide the time server's object, and ``time.get_current_time``
    then fails). ``from git import git_log`` becomes ``git_log = git.git_log``, and an
    ``as`` name is kept the same way."""
    body: list[ast.stmt] = []
    taken: list[tuple[str, list[str]]] = []
    for statement in tree.body:
        if isinstance(statement, ast.ImportFrom) and not statement.level \
                and statement.module in servers and "*" not in {a.name for a in statement.names}:
            taken.append((ast.unparse(statement), [statement.module]))
            body += [_bind(alias.asname or alias.name, f"{statement.module}.{alias.name}",
                           statement) for alias in statement.names]
            continue
        if isinstance(statement, ast.Import) and any(a.name in servers for a in statement.names):
            taken.append((ast.unparse(statement),
                          [a.name for a in statement.names if a.name in servers]))
            kept = [a for a in statement.names if a.name not in servers]
            if kept:
                body.append(ast.copy_location(ast.Import(names=kept), statement))
            body += [_bind(a.asname, a.name, statement) for a in statement.names
                     if a.name in servers and a.asname]
            continue
        body.append(statement)
    tree.body = body
    return taken


def _bind(name: str, source: str, where: ast.stmt) -> ast.stmt:
    """``name = source`` (a dotted name), placed where the import was."""
    statement = ast.parse(f"{name} = {source}").body[0]
    ast.increment_lineno(statement, where.lineno - 1)
    return statement


def drop_unused_missing_imports(tree: ast.Module) -> list[str]:
    """Take out the cell's top-level imports of modules that are not installed when no
    name they bind is used in the cell; the statements taken out, as source.

    Small models open a cell with ``import requests`` out of habit and then call the
    tools anyway: the import alone would fail the whole cell. A cell of imports only
    is left as it is: its names are for the cells after it, so it fails with the hint
    that says what is installed."""
    if all(isinstance(s, ast.Import | ast.ImportFrom) for s in tree.body):
        return []
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    skipped, body = [], []
    for statement in tree.body:
        if isinstance(statement, ast.Import | ast.ImportFrom) and _unused_and_missing(
                statement, used):
            skipped.append(ast.unparse(statement))
        else:
            body.append(statement)
    tree.body = body
    return skipped


def _unused_and_missing(statement: ast.Import | ast.ImportFrom, used: set[str]) -> bool:
    if isinstance(statement, ast.ImportFrom):
        if statement.level or not statement.module:
            return False
        modules = [statement.module]
        bound = [alias.asname or alias.name for alias in statement.names]
    else:
        modules = [alias.name for alias in statement.names]
        bound = [alias.asname or alias.name.partition(".")[0] for alias in statement.names]
    if "*" in bound or any(name in used for name in bound):
        return False
    try:
        return all(importlib.util.find_spec(m.partition(".")[0]) is None for m in modules)
    except (ImportError, ValueError):
        return False


def format_error(exc: BaseException, toolspace: Toolspace) -> str:
    """The traceback trimmed to the frames of the user's cells, with a hint."""
    if isinstance(exc, SyntaxError) and str(exc.filename).startswith(CELL_PREFIX):
        return "".join(traceback.format_exception_only(exc)).rstrip()
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if f.filename.startswith(CELL_PREFIX)]
    lines = ["Traceback (most recent call last):\n"] if frames else []
    lines += traceback.format_list(frames)
    lines += traceback.format_exception_only(exc)
    lines.append(failing_values.values_line(exc))
    lines.append(hints.hint(exc, toolspace))
    return "".join(lines).rstrip()


def _safe_format(exc: BaseException, fallback: str, state: WorkerState) -> str:
    try:
        return format_error(exc, state.toolspace)
    except MemoryError:
        return fallback
