"""Servers that ask and report progress, through the real Hub and the reference
``everything`` server (and the filesystem server for roots)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from conftest import toy_server

from deskmate.tools.hub import Hub, ServerConfig, ToolTimeout
from deskmate.tools.hub.calls import CallClock, CallHooks, Progress
from deskmate.tools.hub.elicitation import (
    AcceptDefaults,
    BadAnswer,
    ElicitAnswer,
    ElicitRequest,
    LinkRefused,
    UnsupportedForm,
    check_answer,
    decline,
    parse_form,
)

pytestmark = pytest.mark.slow


def everything(mcp_bin: Path, **options) -> ServerConfig:
    npm = mcp_bin / "npm" / "node_modules" / ".bin"
    return ServerConfig("everything", command=str(npm / "mcp-server-everything"),
                        args=("stdio",), **options)


@pytest.fixture(scope="module")
def hub(mcp_bin, tmp_path_factory):
    with Hub([everything(mcp_bin, call_timeout=2)], tmp_path_factory.mktemp("logs")) as hub:
        assert hub.start()[0].status == "ready", hub.state("everything").error
        yield hub


class Recording:
    """An asker that answers with ``answer`` after ``delay`` seconds, keeping what it
    was asked."""

    def __init__(self, answer: ElicitAnswer, delay: float = 0.0) -> None:
        self.answer, self.delay = answer, delay
        self.asked: list[ElicitRequest] = []
        self.threads: list[str] = []

    def __call__(self, request: ElicitRequest) -> ElicitAnswer:
        self.asked.append(request)
        self.threads.append(threading.current_thread().name)
        time.sleep(self.delay)
        return self.answer


def raw(result) -> dict:
    """The ElicitResult the everything server echoes back."""
    return json.loads(result.text.split("Raw result:", 1)[1])


def test_declaring_elicitation_lists_the_tools_that_ask(hub):
    names = {t.name for t in hub.tools()}
    assert {"trigger-elicitation-request", "trigger-url-elicitation"} <= names
    # Roots are not declared without a `roots` config, nor sampling without a sampler.
    assert "get-roots-list" not in names and "trigger-sampling-request" not in names


def test_a_form_accepted_reaches_the_server(hub):
    asker = Recording(ElicitAnswer("accept", {"name": "Ada", "integer": 7, "check": True}))
    result = hub.call("everything", "trigger-elicitation-request", {},
                      hooks=CallHooks(asker=asker))
    assert not result.is_error
    assert raw(result) == {"action": "accept",
                           "content": {"name": "Ada", "integer": 7, "check": True}}
    (request,) = asker.asked
    assert request.mode == "form" and request.server == "everything"
    assert request.tool == "trigger-elicitation-request"
    kinds = {f.name: f.kind for f in request.fields}
    assert kinds["name"] == "string" and kinds["integer"] == "integer"
    assert kinds["titledSingleSelectEnum"] == "enum"
    assert kinds["titledMultipleSelectEnum"] == "multi"
    assert [f.name for f in request.fields if f.required] == ["name"]
    assert asker.threads[0] != "mcp-hub"  # never on the hub's loop: it may block


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_decline_and_cancel_reach_the_server(hub, action):
    result = hub.call("everything", "trigger-elicitation-request", {},
                      hooks=CallHooks(asker=Recording(ElicitAnswer(action))))
    assert raw(result) == {"action": action}


def test_without_hooks_the_hub_declines(hub):
    result = hub.call("everything", "trigger-elicitation-request", {})
    assert raw(result) == {"action": "decline"}


def test_defaults_answerer_accepts_the_schema_defaults(hub):
    result = hub.call("everything", "trigger-elicitation-request", {},
                      hooks=CallHooks(asker=AcceptDefaults()))
    content = raw(result)["content"]
    assert content["integer"] == 42 and content["untitledSingleSelectEnum"] == "Monica"
    assert content["titledMultipleSelectEnum"] == ["fish-1"]


def test_url_mode_asks_with_the_host(hub):
    asker = Recording(ElicitAnswer("accept"))
    result = hub.call("everything", "trigger-url-elicitation",
                      {"url": "https://login.example.com/consent?x=1"},
                      hooks=CallHooks(asker=asker))
    assert raw(result)["action"] == "accept" and "content" not in raw(result)
    (request,) = asker.asked
    assert request.mode == "url" and request.host == "login.example.com"
    assert request.url == "https://login.example.com/consent?x=1" and request.elicitation_id


def test_a_link_required_first_is_asked_then_the_call_runs_again(hub):
    # errorPath: the call first fails with -32042 naming a link to open; once the user
    # accepted it, the same call runs again (and then asks its own question).
    asker = Recording(ElicitAnswer("accept"))
    result = hub.call("everything", "trigger-url-elicitation",
                      {"url": "https://example.com/a", "errorPath": True},
                      hooks=CallHooks(asker=asker))
    assert raw(result)["action"] == "accept"
    assert [r.url for r in asker.asked] == ["https://modelcontextprotocol.io",
                                            "https://example.com/a"]


def test_a_link_required_first_and_refused_is_a_clear_error(hub):
    with pytest.raises(LinkRefused, match=r"needs the user to open https://modelcontext"
                                          r"protocol\.io first .*did not \(decline"):
        hub.call("everything", "trigger-url-elicitation",
                 {"url": "https://example.com/b", "errorPath": True})


def test_the_call_timeout_stops_while_a_person_answers(hub):
    # call_timeout is 2 s; the person takes 3.
    asker = Recording(ElicitAnswer("accept", {"name": "slow"}), delay=3.0)
    result = hub.call("everything", "trigger-elicitation-request", {},
                      hooks=CallHooks(asker=asker))
    assert raw(result)["content"] == {"name": "slow"}


def test_progress_reaches_the_caller_and_keeps_the_call_alive(hub):
    seen: list[Progress] = []
    started = time.perf_counter()
    # 4 s in all, news every 0.8 s: longer than the 2 s call_timeout, never silent that long.
    result = hub.call("everything", "trigger-long-running-operation",
                      {"duration": 4, "steps": 5}, hooks=CallHooks(on_progress=seen.append))
    assert not result.is_error and time.perf_counter() - started >= 4
    assert [p.progress for p in seen] == [1, 2, 3, 4, 5]
    assert seen[-1].total == 5 and seen[-1].fraction == 1.0


def test_silence_still_times_out(hub):
    # One step of 4 s: no news for longer than the 2 s call_timeout.
    started = time.perf_counter()
    with pytest.raises(ToolTimeout, match="did not answer within 2 s"):
        hub.call("everything", "trigger-long-running-operation", {"duration": 4, "steps": 1})
    assert time.perf_counter() - started < 3.5
    # The connection is still usable.
    assert hub.call("everything", "echo", {"message": "after"}).value() == "Echo: after"


def test_roots_only_where_the_config_opts_in(mcp_bin, tmp_path):
    npm = mcp_bin / "npm" / "node_modules" / ".bin"
    configured, rooted = tmp_path / "configured", tmp_path / "rooted"
    configured.mkdir()
    rooted.mkdir()
    plain = ServerConfig("plain", command=str(npm / "mcp-server-filesystem"),
                         args=(str(configured),))
    opted = ServerConfig("opted", command=str(npm / "mcp-server-filesystem"),
                         args=(str(configured),), roots=(str(rooted),))
    with Hub([plain, opted, everything(mcp_bin, roots=(str(rooted),))], tmp_path) as hub:
        assert all(s.status == "ready" for s in hub.start())
        assert str(configured) in hub.call("plain", "list_allowed_directories", {}).text
        deadline = time.monotonic() + 10  # the server asks for roots after initializing
        while str(rooted) not in (text := hub.call("opted", "list_allowed_directories",
                                                    {}).text) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert str(rooted) in text and str(configured) not in text
        roots = hub.call("everything", "get-roots-list", {}).text
        assert rooted.as_uri() in roots


def test_clock_counts_silence_and_stands_still_while_paused():
    now = [0.0]
    clock = CallClock(10, clock=lambda: now[0])
    now[0] = 4
    assert clock.remaining() == 6
    clock.touch()
    assert clock.remaining() == 10
    clock.pause()
    now[0] = 100
    assert clock.remaining() is None
    clock.resume()
    assert clock.remaining() == 10


def test_forms_are_checked_and_converted():
    fields = parse_form({"type": "object", "required": ["age"], "properties": {
        "age": {"type": "integer", "minimum": 0},
        "mail": {"type": "string", "format": "email"},
        "pet": {"type": "string", "enum": ["p1", "p2"], "enumNames": ["Cats", "Dogs"]},
        "ok": {"type": "boolean", "default": False}}})
    assert check_answer(fields, {"age": "3", "pet": "Dogs", "ok": "yes", "mail": ""}) == {
        "age": 3, "pet": "p2", "ok": True}
    for values, where in [({}, "age: required"), ({"age": "-1"}, "age: at least 0"),
                          ({"age": "x"}, "whole number"), ({"age": 1, "mail": "nope"}, "email"),
                          ({"age": 1, "pet": "Fish"}, "Cats, Dogs")]:
        with pytest.raises(BadAnswer, match=where):
            check_answer(fields, values)
    with pytest.raises(UnsupportedForm, match="'nested'"):
        parse_form({"type": "object", "properties": {"nested": {"type": "object"}}})
    assert decline(ElicitRequest("s", "m")).action == "decline"


@pytest.fixture(scope="module")
def asks(tmp_path_factory):
    """A Python SDK server whose tools use ``ctx.elicit`` and ``ctx.report_progress``."""
    with Hub([toy_server("asks", "asks.py", call_timeout=5)],
             tmp_path_factory.mktemp("asks-logs")) as hub:
        assert hub.start()[0].status == "ready", hub.state("asks").error
        yield hub


def test_deskmate_introduces_itself_and_declares_elicitation(asks):
    from importlib.metadata import version

    text = asks.call("asks", "whoami", {}).text
    assert text.startswith(f"deskmate {version('deskmate')}: ")
    assert "elicitation" in text and "roots" not in text and "sampling" not in text


def test_an_sdk_servers_typed_question(asks):
    asker = Recording(ElicitAnswer("accept", {"date": "2026-12-24", "people": 4}))
    result = asks.call("asks", "book", {}, hooks=CallHooks(asker=asker))
    assert result.text == "booked 2026-12-24 for 4"
    fields = {f.name: f for f in asker.asked[0].fields}
    assert fields["date"].required and fields["people"].default == 2
    assert (fields["people"].minimum, fields["people"].maximum) == (1, 12)
    assert fields["terrace"].kind == "boolean"
    # Its defaults, as the headless answerer sends them, need the required date.
    assert asks.call("asks", "book", {}, hooks=CallHooks(asker=AcceptDefaults())).is_error
    assert asks.call("asks", "book", {}).text == "not booked (decline)"


def test_progress_messages_reach_the_caller(asks):
    seen: list[Progress] = []
    asks.call("asks", "count", {"steps": 3}, hooks=CallHooks(on_progress=seen.append))
    assert [(p.progress, p.total, p.message) for p in seen] == [
        (1, 3, "step 1 of 3"), (2, 3, "step 2 of 3"), (3, 3, "step 3 of 3")]
    assert seen[0].bar(cells=3) == "▰▱▱ 1/3 step 1 of 3"
