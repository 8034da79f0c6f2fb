"""The user's config file: typed, validated as a whole, written atomically.

The file is TOML (documented in ``assets/config.toml``). Every section is a frozen
dataclass whose fields carry their documentation and constraints in ``metadata``;
``load_config`` checks every key before anything starts, so the app never runs on
half a config, and an error names the file, the line and the key.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import tomli_w

from deskmate.app import paths
from deskmate.app.files import atomic_write
from deskmate.tools.suggest import did_you_mean

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    # tools.hub is imported only when a config names servers: it pulls in the MCP client.
    from deskmate.tools.hub.servers import ServerConfig

_T = TypeVar("_T")
_Section = TypeVar("_Section", bound="DataclassInstance")


class ConfigError(Exception):
    """A config file that cannot be used as it is."""

    def __init__(self, path: Path, message: str, *, line: int | None = None, key: str = ""):
        self.path, self.line, self.key, self.message = path, line, key, message
        where = f"{path}:{line}" if line else str(path)
        what = f" {key}:" if key else ""
        super().__init__(f"config error in {where}:{what} {message}")


def _field(default: _T, doc: str, **constraints: object) -> _T:
    if isinstance(default, dict):
        return field(default_factory=type(default), metadata={"doc": doc, **constraints})
    return field(default=default, metadata={"doc": doc, **constraints})


@dataclass(frozen=True)
class ModelConfig:
    name: str = _field(
        "",
        "Model to run: a registry name (`deskmate models`), hf:OWNER/REPO/FILE.gguf, "
        "or the path of a local .gguf file. Empty: none chosen yet.",
    )
    backend: str = _field(
        "llama.cpp",
        "llama.cpp runs the model in-process; openai talks to an OpenAI-compatible server.",
        choices=("llama.cpp", "openai"),
    )
    context: int = _field(8192, "Context window in tokens.", min=256)
    threads: int = _field(
        0, "CPU threads for llama.cpp; 0 = chosen by timing (up to the physical cores).", min=0)
    gpu_layers: int = _field(
        -1, "Layers offloaded to the GPU: -1 all when the build supports it, 0 none.", min=-1
    )
    batch: int = _field(512, "Prompt tokens evaluated per llama.cpp batch.", min=1)
    adapter: str = _field("", "Path of a LoRA adapter in GGUF format; empty for none.")
    adapter_scale: float = _field(1.0, "Strength of the LoRA adapter.")
    temperature: float = _field(0.2, "Sampling temperature; 0 is greedy.", min=0.0)
    max_tokens: int = _field(2048, "Most tokens generated per model reply.", min=1)
    seed: int = _field(-1, "Sampling seed; -1 picks a random one per run.", min=-1)


@dataclass(frozen=True)
class OpenAIConfig:
    base_url: str = _field(
        "http://127.0.0.1:8080/v1", "Base URL of the server (llama-server, vLLM, Ollama)."
    )
    model: str = _field("", "Model name sent to the server; empty lets the server choose.")
    api_key_env: str = _field(
        "OPENAI_API_KEY", "Environment variable holding the API key (the key is never stored)."
    )
    timeout: float = _field(120.0, "Seconds to wait for the server.", min=0.1)


@dataclass(frozen=True)
class UIConfig:
    theme: str = _field("textual-dark", "Textual theme of the app.")


@dataclass(frozen=True)
class AgentConfig:
    mode: str = _field("code", "code: Python that calls tools; eager: native JSON tool calls.",
                       choices=("code", "eager"))
    max_steps: int = _field(12, "Model calls per turn before the agent stops.", min=1)
    max_tool_calls: int = _field(30, "Tool calls per turn.", min=1)
    turn_timeout: float = _field(600.0, "Seconds one turn may take.", min=1.0)
    observation_chars: int = _field(
        4000, "Characters of a cell's output the model sees (head and tail kept).", min=200)
    cell_timeout: float = _field(30.0, "Seconds one code cell may run.", min=1.0)
    index_tokens: int = _field(
        600, "Token budget of the server index in the system prompt.", min=50)
    experience: bool = _field(
        False, "Show, after a request, the code that solved the most similar earlier one "
        "(turns you rated up, eval tasks that passed) as an example. Off by default: on "
        "held-out eval tasks it has not helped the small models yet (benchmarks/RESULTS.md).")
    first_look: bool = _field(
        True, "Code mode: before the first step, read the first lines of each file and "
        "list each folder the request names (its absolute paths), through the connected "
        "file tools, and show them to the model, so its code knows the data's shape.")
    code_after_error: bool = _field(
        True, "Code mode: after a code cell that failed, and for the first reply after the "
        "first look, the reply must be code (a llama.cpp grammar; models served over HTTP "
        "reply freely), so the model fixes the error instead of answering with a copy of "
        "it, and reads the data instead of answering from the look's first lines. The "
        "turn's last step stays free. After a cell written a third time (for a question, "
        "a printing cell written a second time), the reply must be the answer.")
    example: str = _field(
        "auto", "How code mode shows the model its worked example: text inside the system "
        "prompt, turns (a conversation after it), or auto: turns for a model under 1B "
        "parameters, text otherwise. turns measured better for a 0.5B model and worse "
        "for a 1.5B (benchmarks/RESULTS.md).", choices=("auto", "text", "turns"))
    signature_tokens: int = _field(
        1000, "Token budget for listing every tool's signature in the system prompt when "
        "the whole catalog fits (0: the index only, signatures loaded on demand).", min=0)


def _key(default: str, doc: str) -> str:
    return _field(default, doc, nonempty=True)


@dataclass(frozen=True)
class KeysConfig:
    """Key bindings of the app, by action. Several keys: "f2,ctrl+s". Each screen's keys
    act only on that screen, so one key may serve on several screens."""

    help: str = _key("f1", "Show the keys and what they do.")
    sessions: str = _key("f2", "Open the sessions screen.")
    servers: str = _key("f3", "Open the MCP servers screen.")
    models: str = _key("f4", "Open the models screen.")
    finetune: str = _key("f5", "Open the finetuning screen.")
    chat: str = _key("f6", "Back to the chat.")
    new_session: str = _key("ctrl+n", "Start a new session.")
    cancel: str = _key("escape", "Cancel the running turn (or leave a screen).")
    toggle_theme: str = _key("ctrl+t", "Switch between the light and the dark theme.")
    quit: str = _key("ctrl+q", "Quit.")
    newline: str = _key("ctrl+j", "Insert a new line in the prompt (Enter sends it).")
    allow_once: str = _key("y", "Approval: allow this call once.")
    allow_tool: str = _key("a", "Approval: allow this tool for the session.")
    trust_server: str = _key("t", "Approval: trust the whole server.")
    deny: str = _key("n", "Approval: deny the call.")
    cell_run: str = _key("y", "Unisolated cell (the sandbox cannot isolate code here): run it.")
    cell_run_session: str = _key("s", "Unisolated cell: run this session's cells unasked.")
    cell_skip: str = _key("n", "Unisolated cell: do not run it.")
    question_accept: str = _key("ctrl+s", "A server's question: send the answer (or open "
                                          "the link).")
    question_decline: str = _key("ctrl+d", "A server's question: decline it.")
    session_resume: str = _key("enter", "Sessions: resume the highlighted session.")
    session_search: str = _key("slash", "Sessions: search the text of every session.")
    session_rename: str = _key("r", "Sessions: rename.")
    session_delete: str = _key("d", "Sessions: delete (asks first).")
    session_export: str = _key("e", "Sessions: export as JSONL or Markdown.")
    server_add: str = _key("a", "Servers: add a server.")
    server_import: str = _key("i", "Servers: import a Claude / .mcp.json file.")
    server_toggle: str = _key("space", "Servers: enable or disable.")
    server_restart: str = _key("r", "Servers: restart.")
    server_test: str = _key("t", "Servers: test (connect, list tools, timings).")
    server_sign_in: str = _key("l", "Servers: sign in (OAuth, in the browser) to an HTTP/SSE "
                                    "server.")
    server_edit: str = _key("e", "Servers: change how to reach it (command line or URL).")
    server_variable: str = _key("v", "Servers: set an environment variable (local) or a header "
                                     "(remote).")
    server_remove: str = _key("d", "Servers: remove (asks first).")
    server_tool_toggle: str = _key("o", "Servers: turn the highlighted tool (in the tools "
                                        "list) off or on for the agent.")
    model_use: str = _key("enter", "Models: use the highlighted model.")
    model_pull: str = _key("p", "Models: download.")
    model_cancel: str = _key("c", "Models: cancel the download.")
    model_local: str = _key("l", "Models: use a local .gguf file.")
    model_context: str = _key("x", "Models: set the context size.")
    model_adapter: str = _key("o", "Models: set the LoRA adapter.")
    finetune_start: str = _key("s", "Finetune: start a run.")
    finetune_stop: str = _key("x", "Finetune: stop the running run (it can be resumed).")
    finetune_use: str = _key("u", "Finetune: serve the selected run's adapter.")
    finetune_tasks: str = _key("t", "Finetune: choose which session prompts runs train on.")
    finetune_install: str = _key("i", "Finetune: install the training libraries (asks first).")
    finetune_delete: str = _key("d", "Finetune: delete the selected run (asks first).")
    task_toggle: str = _key("space", "Task picker: include or exclude the prompt.")


def _parse_servers(value: Any) -> dict[str, ServerConfig]:
    """``[mcp.servers.NAME]`` tables → ServerConfig, validated by tools.hub."""
    from deskmate.tools.hub.servers import ServerConfigError, server_from_table

    if not isinstance(value, dict):
        raise _SubkeyError("", "must be a table of servers, e.g. [mcp.servers.git]")
    servers: dict[str, ServerConfig] = {}
    for name, table in value.items():
        if not isinstance(table, dict):
            raise _SubkeyError(name, "must be a table, e.g. [mcp.servers." + name + "]")
        try:
            servers[name] = server_from_table(name, table)
        except ServerConfigError as exc:
            raise _SubkeyError(f"{name}.{exc.key}", str(exc)) from exc
    return servers


class _SubkeyError(ValueError):
    def __init__(self, subkey: str, message: str) -> None:
        self.subkey = subkey
        super().__init__(message)


@dataclass(frozen=True)
class MCPConfig:
    servers: dict[str, ServerConfig] = _field(  # noqa: RUF009 - _field builds a dataclasses.field
        {}, "MCP servers by name: [mcp.servers.NAME] tables (see tools/hub/servers.py).",
        parse=_parse_servers)


@dataclass(frozen=True)
class Config:
    model: ModelConfig = field(default_factory=ModelConfig)
    openai: OpenAIConfig = field(default_factory=OpenAIConfig)
    ui: UIConfig = field(default_factory=UIConfig)
    mcp: MCPConfig = field(default_factory=MCPConfig)
    agent: AgentConfig = field(default_factory=AgentConfig)
    keys: KeysConfig = field(default_factory=KeysConfig)


# ---------------------------------------------------------------- reading


def load_config(path: Path | None = None) -> Config:
    """Read and validate the config file; a missing file means all defaults."""
    path = path or paths.config_file()
    text = _read(path)
    if text is None:
        return Config()
    return config_from_dict(_parse(path, text), path, text)


def _read(path: Path) -> str | None:
    """The file's text; None when there is none yet."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except IsADirectoryError as exc:
        raise ConfigError(path, "is a folder, not a config file; point DESKMATE_CONFIG at "
                                "a file (it is created when missing)") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(path, f"cannot read the file ({exc})") from exc


def _parse(path: Path, text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # Python 3.11's TOMLDecodeError carries the position only in its message.
        match = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        line = int(match.group(1)) if match else None
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        raise ConfigError(path, f"invalid TOML: {message}", line=line) from exc


def config_from_dict(data: dict[str, Any], path: Path, text: str = "") -> Config:
    sections: dict[str, Any] = {}
    defaults = Config()
    known = {f.name for f in dataclasses.fields(Config)}
    for name, table in data.items():
        if name not in known:
            raise ConfigError(
                path, f"unknown section{_did_you_mean(name, known)}",
                line=_find_line(text, "", name) or _find_line(text, name, None), key=name,
            )
        if not isinstance(table, dict):
            raise ConfigError(
                path, "must be a table, e.g. [" + name + "]",
                line=_find_line(text, "", name), key=name,
            )
        sections[name] = _section(getattr(defaults, name), name, table, path, text)
    return Config(**sections)


def _section(defaults: _Section, section: str, table: dict[str, Any], path: Path,
             text: str) -> _Section:
    fields = {f.name: f for f in dataclasses.fields(defaults)}
    values: dict[str, Any] = {}
    for key, value in table.items():
        dotted = f"{section}.{key}"
        line = _find_line(text, section, key)
        if key not in fields:
            raise ConfigError(path, f"unknown key{_did_you_mean(key, fields)}", line=line,
                              key=dotted)
        if parse := fields[key].metadata.get("parse"):
            try:
                values[key] = parse(value)
            except _SubkeyError as exc:
                where, _, sub = f"{dotted}.{exc.subkey}".rpartition(".")
                line = _find_line(text, where, sub) or _find_line(text, where, None) or line
                raise ConfigError(path, str(exc), line=line, key=f"{dotted}.{exc.subkey}"
                                  ) from exc
            continue
        problem = _check(fields[key], value)
        if problem:
            raise ConfigError(path, problem, line=line, key=dotted)
        values[key] = float(value) if fields[key].type == "float" else value
    return dataclasses.replace(defaults, **values)


_TYPES: dict[str, tuple[type, ...]] = {
    "str": (str,), "int": (int,), "float": (int, float), "bool": (bool,),
}


def _check(f: dataclasses.Field[Any], value: Any) -> str | None:
    expected = _TYPES[str(f.type)]
    # bool is an int in Python, but `context = true` is a mistake, not 1.
    if not isinstance(value, expected) or (isinstance(value, bool) and bool not in expected):
        return f"expected {f.type}, got {type(value).__name__} {value!r}"
    if (choices := f.metadata.get("choices")) and value not in choices:
        return f"must be one of {', '.join(map(repr, choices))}, got {value!r}"
    if f.metadata.get("nonempty") and isinstance(value, str) and not value.strip():
        # Textual's keymap cannot take a key away, so "" would silently keep the default.
        return ("needs a key: every action keeps one (to use its key elsewhere, give "
                "this action another key)")
    if (low := f.metadata.get("min")) is not None and value < low:
        return f"must be at least {low}, got {value!r}"
    return None


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    """The closest known name, or the whole (short) list of them when none is close."""
    names = list(known)
    return f" ({did_you_mean(name, names) or 'known: ' + ', '.join(names)})"


_TABLE = re.compile(r"^\s*\[\s*([A-Za-z0-9_.\-\"' ]+?)\s*\]\s*(#.*)?$")


def _find_line(text: str, section: str, key: str | None) -> int | None:
    """Best-effort line of ``key`` inside ``[section]`` (tomllib gives no positions)."""
    current = ""
    for number, line in enumerate(text.splitlines(), start=1):
        if table := _TABLE.match(line):
            current = table.group(1).replace('"', "").replace("'", "")
            if key is None and current == section:
                return number
            continue
        if key is None:
            continue
        for prefix, scope in ((f"{section}.", ""), ("", section)):
            if current == scope and re.match(
                rf"^\s*[\"']?{re.escape(prefix + key)}[\"']?\s*[=.]", line
            ):
                return number
    return None


# ---------------------------------------------------------------- writing


def update_config(mutate: Callable[[dict[str, Any]], None], path: Path | None = None) -> Config:
    """Change the config file through ``mutate(data)`` and write it back atomically.

    A file that does not parse or validate is never overwritten: the user may be in the
    middle of editing it. The previous version is kept as ``config.toml.bak``.
    """
    path = path or paths.config_file()
    text = _read(path) or ""
    data = _parse(path, text) if text else {}
    config_from_dict(data, path, text)
    mutate(data)
    config = config_from_dict(data, path)
    if text:
        atomic_write(path.with_name(path.name + ".bak"), text)
    atomic_write(path, tomli_w.dumps(data))
    return config


def documented_template() -> str:
    """The commented default config shipped in assets/."""
    from importlib.resources import files

    return files("deskmate.assets").joinpath("config.toml").read_text(encoding="utf-8")
