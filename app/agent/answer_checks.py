"""The checks a code-mode final answer gets before the loop takes it.

Small models answer before they have the data, give up after one error, copy an error's
report or the example's answer, name files nothing showed, report a change no tool made,
read a most or a count off printed data by eye, or answer "when" with no time. Each check
sends the answer back once a turn (some twice) with what is missing;
``AnswerChecks.check`` is the one the loop asks, with a step's reply, and "" takes the
answer as it is. The checks read the turn's messages and the bridge's record of its
calls; they change neither.
"""

from __future__ import annotations

from collections.abc import Callable

from deskmate.app.agent.asked_value import asked_kind, gives_none, lacks_check
from deskmate.app.agent.bridge import ToolBridge
from deskmate.app.agent.empty_result import FOUND_NOTHING
from deskmate.app.agent.made_up import MADE_UP
from deskmate.app.agent.missing_step import missing_step
from deskmate.app.agent.parse import (
    AFTER_ERROR,
    AFTER_NOTE,
    COPIED_EXAMPLE,
    ECHOED,
    FROM_LOOK,
    OUTPUT_PREFIX,
    UNCHANGED,
    UNREAD_DATA,
    UNSEEN_ADVICE,
    UNSEEN_NAMES,
    FinalAnswer,
    failed_output,
    missing_step_check,
    names_check,
    parse_reply,
    unopened,
    unread_files,
    unseen_again,
)
from deskmate.app.agent.prompt import copies_example
from deskmate.app.agent.request import (
    asks_about_contents,
    asks_for_change,
    copies_an_error,
    file_names,
    grounded_in,
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
from deskmate.app.llm.base import ChatMessage

# What the notes after a cell say (an answer right after one is checked once a turn).
NOTES = (MADE_UP, NOT_GIVEN, ONE_CHARACTER, FOUND_NOTHING, UNCHANGED_WRITE)
MAX_AFTER_ERROR = 2  # checks of an answer right after a failed cell, a turn
# Answers a turn that copy text instead of acting, sent back: an error's report (ECHOED),
# the example's answer (COPIED_EXAMPLE).
MAX_ECHOES = 2
TRACEBACK_HEAD = "Traceback (most recent call last)"
ECHO_CHARS = 24  # a line of an answer this long, found in a failed output, copies it


class AnswerChecks:
    """The checks of one conversation's answers; ``new_turn`` starts each turn's.

    ``messages`` gives the turn's messages so far (the request first), as the model saw
    them; ``bridge`` is the one way to the tools, whose turn record says what ran."""

    def __init__(self, bridge: ToolBridge,
                 messages: Callable[[], list[ChatMessage]]) -> None:
        self.bridge = bridge
        self._messages = messages
        self.new_turn("")

    def new_turn(self, request: str) -> None:
        self._request = request
        self._checked = False  # the check of an answer before any tool ran was made
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
        self._value_checked = False  # the check of an answer without the value asked for
        self._look_calls = 0  # the calls this turn's first look made (not the model's)
        self._echoes = 0  # answers this turn that copied an error's report or the example

    def looked(self, calls: int) -> None:
        """The first look made the turn's first ``calls``: not the model's, so an answer
        before the model's own calls is still one given before any tool ran."""
        self._look_calls = calls

    def _last(self) -> ChatMessage | None:
        messages = self._messages()
        return messages[-1] if messages else None

    def check(self, reply: str, change_only: bool = False) -> str:
        """The one check a final answer gets before it is taken, if any (each kind once
        a turn); "" to take the reply as it is. ``change_only``: only the checks of a
        change the request asks for that no tool made."""
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
        if lacking := self._lacks_value(answer):
            # ... or answer "when" with no time ("The library closes on Saturdays, as
            # indicated in the provided HTML content."), "how many" with no number.
            self._value_checked = True
            return lacks_check(*lacking)
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

    def _lacks_value(self, answer: FinalAnswer) -> tuple[str, str] | None:
        """(the kind, the question) when the request asks for a time or a number, a
        tool has returned this turn, and the answer holds none; once a turn."""
        if self._value_checked or self.bridge.turn.calls <= self._look_calls:
            return None
        asked = asked_kind(self._request)
        return asked if asked is not None and gives_none(asked[0], answer.text) else None

    def _not_worked_out(self) -> tuple[str, str] | None:
        """What the request asks to compare or count, when the model's calls returned
        data this turn and no cell that ran (nor a tool) did that work; once a turn."""
        if (self._worked_checked or self.bridge.turn.calls <= self._look_calls
                or not only_asks(self._request)):
            return None  # (a change's figures go into what it writes: its own checks)
        asked = asks_to_work_out(self._request)
        cells = cells_run(self._messages(), self.bridge.objects())
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
        failed = [m.content for m in self._messages()
                  if (m.role == "user" and failed_output(m.content))
                  or (m.role == "tool" and m.content.startswith("Error:"))]
        lines = [line.strip() for line in text.splitlines() if len(line.strip()) >= ECHO_CHARS]
        return any(line in output for line in lines for output in failed)

    def _after_note(self) -> bool:
        last = self._last()
        return (last is not None and last.role in ("user", "tool")
                and any(marker in last.content for marker in NOTES))

    def _answers_after_error(self, answer: FinalAnswer) -> bool:
        """A final answer right after a cell that failed, or that copies an error's
        report, twice a turn."""
        last = self._last()
        if self._error_checks >= MAX_AFTER_ERROR or last is None:
            return False
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
        seen = "\n".join(m.content for m in self._messages()
                         if m.role in ("user", "tool") and not names_check(m.content)).lower()
        return [name for name in file_names(answer.text) if name.lower() not in seen]

    def _shown_names(self) -> list[str]:
        """The file names this turn's tool outputs gave, newest output first."""
        shown = [m.content for m in self._messages()
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
