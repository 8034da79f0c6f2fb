"""The task family of ``benchmarks/learning.py``: one-tool requests over real MCP servers.

Four kinds, each answered by one call to one real server and a short answer:
- ``time``: "What time is it now in <city>?" — time server, ``get_current_time`` with
  the city's IANA zone; the answer must hold the current local time (HH:MM);
- ``sum``: "Add <a> and <b>" — everything server, ``get-sum``; the answer holds a + b;
- ``echo``: "Echo <word>" — everything server, ``echo``; the answer holds the word;
- ``file``: "What is the code word in <name>.txt?" — filesystem server,
  ``read_text_file`` on a file of a shared workspace; the answer holds the word.

Scoring is deterministic (no judge), the rubric's three criteria as ATLAS weighs them:
a quarter for calling the right tool (tool appropriateness), a quarter for calling it
with the right argument — the zone, the numbers, the word, the file — (parameter
accuracy), half for an answer that holds the right value (task fulfillment); a task
succeeds at 1.0. Partial credit gives groups reward variance: a base model that rarely
gets a whole task right still calls the right tool now and then (first full run with
the call's half undivided: no group varied in the first steps).

The split is fixed by a rule decided before any tuning: within each kind, values with
an even index train, odd ones are held out — disjoint cities, numbers, words and files.
The servers show only the tools the family needs (``disabled_tools``): a 135M model is
lost in thirty tool descriptions, and the other tools play no part in any task.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from deskmate.finetune.environment import Environment, EnvironmentFor
from deskmate.finetune.tasks import TrainTask
from deskmate.finetune.toolgate import ToolGate
from deskmate.tools.hub import Hub, ServerConfig
from deskmate.tools.hub.calls import CallHooks
from deskmate.tools.hub.results import ToolResult

ROOT = Path(__file__).resolve().parent.parent
MCP_SERVERS = ROOT / ".cache" / "mcp-servers"  # installed by `make test`

CITIES = (  # (city, IANA zone); even index: train, odd: held out
    ("Tokyo", "Asia/Tokyo"), ("Paris", "Europe/Paris"), ("London", "Europe/London"),
    ("Sydney", "Australia/Sydney"), ("Berlin", "Europe/Berlin"),
    ("Chicago", "America/Chicago"), ("New York", "America/New_York"),
    ("Kolkata", "Asia/Kolkata"), ("Los Angeles", "America/Los_Angeles"),
    ("Dubai", "Asia/Dubai"), ("Madrid", "Europe/Madrid"), ("Seoul", "Asia/Seoul"),
    ("Moscow", "Europe/Moscow"), ("Toronto", "America/Toronto"),
    ("Singapore", "Asia/Singapore"), ("Cairo", "Africa/Cairo"),
)
WORDS = ("apple", "river", "candle", "forest", "pepper", "garden", "silver", "rocket",
         "meadow", "copper", "lantern", "violet", "harbor", "pebble", "thunder", "maple")
FILE_WORDS = ("falcon", "orbit", "walnut", "saffron", "glacier", "tulip", "cobalt",
              "ember", "jasper", "quartz", "willow", "nectar")
KEEP_TOOLS = {"time": ("get_current_time",), "everything": ("echo", "get-sum"),
              "filesystem": ("read_text_file",)}
RIGHT_TOOL = RIGHT_ARGUMENTS = 0.25
RIGHT_ANSWER = 0.5


@dataclass(frozen=True)
class Family:
    train: list[TrainTask]
    heldout: list[TrainTask]


def _task(kind: str, prompt: str, index: int, **expect: Any) -> TrainTask:
    return TrainTask(prompt, "generated", split="heldout" if index % 2 else "train",
                     metadata={"kind": kind, **expect})


HINT = ("To call the tool {tool}, reply with only a tool call like this one:\n"
        '<tool_call>{{"name": "{tool}", "arguments": {example}}}</tool_call>\n'
        "Then answer the user with the tool's result.\n\n")


def _hint(tool: str, **example: Any) -> str:
    return HINT.format(tool=tool, example=json.dumps(example))


def make_family(seed: int = 0) -> Family:
    """Every task of the family, split by the even/odd rule (``seed`` picks the sums).

    The tools' schemas reach the model in its system message (SmolLM2's chat template
    reads no ``tools``: ``app/llm/template_tools.py`` writes them there); each prompt also
    names its one tool with one example call, on values in neither split (Kathmandu,
    whose offset no city here shares; 12 + 30; hello; example.txt), because a 135M model
    does not find the format from the schemas alone. Choosing the arguments (a city's
    IANA zone, the numbers, the word, the path) and answering from the result is the task.
    """
    rng = random.Random(seed)
    time_hint = _hint("time__get_current_time", timezone="Asia/Kathmandu")
    tasks = [_task("time", f"{time_hint}What time is it now in {city}?", i, zone=zone)
             for i, (city, zone) in enumerate(CITIES)]
    sum_hint = _hint("everything__get-sum", a=12, b=30)
    for i in range(16):
        a, b = rng.randint(100, 999), rng.randint(100, 999)
        tasks.append(_task("sum", f"{sum_hint}What is {a} plus {b}?", i, a=a, b=b))
    echo_hint = _hint("everything__echo", message="hello")
    tasks += [_task("echo", f"{echo_hint}Echo the word {w}.", i, word=w)
              for i, w in enumerate(WORDS)]
    file_hint = _hint("filesystem__read_text_file", path="${WORKSPACE}/example.txt")
    tasks += [_task("file", f"{file_hint}What is the code word in the file "
                    f"${{WORKSPACE}}/{name}.txt?", i, file=f"{name}.txt", word=word)
              for i, (name, word) in enumerate(zip(FILE_NAMES, FILE_WORDS, strict=True))]
    return Family([t for t in tasks if t.split == "train"],
                  [t for t in tasks if t.split == "heldout"])


FILE_NAMES = ("notes", "memo", "todo", "draft", "secret", "report", "letter", "plan",
              "diary", "recipe", "ticket", "receipt")


def write_workspace(folder: Path) -> Path:
    """The files of the ``file`` tasks, in ``folder`` (the filesystem server's root)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, word in zip(FILE_NAMES, FILE_WORDS, strict=True):
        (folder / f"{name}.txt").write_text(f"The code word is {word}.\n", encoding="utf-8")
    return folder


def servers(workspace: Path, root: Path = MCP_SERVERS) -> list[ServerConfig]:
    """The three real servers, showing only the family's tools."""
    npm = root / "npm" / "node_modules" / ".bin"
    configs = [
        ServerConfig("time", command=str(root / "py" / "bin" / "mcp-server-time")),
        ServerConfig("everything", command=str(npm / "mcp-server-everything"),
                     args=("stdio",)),
        ServerConfig("filesystem", command=str(npm / "mcp-server-filesystem"),
                     args=(str(workspace),)),
    ]
    return [_only(c) for c in configs]


def _only(config: ServerConfig) -> ServerConfig:
    from dataclasses import replace

    keep = KEEP_TOOLS[config.name]
    return replace(config, startup_timeout=120.0, call_timeout=30.0,
                   disabled_tools=tuple(_ALL_TOOLS[config.name] - set(keep)))


# Every tool of the pinned server versions (.cache/mcp-servers), to turn off the others.
_ALL_TOOLS: Mapping[str, set[str]] = {
    "time": {"get_current_time", "convert_time"},
    "everything": {"echo", "get-annotated-message", "get-env", "get-resource-links",
                   "get-resource-reference", "get-structured-content", "get-sum",
                   "get-tiny-image", "gzip-file-as-resource", "toggle-simulated-logging",
                   "toggle-subscriber-updates", "trigger-long-running-operation",
                   "trigger-elicitation-request", "trigger-url-elicitation",
                   "simulate-research-query"},
    "filesystem": {"read_file", "read_text_file", "read_media_file", "read_multiple_files",
                   "write_file", "edit_file", "create_directory", "list_directory",
                   "list_directory_with_sizes", "directory_tree", "move_file",
                   "search_files", "get_file_info", "list_allowed_directories"},
}


class RecordingGate(ToolGate):
    """A live gate that keeps every call it passed: the score looks at the arguments."""

    def __init__(self, hub: Hub) -> None:
        super().__init__(hub.tools(), hub.call, live_all=True)
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    def __call__(self, server: str, tool: str, arguments: dict[str, Any] | None = None, *,
                 cancel: threading.Event | None = None, hooks: CallHooks | None = None
                 ) -> ToolResult:
        self.calls.append((server, tool, dict(arguments or {})))
        return super().__call__(server, tool, arguments, cancel=cancel, hooks=hooks)


def environment(hub: Hub, workspace: Path) -> EnvironmentFor:
    """Rollouts share the started ``hub`` (the servers keep no state the tasks change);
    each gets its own recording gate and is scored by ``score``."""

    @contextlib.contextmanager
    def env(task: TrainTask) -> Iterator[Environment]:
        gate = RecordingGate(hub)
        prompt = task.prompt.replace("${WORKSPACE}", str(workspace))
        yield Environment(prompt, gate, hub,
                          lambda answer: score(task, gate.calls, answer, workspace))

    return env


def score(task: TrainTask, calls: list[tuple[str, str, dict[str, Any]]], answer: str,
          workspace: Path, now: datetime | None = None) -> float:
    """The right tool, its right arguments, the right answer (the module's docstring)."""
    m = task.metadata
    kind = m["kind"]
    tool, good = TOOLS[kind], ARGUMENTS[kind]
    used = [a for _, t, a in calls if t == tool]
    if kind == "time":
        right = _holds_time(answer, m["zone"], now)
    elif kind == "sum":
        right = re.search(rf"(?<!\d){m['a'] + m['b']}(?!\d)", answer.replace(",", "")) \
            is not None
    else:  # echo, file
        right = m["word"] in answer.casefold()
    return (RIGHT_TOOL * bool(used) + RIGHT_ARGUMENTS * any(good(m, a) for a in used)
            + RIGHT_ANSWER * right)


TOOLS = {"time": "get_current_time", "sum": "get-sum", "echo": "echo",
         "file": "read_text_file"}
ARGUMENTS: dict[str, Callable[[Mapping[str, Any], dict[str, Any]], bool]] = {
    "time": lambda m, a: str(a.get("timezone", "")) == m["zone"],
    "sum": lambda m, a: _number(a.get("a")) in (m["a"], m["b"])
    and _number(a.get("b")) in (m["a"], m["b"]),
    "echo": lambda m, a: m["word"] in str(a.get("message", "")).casefold(),
    "file": lambda m, a: Path(str(a.get("path", ""))).name == m["file"],
}


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _holds_time(answer: str, zone: str, now: datetime | None = None) -> bool:
    """The answer names the zone's local time of the last 5 minutes (24- or 12-hour)."""
    now = now or datetime.now(ZoneInfo(zone))
    found = {(int(h), mm) for h, mm in re.findall(r"(?<!\d)(\d{1,2}):(\d{2})(?!\d)", answer)}
    for minutes in range(6):
        t = now.astimezone(ZoneInfo(zone)) - timedelta(minutes=minutes)
        hours = {t.hour, t.hour % 12 or 12}
        if any(h in hours and mm == f"{t.minute:02d}" for h, mm in found):
            return True
    return False
