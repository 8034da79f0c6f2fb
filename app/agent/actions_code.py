"""Code actions: the model writes one fenced Python block; the sandbox runs it.

The reply is read leniently (app/agent/parse.py); the block runs in the session's
persistent sandbox, whose tool calls go through the bridge; only what the cell printed
comes back, as a user message starting ``Output:``, truncated head and tail.
"""

from __future__ import annotations

import ast
import itertools
import re
import threading
from collections import Counter
from collections.abc import Callable, Collection, Generator, Sequence
from typing import Any, Protocol

from deskmate.app.agent import events as ev
from deskmate.app.agent.actions import Stop, Turn
from deskmate.app.agent.missing_step import MissingStep
from deskmate.app.agent.modes import Mode
from deskmate.app.agent.parse import (
    CUT_OFF,
    LOOKED_AGAIN,
    OUTPUT_PREFIX,
    PRINTS_AFTER_ERROR,
    PRINTS_DONE,
    PRINTS_ONLY,
    REPEATED,
    REPEATED_HEAD,
    CodeAction,
    FinalAnswer,
    Malformed,
    closed_code_block,
    cut_off,
    missing_step_check,
    parse_reply,
    repeated_answer,
)
from deskmate.app.agent.request import only_asks, request_files
from deskmate.app.agent.self_replace import same_replace_note
from deskmate.app.agent.text_fields import text_fields
from deskmate.app.agent.unprinted import Returned, came_to_nothing, unprinted
from deskmate.app.agent.unused import unused_note
from deskmate.app.llm.base import ChatMessage
from deskmate.tools.sandbox import CellResult, Limits, RequestFiles
from deskmate.tools.sandbox.capture import truncate_middle as truncate


class Sandbox(Protocol):
    """What code actions need of a sandbox; deskmate.tools.sandbox.Sandbox is one."""

    @property
    def limits(self) -> Limits: ...

    def execute(self, code: str, *, timeout: float | None = None,
                cancel: threading.Event | None = None,
                files: RequestFiles | None = None) -> CellResult: ...

    def close(self) -> None: ...


class CodeActions:
    mode: Mode = "code"
    tools: tuple[dict[str, Any], ...] = ()  # the tools live in the sandbox, not the template

    def __init__(self, sandbox: Sandbox,
                 objects: Callable[[], Collection[str]] = frozenset,
                 returned: Callable[[], Sequence[Returned]] = tuple,
                 takers: Callable[[str], Sequence[str]] = lambda name: (),
                 missing: Callable[[str], MissingStep | None] = lambda request: None,
                 changes: Callable[[], int] = lambda: 0,
                 texts: Callable[[], Sequence[str]] = tuple,
                 deletes_refused: Callable[[], int] = lambda: 0) -> None:
        self.sandbox = sandbox
        self.objects = objects  # the servers' names in the sandbox, now (they can change)
        self.returned = returned  # what the running cell's tool calls returned
        self.takers = takers  # the tools not called that take a value of a name (unused.py)
        self.missing = missing  # a change the request asks for that no tool did this turn
        self.changes = changes  # the changes tools made this turn (TurnRecord.changes)
        self.texts = texts  # the texts the turn's tool calls returned (TurnRecord.results)
        self.deletes_refused = deletes_refused  # deletes refused as unread (TurnRecord)
        # The changes made by the end of each cell's last run: a cell written again after
        # a later change (a file written since it was read) would not do the same again.
        self._changes_at: dict[str, int] = {}
        self._cells: Counter[str] = Counter()  # this turn's cells, for the repetition guard
        self._seen: dict[str, str] = {}  # what each of this turn's cells showed the model
        self._printed: set[str] = set()  # this turn's cells that ran and printed something
        self._failed = False  # the last reply was a cell that ran and failed
        self._last_output = ""  # what the last cell that ran showed the model
        self._looked: set[str] = set()  # the first look's calls this turn (as ast.dump)
        self._before_code = False  # a first look was shown and no reply acted on it yet
        self._answer_asked = False  # a repeat that would end the turn asked for the answer
        self._answering = False  # ... and the next reply is that answer

    def stop_at(self, reply: str) -> int | None:
        # We end the stream once the code block is complete, so the model cannot invent
        # the block's output.
        return closed_code_block(reply)

    def new_turn(self) -> None:
        self._cells.clear()
        self._changes_at.clear()
        self._seen.clear()
        self._printed.clear()
        self._failed = False
        self._last_output = ""
        self._looked.clear()
        self._before_code = False
        self._answer_asked = self._answering = False

    def looked(self, calls: Sequence[str]) -> None:
        self._looked.update(filter(None, map(call_form, calls)))
        self._before_code = True

    def next_grammar(self, last: bool = False) -> str | None:
        """After a cell that failed, the reply is code. Small models answer a traceback
        with "Final answer:" and a copy of it, or "the calculation failed", and the check
        that sends that back costs one of the turn's few steps; the fix written at once
        does not. So is the first reply after the first look: small models answer from
        the look's few lines ("No files to move."), and the check of an answer given
        before any code ran sends that back too. The last step stays free: a turn that
        cannot fix its error still answers. After the repeat that would have ended the
        turn, the reply is the answer asked for (small models wrote the same code)."""
        if self._answering:  # once: a check that sends the answer back wants code
            self._answering = False
            return ANSWER_REPLY
        if last:
            return None
        return CODE_REPLY if self._failed or self._before_code else None

    def act(self, step: int, reply: str, turn: Turn) -> Generator[ev.AgentEvent, None, bool]:
        failed_before = self._failed
        self._failed = self._before_code = False
        yield turn.append(ChatMessage("assistant", reply))
        parsed = parse_reply(reply, self.objects())
        if isinstance(parsed, FinalAnswer):
            yield ev.FinalAnswer(step=step, text=parsed.text)
            return True
        if isinstance(parsed, Malformed):
            yield ev.Observation(step=step, content=parsed.correction, status="error",
                                 duration_s=0.0)
            yield turn.append(ChatMessage("user", parsed.correction))
            return False
        assert isinstance(parsed, CodeAction)
        yield ev.CodeAction(step=step, thought=parsed.thought, code=parsed.code)
        cell = same_cell(parsed.code)
        if self._changes_at.get(cell, self.changes()) < self.changes():
            # Written again after a tool changed something (the 1.5B read the config
            # again after writing it, and was told its output would be the same): it
            # runs, as a cell of its own.
            self._cells[cell] = 0
            self._printed.discard(cell)
        if self._cells[cell] + 1 >= turn.repeat_code:
            if self._answer_asked or step >= turn.max_steps:
                raise Stop("repetition")
            # With a step left, the turn ends with an answer from what the outputs
            # showed instead of with none (asked for what it "could not do", the 0.5B
            # answered that it could do nothing, with the answer printed above).
            return (yield from self._ask_for_answer(step, cell, turn))
        if self._last_output and prints_only(parsed.code):
            return (yield from self._prints_only(step, cell, turn, failed_before))
        if (cell in self._printed and not self._answer_asked and step < turn.max_steps
                and only_asks(turn.request)):
            # A question's cell that ran and printed, written again: what it printed is
            # what the model had to go on (the 1.5B, shown the files by size, listed
            # them by size again and again). The answer is asked for at once.
            return (yield from self._ask_for_answer(step, cell, turn))
        if self._cells[cell]:
            if cell in self._printed and (missing := self.missing(turn.request)):
                # A cell that printed, written again while a change the request asks for
                # has no tool run: that step is named (the 1.5B, the month totals
                # printed, wrote the same cell twice more and never wrote the file).
                content = REPEATED_HEAD + missing_step_check(missing.verb, missing.calls)
            else:
                # Run again, a stuck model's cell fails the same way and it writes it once
                # more; the request, read again, often shows the step it skipped.
                content = REPEATED + turn.request + what_it_was_told(self._seen.get(cell, ""))
            return (yield from self._not_run(step, cell, content, turn))
        if cut_off(reply, parsed.code):
            # Run, it is a syntax error at its last line, which says nothing of why; the
            # same cell again is cut off the same way (and then refused as a repeat).
            self._seen[cell] = CUT_OFF
            return (yield from self._not_run(step, cell, CUT_OFF, turn))
        if self._looked and only_calls(parsed.code, self._looked):
            # The look's calls again, printed: a step spent on what is already shown.
            return (yield from self._not_run(step, cell, LOOKED_AGAIN + turn.request, turn))
        refused = self.deletes_refused()
        result = yield from self._execute(parsed.code, turn)
        # A cell the user refused may be asked again; so may one that met a delete
        # refused as unread (blind_delete.py), whose error says the same call again
        # goes through.
        if result.ran:
            if self.deletes_refused() == refused:
                self._cells[cell] += 1
            self._changes_at[cell] = self.changes()
            self._failed = result.status != "ok"
        content = observation(result, turn.observation_chars)
        printed = "\n".join(filter(None, (result.stdout, result.value)))
        nothing = came_to_nothing(result.status, printed)
        if not nothing:
            # (an empty result, `{'entities': []}`, is nothing to answer from: the 1.5B,
            # its search for a sentence empty, was asked for the answer and said none)
            self._printed.add(cell)
        if nothing and (
                note := unprinted(self.returned(), f"{printed}\n{result.error}")):
            content += "\n" + note
        if fields := text_fields(parsed.code, result.error, self.returned()):
            content += "\n" + fields
        # A call the bridge ran fixed is said first: the cell's own error, if any, stays
        # last, where a small model acts on it (it fixed the named value and kept the bug).
        if repaired := "\n".join(dict.fromkeys(r.repaired for r in self.returned()
                                                if r.repaired)):
            content = f"{OUTPUT_PREFIX}{repaired}\n{content.removeprefix(OUTPUT_PREFIX)}"
        if notes := "\n".join(dict.fromkeys(r.note for r in self.returned() if r.note)):
            content += "\n" + notes
        if result.status == "ok" and (unused := unused_note(parsed.code, self.takers)):
            content += "\n" + unused
        if same := same_replace_note(parsed.code, self.texts()):
            content += "\n" + same
        self._seen[cell] = self._last_output = content
        yield ev.Observation(step=step, content=content, status=result.status,
                             duration_s=result.duration_s)
        yield turn.append(ChatMessage("user", content))
        turn.check_cancelled()
        return False

    def _prints_only(self, step: int, cell: str, turn: Turn,
                     failed_before: bool) -> Generator[ev.AgentEvent, None, bool]:
        """A cell that only prints text written in it, after a cell that ran: not run.
        After a failed cell, what that cell was told comes again; with a change the
        request asks for still undone, its step is named; else the answer is asked for,
        or the code of a step that is left."""
        if failed_before and (told := what_it_was_told(self._last_output)):
            content = PRINTS_ONLY + PRINTS_AFTER_ERROR + told
        elif missing := self.missing(turn.request):
            content = PRINTS_ONLY + missing_step_check(missing.verb, missing.calls)
        else:
            # Not held to an answer: a step the request's words do not name may be left
            # (asked for the answer, the 1.5B said the change was staged; it was not).
            content = PRINTS_ONLY + PRINTS_DONE + turn.request
        return (yield from self._not_run(step, cell, content, turn))

    def _ask_for_answer(self, step: int, cell: str,
                        turn: Turn) -> Generator[ev.AgentEvent, None, bool]:
        """The cell is not run; the next reply is the answer (held to it by
        ``next_grammar``), once a turn."""
        self._answer_asked = self._answering = True
        content = repeated_answer(self._cells[cell] + 1, turn.request)
        return (yield from self._not_run(step, cell, content, turn))

    def _not_run(self, step: int, cell: str, content: str,
                 turn: Turn) -> Generator[ev.AgentEvent, None, bool]:
        """The cell is not run: it counts as written once more, and ``content`` says why."""
        self._cells[cell] += 1
        yield ev.Observation(step=step, content=content, status="error", duration_s=0.0)
        yield turn.append(ChatMessage("user", content))
        return False

    def _execute(self, code: str, turn: Turn) -> Generator[ev.AgentEvent, None, CellResult]:
        # A cell gets the time left in the turn at most; its status is then "timeout".
        timeout = min(self.sandbox.limits.cell_timeout_s, max(0.1, turn.seconds_left()))
        # A relative path to a file the request names is that file (``request_files``).
        return (yield from turn.in_thread(self.sandbox.execute, code, timeout=timeout,
                                          cancel=turn.interrupt(),
                                          files=request_files(turn.request)))


# One fenced Python block and nothing else; a backtick or two may stand in the code.
# The closing fence may take a newline: Qwen's tokens for "```\n" are "``" and "`\n", and
# a grammar that ends right at the fence bans the second, so a model closing its block
# that way wrote "``'" and went on (a syntax error, then the same reply again).
# Text without a fence: any character, and one or two backticks, never three in a row.
NO_FENCE = r"""([^`] | "`" [^`] | "``" [^`])*"""
CODE_REPLY = r"""root ::= "```python\n" code "```" "\n"?
code ::= """ + NO_FENCE
# An answer, and nothing else (after the repeat that would have ended the turn). No
# fence: held to "Final answer: ", the 0.5B wrote "Lisbon …" and then the cell again,
# which runs as code (an answer followed by a tool call is a call not yet made).
ANSWER_REPLY = r"""root ::= "Final answer: " text ("`" | "``")?
text ::= """ + NO_FENCE


def call_form(code: str) -> str | None:
    """A call as compared with a cell's (its syntax tree), or None for no single call."""
    try:
        tree = ast.parse(code.strip(), mode="eval")
    except SyntaxError:
        return None
    return ast.dump(tree.body) if isinstance(tree.body, ast.Call) else None


def prints_only(code: str) -> bool:
    """Whether every statement of ``code`` prints, or is, text written in it: a string
    constant (an f-string without values counts), nothing else."""
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return False
    def text(node: ast.expr) -> bool:
        return (isinstance(node, ast.Constant) and isinstance(node.value, str)) or (
            isinstance(node, ast.JoinedStr) and all(map(text, node.values)))
    for statement in body:
        if not isinstance(statement, ast.Expr):
            return False
        value = statement.value
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                and value.func.id == "print" and not value.keywords):
            if not all(map(text, value.args)):
                return False
        elif not text(value):
            return False
    return bool(body)


def only_calls(code: str, calls: Collection[str]) -> bool:
    """Whether every statement of ``code`` is one of ``calls`` (by call_form), bare or
    printed."""
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return False
    for statement in body:
        if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
            return False
        call = statement.value
        if (isinstance(call.func, ast.Name) and call.func.id == "print"
                and len(call.args) == 1 and not call.keywords
                and isinstance(call.args[0], ast.Call)):
            call = call.args[0]
        if ast.dump(call) not in calls:
            return False
    return bool(body)


def same_cell(code: str) -> str:
    """A cell as the repetition guard compares it: without blank lines, comments on a
    line of their own, and trailing spaces (a rerun that only reworded a comment is the
    same attempt)."""
    lines = (line.rstrip() for line in code.strip().splitlines())
    return "\n".join(line for line in lines if line and not line.lstrip().startswith("#"))


# The last line of a traceback: the exception and its message.
RAISED = re.compile(r"^(?:[A-Za-z_][\w.]*(?:Error|Exception)|ToolError|StopIteration)\b.*$",
                    re.M)
# Where a block of an output that says how to go on starts, and where one ends.
ADVICE = ("Hint:", "Note:", "Pass each by name")
ERROR_LINES = 3  # of an error's own lines after its first, repeated
OTHER_BLOCK = ("Not printed by your code", "The tool's documentation:", "Error:",
               "Traceback", "  File ")


def what_it_was_told(output: str) -> str:
    """For the guard's answer to a cell run before: the error that cell ended with and
    the hints and notes its output gave (the corrected call, the key meant, the word to
    search), last in the message. A small model that repeats a cell skipped them once;
    after the request they were followed by the same code again, and the repeat that
    follows ends the turn. "" when that cell's output held neither."""
    lines = output.splitlines()
    advice: list[str] = []
    inside = False
    for line in lines:
        if line.startswith(ADVICE):
            inside = True
        elif inside and (line.startswith(OTHER_BLOCK) or not line.strip()):
            inside = False
        if inside:
            advice.append(line)
    raised = list(RAISED.finditer(output))
    failed: list[str] = []
    if raised:
        # The error's own lines after the first (git's "  stderr: 'fatal: …'").
        after = output[raised[-1].end():].splitlines()[1:]
        more = list(itertools.takewhile(
            lambda line: line.startswith("  ") and not line.startswith(OTHER_BLOCK), after))
        failed = [f"That code failed: {raised[-1].group()}", *more[:ERROR_LINES]]
    told = failed + advice
    return ("\n" + "\n".join(told)) if told else ""


def observation(result: CellResult, budget: int) -> str:
    """What the model sees of a cell: output, value, error, within ``budget`` characters."""
    parts = []
    if result.stdout:
        parts.append(result.stdout.rstrip())
    if result.value is not None:
        parts.append(result.value)
    if result.error:
        parts.append(f"Error: {result.error.rstrip()}")
    if result.state_lost:
        parts.append("(The Python session was restarted: earlier variables are gone.)")
    if not parts:
        parts.append("(no output — print() what you need to see)")
    return OUTPUT_PREFIX + truncate("\n".join(parts), budget)
