"""Read what a small model replied: one code action, a final answer, or neither.

Small models drift from any format, so parsing is lenient: ```python, ```py or a bare
``` fence all count; an unclosed fence takes the rest of the reply; Python without a
fence (a bare ``server.tool(x=1)``, perhaps after a line of thought) is run as code;
other prose is taken as the answer. Only an empty reply, or code and nothing runnable, is
malformed, and the loop answers that with a precise correction.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection
from dataclasses import dataclass

_FENCE = re.compile(r"```[ \t]*(python3?|py)?[ \t]*\n(.*?)(?:\n[ \t]*```|\Z)", re.S | re.I)
_FINAL = re.compile(r"^\s*(?:\*\*)?final[ _]answer\s*(?:\*\*)?\s*[:：]\s*(?:\*\*)?\s*", re.I | re.M)


@dataclass(frozen=True)
class CodeAction:
    thought: str
    code: str


@dataclass(frozen=True)
class FinalAnswer:
    text: str


@dataclass(frozen=True)
class Malformed:
    correction: str  # what to tell the model


Parsed = CodeAction | FinalAnswer | Malformed

EMPTY_REPLY = ("Your reply was empty. Reply with a short thought and one ```python block, "
               "or with `Final answer: ...` when you are done.")
EMPTY_CODE = "Your code block was empty. Put the Python to run inside it."
# Eager mode's word to an empty reply, once a turn (actions_eager.py).
EMPTY_ANSWER = ("Your reply was empty. Answer the user from the tool results above, or "
                "call a tool if one is still needed.")
OUTPUT_PREFIX = "Output:\n"  # starts every observation of a code cell
# The one check before a final answer given without any tool call (app/agent/loop.py).
UNREAD_DATA = ("That answer came before any tool returned data. Write the code that calls "
               "the tool for what the request asks (by name, with the values from the "
               "request) and print its result; then answer from it.")
# ... and the same answer when the first look (first_look.py) had shown the data: a
# small model read a table or a listing off the look and answered from its head
# ("Northeast" for the region with the highest total; the first of four files as the
# largest).
FROM_LOOK = ("That answer came from the first look alone, before your code ran, and the "
             "look is not the work the request asks for. Write the code that reads the "
             "data with the tool, works out what the request asks (count, add up, compare "
             "in code) and prints it; then answer from its output.")
# Starts the note of the first look at the request's paths (first_look.py).
LOOK_NOTE = "A first look at what the request's paths hold"
# The one check before a final answer given right after a cell failed (app/agent/loop.py).
AFTER_ERROR = ("That answer came right after an error, so it is not from the data. Read the "
               "error, fix the code (another tool, or the arguments the signature names) "
               "and run it; then answer from its output.")
# The check of a final answer right after a note on the last cell (made-up values, a
# value built and never given, a one-character text, a search that found nothing), once a
# turn (app/agent/loop.py).
AFTER_NOTE = ("That answer comes right after a note on what the code did (above), which says "
              "what is still wrong or missing. Act on it first: write the code it points to "
              "and print the result; then answer.")
# Answers a final answer that copies an error's report (a traceback, "Error: ..."),
# twice a turn at most (app/agent/loop.py): after the check above, small models often
# write the failed cell's output back, and that is never the user's answer.
ECHOED = ("That reply copies the error report instead of acting on it, and an error "
          "report is not an answer. Do not write the output again: write one ```python "
          "block that does what the error and its hint say (or takes another way to the "
          "request), then answer from what it prints.")
# Answers a final answer that is the prompt's example answer (app/agent/prompt.py), twice a
# turn at most (app/agent/loop.py): the 0.5B copies it word for word.
COPIED_EXAMPLE = ("That answer is the example's, about the made-up weather server at the "
                  "start, not an answer to this request. Write the code that calls the tool "
                  "for this request (by name, with the values from the request) and print "
                  "its result; then answer from it.")
# The one check before a final answer to a request for a change when no tool that changes
# anything has run in the turn (app/agent/loop.py).
UNCHANGED = ("Nothing has been changed yet: no tool that writes or changes anything ran in "
             "this turn. Write the code that calls the tool for the change the request asks "
             "for (by name, with the values from the request) and print its result; then "
             "answer.")
# The one check before a final answer that names files no tool output nor the request
# showed (app/agent/loop.py); the names follow.
UNSEEN_NAMES = ("That answer names files that nothing in this task showed, so they are a "
                "guess: ")
UNSEEN_ADVICE = (". Run the code that shows them (list or read with the tools, and print "
                 "it); then answer from its output.")
# The check before a final answer when the request gives a web address no tool was
# called with this turn (app/agent/loop.py).
UNOPENED = " is in the request, and no tool has opened it in this task."


def unopened(addresses: list[str], tools: list[str]) -> str:
    """The check of an answer given before the request's web addresses were fetched:
    small models write what the page "says" (a license's text) from a guess."""
    return (", ".join(addresses) + UNOPENED + f" Call {' or '.join(tools[:2])} with it and "
            "use what it returns for what the request asks; then answer.")


# The check before a final answer about what files hold that names files only listed,
# never read, this turn (app/agent/loop.py).
UNREAD_FILES = " was not read by any tool in this task, so what it holds is a guess."


def unread_files(names: list[str], readers: list[str]) -> str:
    how = " or ".join(readers[:2]) if readers else "the tool that reads a file"
    return (", ".join(names) + UNREAD_FILES + f" Read the files the request is about with "
            f"{how} (each of them, in a for loop) and print what they hold; then answer "
            "from it.")


# The check before a final answer when a change the request asks for has no tool of its
# kind run this turn (app/agent/loop.py, missing_step.py).
MISSING_STEP = "A step is still missing: the request asks to "


def missing_step_check(verb: str, calls: tuple[str, ...]) -> str:
    return (f"{MISSING_STEP}{verb}, and no tool that does that has run in this task: "
            f"{' or '.join(calls[:2])}. Call it with the request's values and print what it "
            "returns; then answer.")


# The second check, after code ran since the first and the answer still names files no
# output showed; the files the outputs named follow.
UNSEEN_AGAIN = " is in none of this task's outputs either, so it is still a guess."
SHOWN_FILES = 12


def names_check(content: str) -> bool:
    """A message of the unseen-names check (it names the guessed files: not a sight of them)."""
    return content.startswith(UNSEEN_NAMES) or UNSEEN_AGAIN in content.split("\n", 1)[0]


def unseen_again(unseen: list[str], shown: list[str]) -> str:
    """The second check of an answer naming unseen files: the files outputs did name."""
    names = ", ".join(unseen)
    if not shown:
        return (names + UNSEEN_AGAIN + " Print what the tools return about the files the "
                "request asks for; then answer with the names the output gives.")
    listed = ", ".join(shown[:SHOWN_FILES]) + (" …" if len(shown) > SHOWN_FILES else "")
    return (f"{names}{UNSEEN_AGAIN} The files this task's outputs name: {listed}. Answer "
            "with the ones the request asks for, written as the output writes them.")


# Answers a cell the model already ran this turn, instead of running it again
# (actions_code.py); the request follows.
NOT_RUN = "Not run: "  # the start of every message that says a cell was not run
WORK_IT_OUT = "Check: the request asks "  # the start of worked_out.work_it_out's check
LACKS_VALUE = "That answer gives no "  # the start of asked_value.lacks_check's check
SAME_CODE = NOT_RUN + "this is the same code as before in this task, "
REPEATED_HEAD = SAME_CODE + "so its output would be the same again. "
REPEATED = (REPEATED_HEAD + "Take another way to what the request asks (another tool, other "
            "arguments, or a step that is still missing). The request: ")
# Answers the repeat that would end the turn, while steps are left, and a question's
# printing cell written again (actions_code.py): the turn ends with an answer from what
# the outputs showed, not with none. ``repeated_answer`` says how many times.
REPEATED_AGAIN = SAME_CODE + "for the "
REPEATED_ANSWER = ("Answer the request now from what the outputs above showed, starting "
                   "with \"Final answer:\". The request: ")
TIMES = {2: "second", 3: "third", 4: "fourth", 5: "fifth"}


def repeated_answer(times: int, request: str) -> str:
    """The ask for the answer after a cell written ``times`` times."""
    return f"{REPEATED_AGAIN}{TIMES.get(times, f'{times}th')} time. {REPEATED_ANSWER}{request}"


# Answers a cell that only prints text written in it (actions_code.py): the 1.5B, its
# commit made, printed the commit's output again as a cell (and again, to the end of
# the turn, with no answer); after an error, it printed the error's text.
PRINTS_ONLY = (NOT_RUN + "this code only prints text written in it: it runs no tool and "
               "works nothing out, so it shows nothing new. ")
PRINTS_AFTER_ERROR = "It does not fix the code before, which failed:"
PRINTS_DONE = ("If the request is done, answer it now, starting with \"Final answer:\"; if "
               "a step of it is left, write the code for that step. The request: ")
# Answers a cell that only makes the first look's calls again (actions_code.py): the
# 1.5B printed the look's listing once more, then described it as the answer. The
# request follows.
LOOKED_AGAIN = (NOT_RUN + "the first look above already made this call and shows what it "
                "returned. Use that, and write the code for what the request asks. The "
                "request: ")
# Answers a cell whose reply was cut off at the reply's length limit before its block
# closed (actions_code.py): the 1.5B's long, commented cell stopped mid-line, was told
# only "SyntaxError: '(' was never closed", and wrote the same cut-off cell again.
CUT_OFF = (NOT_RUN + "your reply reached its length limit before the code ended, so the "
           "cell stops mid-line. Write a shorter cell that does one step (no comments, no "
           "long strings) and prints what it finds; the next cell can do the rest.")
# Starts the example recalled from an earlier solved request (experience.py).
EXAMPLE_PREFIX = ("An earlier request like this one was solved by this code (its values were "
                  "that request's; use this one's):\n")
# Starts the head start: the tools found for the request, shown before step 1 (loop.py).
TOOLS_FOUND = "Tools that match this request (call one by name with the request's values):\n"


def failed_output(content: str) -> bool:
    """A cell's observation that reports an error (actions_code.observation writes any
    printed output first, then ``Error: ...`` on a line of its own)."""
    return content.startswith(OUTPUT_PREFIX) and "\nError: " in content


def is_feedback(content: str) -> bool:
    """A user-role message the loop wrote (a cell's output, a correction), not the user's."""
    return (content.startswith((OUTPUT_PREFIX, TOOLS_FOUND, EXAMPLE_PREFIX, SAME_CODE,
                                 LOOKED_AGAIN, PRINTS_ONLY, WORK_IT_OUT, LACKS_VALUE,
                                UNSEEN_NAMES, MISSING_STEP, LOOK_NOTE))
            or names_check(content)
            or any(check in content.split("\n", 1)[0] for check in (UNOPENED, UNREAD_FILES))
            or content in (EMPTY_REPLY, EMPTY_CODE, EMPTY_ANSWER, UNREAD_DATA, FROM_LOOK,
                           AFTER_ERROR, AFTER_NOTE,
                           ECHOED, UNCHANGED, COPIED_EXAMPLE))


def closed_code_block(text: str) -> int | None:
    """End offset of the first complete code block, so generation can stop there."""
    match = re.search(r"```[ \t]*(?:python3?|py)?[ \t]*\n.*?\n[ \t]*```", text, re.S | re.I)
    return match.end() if match else None


def cut_off(reply: str, code: str) -> bool:
    """Whether ``code`` comes from a block ``reply`` never closed and does not parse: the
    reply ran out of tokens mid-cell (a grammar holds every other reply to a closed
    block; without one, an unclosed block that parses still runs)."""
    if closed_code_block(reply) is not None or not _FENCE.search(reply.strip()):
        return False
    return not _parses(code)


def parse_reply(text: str, objects: Collection[str] = ()) -> Parsed:
    """``objects``: the names the session's tools are called through (its servers)."""
    stripped = text.strip()
    if not stripped:
        return Malformed(EMPTY_REPLY)
    final = _FINAL.search(stripped)
    fence = _FENCE.search(stripped)
    if final and (not fence or final.start() < fence.start()):
        # A call written before the answer means the answer was made up before the call
        # ran: run the call instead, and the model answers from what it returns.
        before = stripped[:final.start()].strip()
        if before and (code := bare_code(before)):
            return code
        if fence and calls_a_tool(fence.group(2), objects):
            # An "answer" that explains a fix and then writes the tool calls for it: they
            # have not run, and what they return is what the answer needs.
            return CodeAction(thought=stripped[:fence.start()].strip(),
                              code=fence.group(2).strip("\n"))
        return FinalAnswer(stripped[final.end():].strip())
    if fence:
        code = fence.group(2).strip("\n")
        if not code.strip():
            return Malformed(EMPTY_CODE)
        if inner := _FINAL.match(code):
            # The answer written inside a code block (the habit of the cells before it):
            # run as Python it is a syntax error, then a repeat that ends the turn.
            return FinalAnswer(code[inner.end():].strip())
        if is_prose(code):
            # ... or without "Final answer:" (a reply held to a code block after an error,
            # by a model that meant to answer): the same syntax error, then the repeat.
            return FinalAnswer(code.strip())
        return CodeAction(thought=stripped[: fence.start()].strip(), code=code)
    if stripped.endswith("```"):
        # A closing fence whose opening one was dropped (often after an error the reply
        # restates): the code is what runs up to it, however much text comes first.
        return bare_code(stripped[:-3].rstrip(), thought_lines=None) or FinalAnswer(stripped)
    return bare_code(stripped) or FinalAnswer(stripped)


# A sentence: words, then its end; none of the brackets or operators code is made of.
_SENTENCE = re.compile(r"^[A-Z][^=(){}\[\]<>#`]*[.!?:]?$")


def is_prose(code: str) -> bool:
    """Text in a code block that is sentences, not Python ("The TODO comment is in the
    parser.py file."): it does not parse, and each line reads as a sentence."""
    lines = [line.strip() for line in code.strip().splitlines() if line.strip()]
    if not lines or not all(_SENTENCE.match(line) and " " in line for line in lines):
        return False
    return not _parses(code)


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except SyntaxError:
        return False
    return True


def bare_code(text: str, thought_lines: int | None = 4) -> CodeAction | None:
    """``text`` as a code action when, after at most a few lines of thought, the rest is
    Python that calls something (``server.tool(...)``, ``print(...)``): small models drop
    the fence, and taking the call for the final answer ends the turn with nothing done.
    Prose almost never parses as Python, and a value alone (``42``, ``q3.csv``) calls
    nothing, so answers stay answers. ``thought_lines``: how many lines of thought may
    come first (None: any number)."""
    lines = text.split("\n")
    for start in range(len(lines) if thought_lines is None else min(len(lines),
                                                                     thought_lines)):
        code = "\n".join(lines[start:]).strip()
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError):
            continue
        if thought_lines is None and tree.body and isinstance(tree.body[0], ast.FunctionDef):
            continue  # a tool's signature copied from an error's documentation, not code
        if any(_acts(node) for node in ast.walk(tree)):
            return CodeAction(thought="\n".join(lines[:start]).strip(), code=code)
        return None
    return None


def calls_a_tool(code: str, objects: Collection[str]) -> bool:
    """Whether ``code`` calls a method of one of ``objects`` (``git.git_add(...)``): a
    snippet written for the user seldom calls the session's own tools."""
    if not objects:
        return False
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
               and isinstance(node.func.value, ast.Name) and node.func.value.id in objects
               for node in ast.walk(tree))


def _acts(node: ast.AST) -> bool:
    """A call of a tool (``server.tool(...)``, or bare: tools are functions too), or of
    a helper."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return isinstance(func, ast.Name) or (isinstance(func, ast.Attribute)
                                          and isinstance(func.value, ast.Name))
