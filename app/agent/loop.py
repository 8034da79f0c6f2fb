"""``Agent``: the loop. Query the model, run the action its reply holds, repeat.

``run(task)`` is a plain generator of typed events (app/agent/events.py) used as is by
the CLI, the TUI, the recorder and RL rollouts. What a reply looks like and what running
it does belongs to the action format (app/agent/actions.py: code or eager), so the loop
reads the same for both. The transcript is append-only and exactly what the model saw,
so llama.cpp reuses its KV cache for the whole prefix and the stored session is training
data as it is.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from queue import Queue
from typing import TYPE_CHECKING

from deskmate.app.agent import events as ev
from deskmate.app.agent.actions import Actions, Stop, Turn
from deskmate.app.agent.bridge import CallContext, ToolBridge
from deskmate.app.agent.empty_result import FOUND_NOTHING
from deskmate.app.agent.first_look import first_look
from deskmate.app.agent.made_up import MADE_UP
from deskmate.app.agent.missing_step import missing_step
from deskmate.app.agent.parse import (
    AFTER_ERROR,
    AFTER_NOTE,
    COPIED_EXAMPLE,
    ECHOED,
    FROM_LOOK,
    OUTPUT_PREFIX,
    TOOLS_FOUND,
    UNCHANGED,
    UNREAD_DATA,
    UNSEEN_ADVICE,
    UNSEEN_NAMES,
    FinalAnswer,
    failed_output,
    is_feedback,
    missing_step_check,
    names_check,
    parse_reply,
    unopened,
    unread_files,
    unseen_again,
)
from deskmate.app.agent.prompt import CODE_EXAMPLE, copies_example, example_form
from deskmate.app.agent.request import (
    asks_about_contents,
    asks_for_change,
    clauses,
    copies_an_error,
    file_names,
    grounded_in,
    head_start_query,
    listed_files,
    names_user_data,
    only_asks,
    web_addresses,
)
from deskmate.app.agent.tool_errors import ONE_CHARACTER, READ_FILE_TOOLS
from deskmate.app.agent.turn_record import UNCHANGED_WRITE
from deskmate.app.agent.unprinted import looked_at
from deskmate.app.agent.unused import NOT_GIVEN
from deskmate.app.agent.worked_out import asks_to_work_out, cells_run, work_it_out, worked_out
from deskmate.app.llm.base import (
    ChatMessage,
    ChatModel,
    Delta,
    Finished,
    GenerationParams,
    ModelError,
    Usage,
)
from deskmate.tools.sandbox import SandboxError

if TYPE_CHECKING:
    from deskmate.app.agent.experience import Experience

# What the notes after a cell say (an answer right after one is checked once a turn).
NOTES = (MADE_UP, NOT_GIVEN, ONE_CHARACTER, FOUND_NOTHING, UNCHANGED_WRITE)
MAX_AFTER_ERROR = 2  # checks of an answer right after a failed cell, a turn
# Answers a turn that copy text instead of acting, sent back: an error's report (ECHOED),
# the example's answer (COPIED_EXAMPLE).
MAX_ECHOES = 2
TRACEBACK_HEAD = "Traceback (most recent call last)"
ECHO_CHARS = 24  # a line of an answer this long, found in a failed output, copies it

@dataclass(frozen=True)
class AgentLimits:
    max_steps: int = 12  # model calls per turn
    max_tool_calls: int = 30  # per turn
    wall_s: float = 600.0  # per turn
    observation_chars: int = 4000  # what one action's output may add to the context
    max_tokens: int = 1024  # per model reply
    temperature: float = 0.2
    repeat_code: int = 3  # the same cell this many times in a turn ends it
    head_start: int = 3  # code mode: tools found for the request, shown before step 1
    # Code mode: the request's files read (first lines) and folders listed before step 1.
    first_look: bool = True
    code_after_error: bool = True  # code mode: a failed cell's next reply is code (grammar)
    # Code mode's example: "text" inside the system prompt, "turns" after it
    # (prompt.CODE_EXAMPLE), or "auto": by the model's size (prompt.example_form).
    example: str = "auto"


@dataclass
class Tally:
    """What a turn used so far, reported in ``TurnFinished``."""

    steps: int = 0
    model_calls: int = 0
    tool_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, usage: Usage) -> None:
        self.model_calls += 1
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens


class Agent:
    """A conversation with one model: ``run`` a turn per user message, in one transcript.

    ``actions`` is the format the model acts in (code or eager); ``bridge`` is the one
    way to the tools, whichever format calls them, so the loop gives it each turn's
    limits and counts its calls."""

    def __init__(self, model: ChatModel, actions: Actions, bridge: ToolBridge, *,
                 system_prompt: str, limits: AgentLimits = AgentLimits(),
                 transcript: list[ChatMessage] | None = None) -> None:
        self.model, self.actions, self.bridge = model, actions, bridge
        self.limits = limits
        self.system_prompt = system_prompt
        self.transcript: list[ChatMessage] = list(transcript or [])
        # Code actions show the model its cells' output as user messages: not turns.
        self.turns = sum(1 for m in self.transcript
                         if m.role == "user" and not is_feedback(m.content))
        # Tool calls report from helper threads; the turn passes their events on in order.
        self._events: Queue[ev.AgentEvent] = Queue()
        self._request, self._checked = "", False  # this turn's task; its check was made
        # Solved earlier requests to show one of as an example (code mode); None: none.
        self.experience: Experience | None = None
        # Checks of an answer right after an error this turn (a second follows a fix
        # that failed again: the check reads the last cell's output).
        self._error_checks = 0
        self._change_checked = False  # the check of an answer that changed nothing was made
        # The calls that had run when an answer naming unseen files was checked; None: not
        # checked this turn. A second check needs a call since (the files then shown).
        self._names_checked_at: int | None = None
        self._names_rechecked = False
        self._urls_checked = False  # the check of an answer before the request's URL opened
        self._reads_checked = False  # the check of an answer about files only listed
        self._steps_checked = False  # the check of an answer with a change not made
        self._note_checked = False  # the check of an answer right after a note
        self._worked_checked = False  # the check of a most/how many read off by eye
        self._look_calls = 0  # the calls this turn's first look made (not the model's)
        self._echoes = 0  # answers this turn that copied an error's report or the example
        self._turn_start = 0  # where this turn's messages start in the transcript

    def run(self, task: str, cancel: threading.Event | None = None) -> Iterator[ev.AgentEvent]:
        cancel = cancel or threading.Event()
        started = time.perf_counter()
        self.turns += 1
        tally = Tally()
        yield ev.TurnStarted(turn=self.turns, user_message=task)
        if not self.transcript:
            yield self._append(ChatMessage("system", self.system_prompt))
        self._turn_start = len(self.transcript)
        yield self._append(ChatMessage("user", task))
        yield from self._recall(task)
        yield from self._head_start(task)
        turn = Turn(cancel=cancel, deadline=started + self.limits.wall_s,
                    observation_chars=self.limits.observation_chars,
                    repeat_code=self.limits.repeat_code, append=self._append,
                    events=self._events, request=task, max_steps=self.limits.max_steps)
        self.bridge.new_turn(CallContext(emit=self._events.put,
                                         max_tool_calls=self.limits.max_tool_calls,
                                         cancel=turn.interrupt(), said=self._said,
                                         request=task))
        self.actions.new_turn()
        self._request, self._checked = task, False
        self._change_checked = self._names_rechecked = False
        self._error_checks = 0
        self._names_checked_at = None
        self._urls_checked = self._reads_checked = self._steps_checked = False
        self._note_checked = self._worked_checked = False
        self._echoes = 0
        self._look_calls = 0
        status: ev.TurnStatus = "max_steps"
        try:
            yield from self._first_look(task, turn)
            for step in range(1, self.limits.max_steps + 1):
                if cancel.is_set():
                    raise Stop("cancelled")
                if time.perf_counter() - started > self.limits.wall_s:
                    raise Stop("timeout")
                tally.steps = step
                if (yield from self.step(step, turn, tally)):
                    status = "answered"
                    break
                if self.bridge.turn.limit_reached:
                    raise Stop("max_tool_calls")
        except Stop as stop:
            status = stop.status
        except ModelError as exc:
            status = "error"
            yield ev.AgentError(message=str(exc), kind="model")
        except SandboxError as exc:  # the worker could not be (re)started
            status = "error"
            yield ev.AgentError(message=f"the Python sandbox failed: {exc}", kind="sandbox")
        tally.tool_calls = self.bridge.turn.calls
        yield ev.TurnFinished(
            turn=self.turns, status=status, steps=tally.steps, model_calls=tally.model_calls,
            tool_calls=tally.tool_calls, prompt_tokens=tally.prompt_tokens,
            completion_tokens=tally.completion_tokens, wall_s=time.perf_counter() - started)

    def step(self, step: int, turn: Turn, tally: Tally) -> Generator[ev.AgentEvent, None, bool]:
        """Query the model, then execute the action in its reply; True: it answered."""
        self.bridge.new_step(step)
        reply = yield from self._query(step, turn, tally)
        # A check wants code, then an answer: with fewer steps left than that, the answer
        # given is worth more than a turn that ends at max_steps with none — except
        # where the request's change is still undone, which the last step can still make.
        left = self.limits.max_steps - step
        check = self._check(reply, change_only=left < 2) if left >= 1 else ""
        if check:
            yield turn.append(ChatMessage("assistant", reply))
            yield ev.Observation(step=step, content=check, status="error", duration_s=0.0)
            yield turn.append(ChatMessage("user", check))
            return False
        return (yield from self.actions.act(step, reply, turn))

    def _recall(self, task: str) -> Iterator[ev.AgentEvent]:
        """The code that solved a similar earlier request, as a note after this one."""
        if self.experience is None or self.actions.mode != "code":
            return
        servers = [info.name for info in self.bridge.catalog.servers()]
        recalled = self.experience.recall(task, servers)
        if recalled is not None:
            yield self._append(ChatMessage("user", recalled.note))

    def _head_start(self, task: str) -> Iterator[ev.AgentEvent]:
        """The search a small model often skips, done for it: the signatures of the tools
        that best match the request, as a note after it (feedback, not a user's turn)."""
        if self.actions.mode != "code" or not self.limits.head_start:
            return
        if not self.bridge.catalog.servers():
            return
        # A question's words often match tools that change things; a request for a change
        # that starts "Read ... and store ..." is not a question.
        reading = only_asks(task)
        k = self.limits.head_start
        try:
            # A request of several steps ("fetch the page and write the file") needs a tool
            # per step, and the words of one step drown the other's in a search for the
            # whole: the whole request's best tool, each step's, then the whole's others.
            query = head_start_query(task)
            # Not the tools of a step the request rules out ("but do not commit it").
            whole = self.bridge.search_tools(query, k, reading=reading, servers=True,
                                             leave_out=task)
            found = whole[:1]
            for clause in clauses(query)[:k]:
                found += self.bridge.search_tools(clause, 1, reading=reading, leave_out=task)
            found += whole
        except Exception:  # a search that fails costs the head start, not the turn
            return
        found = list(dict.fromkeys(found))[:k]
        if found:
            yield self._append(ChatMessage("user", TOOLS_FOUND + "\n".join(found)))

    def _first_look(self, task: str, turn: Turn) -> Generator[ev.AgentEvent, None, None]:
        """What the request's files and folders hold, read through the file tools (their
        calls count in this turn), as a note after the request (first_look.py)."""
        if self.actions.mode != "code" or not self.limits.first_look:
            return
        looked = yield from turn.in_thread(first_look, task, self.bridge.tools(),
                                           self.bridge.call_quietly)
        # The look's calls are not the model's: an answer before its own are checked.
        self._look_calls = self.bridge.turn.calls
        if looked.note:
            self.actions.looked(looked.calls)
            yield self._append(ChatMessage("user", looked.note))

    def _check(self, reply: str, change_only: bool = False) -> str:
        """The one check a code-mode final answer gets before it is taken, if any (each
        kind once a turn); "" to take the reply as it is. ``change_only``: only the checks
        of a change the request asks for that no tool made."""
        if self.actions.mode != "code":
            return ""
        answer = parse_reply(reply, self.bridge.objects())
        if not isinstance(answer, FinalAnswer):
            return ""
        if change_only:
            return self._change_check()
        if self._echoes < MAX_ECHOES and copies_example(answer.text):
            # Small models copy the example exchange's answer word for word.
            self._echoes += 1
            return COPIED_EXAMPLE
        if self._answers_unread():
            # Small models often answer a question about the user's files or records
            # from a guess, before any tool ran: ask once whether the data is needed.
            self._checked = True
            return FROM_LOOK if self._look_calls else UNREAD_DATA
        if self._echoes < MAX_ECHOES and self._echoes_a_failure(answer.text):
            # ... or, told so, write the failed cell's output back as the answer (which a
            # look at the tools' results in it would otherwise pass as read).
            self._echoes += 1
            return ECHOED
        if not self._note_checked and self._after_note():
            # ... or answer right after a note that says what is still wrong (made-up
            # values, a value never given to its tool, a search with a sentence).
            self._note_checked = True
            return AFTER_NOTE
        if self._answers_after_error(answer):
            # ... or give up after one failed call, restating the error as the answer.
            self._error_checks += 1
            return AFTER_ERROR
        if (asked := self._not_worked_out()) is not None:
            # ... or pick the most, the earliest or a count off the printed data by eye
            # (each entity's count printed, and the wrong one named as having the most).
            self._worked_checked = True
            return work_it_out(*asked)
        if change := self._change_check():
            return change
        if unseen := self._unseen_names(answer):
            # ... or name files from a guess ("the first commit added README.md" after a
            # log that lists no files), and again after the code that shows them ran.
            if self._names_checked_at is None:
                self._names_checked_at = self.bridge.turn.calls
                return UNSEEN_NAMES + ", ".join(unseen) + UNSEEN_ADVICE
            self._names_rechecked = True
            return unseen_again(unseen, self._shown_names())
        if unread := self._only_listed(answer):
            # ... or say which file holds a thing from a listing of their names.
            self._reads_checked = True
            return unread_files(unread, self.bridge.named(("read_multiple_files",
                                                            *READ_FILE_TOOLS)))
        if (addresses := self._unopened()) and (fetchers := self.bridge.taking(("url", "uri"))):
            # ... or write what a page "says" without fetching it (the license's text,
            # saved and committed, was "This is the license text.").
            self._urls_checked = True
            return unopened(addresses, fetchers)
        return ""

    def _change_check(self) -> str:
        """The check of an answer while a change the request asks for is undone."""
        if (not self._steps_checked and self.bridge.turn.calls
                and (missing := missing_step(self._request, self.bridge.tools(),
                                             self.bridge.turn.called))):
            # ... or leave out a step of several ("…, and commit it there").
            self._steps_checked = self._change_checked = True
            return missing_step_check(missing.verb, missing.calls)
        if self._answers_unchanged():
            # ... or report a change as done when no tool made it (read the file, then
            # "The version has been set to 2.0.0.").
            self._change_checked = True
            return UNCHANGED
        return ""

    def _not_worked_out(self) -> tuple[str, str] | None:
        """What the request asks to compare or count, when the model's calls returned
        data this turn and no cell that ran (nor a tool) did that work; once a turn."""
        if (self._worked_checked or self.bridge.turn.calls <= self._look_calls
                or not only_asks(self._request)):
            return None  # (a change's figures go into what it writes: its own checks)
        asked = asks_to_work_out(self._request)
        cells = cells_run(self.transcript[self._turn_start:], self.bridge.objects())
        if asked is None or worked_out(asked[0], cells, self.bridge.turn.called,
                                       self.bridge.turn.sent):
            return None
        return asked

    def _only_listed(self, answer: FinalAnswer) -> list[str]:
        """The files an answer to a question about what files hold names that an output
        listed and no call was given this turn, once a turn."""
        if self._reads_checked or not asks_about_contents(self._request):
            return []
        sent = "\n".join(self.bridge.turn.sent)
        listed = {name for name in self._shown_names()}
        return [name for name in file_names(answer.text)
                if name in listed and name not in sent]

    def _unopened(self) -> list[str]:
        """The web addresses of the request that no call this turn was given, once a
        turn, when tools ran (a request answered without tools is the other checks')."""
        if self._urls_checked or not self.bridge.turn.calls:
            return []
        sent = "\n".join(self.bridge.turn.sent)
        return [address for address in web_addresses(self._request)
                if address not in sent and address.rstrip("/") not in sent]

    def _answers_unread(self) -> bool:
        """The first final answer of the turn, with no tool call yet, to a request that
        names a path, a file or a store of the user's data."""
        return (not self._checked and self.bridge.turn.calls == self._look_calls
                and bool(self.bridge.catalog.servers()) and names_user_data(self._request))

    def _echoes_a_failure(self, text: str) -> bool:
        """An answer that copies an error's report from a failed cell or tool call of
        this turn: a line of it (not a short one: "Error: disk full" read from a log is
        an answer) stands in that output word for word."""
        if not copies_an_error(text):
            return False
        failed = [m.content for m in self.transcript[self._turn_start:]
                  if (m.role == "user" and failed_output(m.content))
                  or (m.role == "tool" and m.content.startswith("Error:"))]
        lines = [line.strip() for line in text.splitlines() if len(line.strip()) >= ECHO_CHARS]
        return any(line in output for line in lines for output in failed)

    def _after_note(self) -> bool:
        last = self.transcript[-1] if self.transcript else None
        return (last is not None and last.role in ("user", "tool")
                and any(marker in last.content for marker in NOTES))

    def _answers_after_error(self, answer: FinalAnswer) -> bool:
        """A final answer right after a cell that failed, or that copies an error's
        report, twice a turn."""
        if self._error_checks >= MAX_AFTER_ERROR or not self.transcript:
            return False
        last = self.transcript[-1]
        if last.role == "user" and failed_output(last.content):
            # The failed cell's look at what its tools returned may hold the answer (the
            # author in a log the code indexed like a list): an answer that gives a value
            # from it, and not from the request, was read, not guessed.
            looked = looked_at(last.content)
            return not (looked and grounded_in(answer.text, looked, self._request))
        # (an error the user's data holds, "Error: disk full" read from a log, is an answer)
        return TRACEBACK_HEAD in answer.text or self._echoes_a_failure(answer.text)

    def _unseen_names(self, answer: FinalAnswer) -> list[str]:
        """The file names the answer gives that neither the request nor anything the
        turn's tools returned showed, once a turn, when tools ran."""
        if self._names_rechecked or not self.bridge.turn.calls or (
                self._names_checked_at is not None
                and self.bridge.turn.calls == self._names_checked_at):
            return []
        seen = "\n".join(m.content for m in self.transcript[self._turn_start:]
                         if m.role in ("user", "tool") and not names_check(m.content)).lower()
        return [name for name in file_names(answer.text) if name.lower() not in seen]

    def _shown_names(self) -> list[str]:
        """The file names this turn's tool outputs gave, newest output first."""
        shown = [m.content for m in self.transcript[self._turn_start:]
                 if m.role == "tool" or (m.role == "user" and m.content.startswith(
                     OUTPUT_PREFIX))]
        return list(dict.fromkeys(name for text in reversed(shown)
                                  for name in listed_files(text)))

    def _answers_unchanged(self) -> bool:
        """A final answer, once a turn, to a request for a change, when no call to a tool
        that may change things succeeded (and the tools say which only read)."""
        if (self._change_checked or self.bridge.turn.changes
                or not asks_for_change(self._request)):
            return False
        if self._checked and self.bridge.turn.calls == self._look_calls:
            return False  # asked for a tool once already, and still none ran: no second nag
        return self.bridge.marks_read_only()

    def _said(self) -> str:
        """What the user and the tools said in this conversation: the text a record's
        values may be copied from (the bridge's made-up check)."""
        return "\n".join(m.content for m in self.transcript if m.role in ("user", "tool"))

    @property
    def example_turns(self) -> bool:
        """Whether the worked example is shown as turns (else it is in the system prompt)."""
        return example_form(self.limits.example, self.model.info) == "turns"

    def model_view(self) -> list[ChatMessage]:
        """What the model is given: the transcript, and in code mode with the example
        as turns (``example_turns``) and a server connected the exchange (``CODE_EXAMPLE``)
        after its system prompt (with no server, a made-up server's call is only a wrong
        lead). The example is not recorded: sessions, the UI and the judge see the
        conversation only."""
        if (self.actions.mode != "code" or not self.example_turns
                or not self.transcript or self.transcript[0].role != "system"
                or not self.bridge.catalog.servers()):
            return self.transcript
        return [self.transcript[0], *CODE_EXAMPLE, *self.transcript[1:]]

    def _append(self, message: ChatMessage) -> ev.MessageAppended:
        self.transcript.append(message)
        return ev.MessageAppended(position=len(self.transcript) - 1, role=message.role,
                                  content=message.content, tool_call_id=message.tool_call_id,
                                  tool_calls=message.tool_calls)

    def _query(self, step: int, turn: Turn,
               tally: Tally) -> Generator[ev.AgentEvent, None, str]:
        """One model call, streamed, ended early where the action format says the reply
        is complete (code: the end of the first block)."""
        grammar = (self.actions.next_grammar(last=step >= self.limits.max_steps)
                   if self.limits.code_after_error and self.model.info.grammar else None)
        params = GenerationParams(max_tokens=self.limits.max_tokens, grammar=grammar,
                                  temperature=self.limits.temperature, tools=self.actions.tools)
        # Our own stop, also set by the user's cancel and by the turn's deadline.
        stop = turn.interrupt()
        text, result = "", None
        for event in self.model.stream(self.model_view(), params, stop):
            if isinstance(event, Delta):
                text += event.text
                yield ev.ModelDelta(step=step, text=event.text)
                if (end := self.actions.stop_at(text)) is not None:
                    text = text[:end]
                    stop.set()
            elif isinstance(event, Finished):
                result = event
        assert result is not None
        cut = result.finish_reason == "cancelled" and (turn.cancel.is_set() or stop.expired)
        reason = "cancelled" if cut else (
            "stop" if result.finish_reason == "cancelled" else result.finish_reason)
        yield ev.ModelMessage(step=step, text=text, finish_reason=reason, usage=result.usage)
        tally.add(result.usage)
        if reason == "cancelled":
            raise Stop("cancelled" if turn.cancel.is_set() else "timeout")
        return text

