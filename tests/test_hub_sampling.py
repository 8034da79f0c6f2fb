"""Servers that ask deskmate's model to write (MCP sampling), through the real Hub, a
real SDK server (tests/servers/samples.py) and the real tiny llama.cpp model."""

from __future__ import annotations

import threading
import time

import pytest
from conftest import toy_server

from deskmate.app.llm.sampling import ModelGenerate
from deskmate.tools.hub import Hub
from deskmate.tools.hub.sampling import (
    Sample,
    SampleDecision,
    Sampler,
    SampleRequest,
    decline,
    describe,
    stop_reason,
)

pytestmark = pytest.mark.slow


class Scripted:
    """An approver that decides ``choice`` after ``delay`` seconds, keeping what it was
    asked and on which thread."""

    def __init__(self, choice: str, delay: float = 0.0) -> None:
        self.choice, self.delay = choice, delay
        self.asked: list[SampleRequest] = []
        self.threads: list[str] = []

    def __call__(self, request: SampleRequest) -> SampleDecision:
        self.asked.append(request)
        self.threads.append(threading.current_thread().name)
        time.sleep(self.delay)
        return SampleDecision(self.choice)  # type: ignore[arg-type]


class Counting:
    """A ``Generate`` that counts its calls and passes them to the real model."""

    def __init__(self, model) -> None:
        self.inner = ModelGenerate(lambda: model)
        self.max_tokens: list[int] = []

    def __call__(self, request: SampleRequest, max_tokens: int) -> Sample:
        self.max_tokens.append(max_tokens)
        return self.inner(request, max_tokens)


def samples_hub(tmp_path, sampler: Sampler | None, call_timeout: float = 60) -> Hub:
    hub = Hub([toy_server("samples", "samples.py", call_timeout=call_timeout)], tmp_path,
              sampler=sampler)
    state = hub.start()[0]
    assert state.status == "ready", state.error
    return hub


def parsed(text: str) -> dict[str, str]:
    """``model=…|stop=…|text=…`` as the test server returns it."""
    return dict(part.split("=", 1) for part in text.split("|", 2))


def test_without_a_sampler_sampling_is_not_declared(tmp_path):
    with samples_hub(tmp_path, None) as hub:
        assert hub.call("samples", "can_sample", {}).text == "no"
        assert "Sampling not supported" in hub.call("samples", "haiku", {}).text


def test_approved_the_local_model_answers(tmp_path, tiny_model):
    approver, generate = Scripted("once"), Counting(tiny_model)
    with samples_hub(tmp_path, Sampler(approver, generate, max_tokens=8)) as hub:
        assert hub.call("samples", "can_sample", {}).text == "yes"
        result = hub.call("samples", "haiku", {"topic": "rain", "max_tokens": 5000})
        answer = parsed(result.text)
        assert answer["model"] == tiny_model.info.name, result.text
        assert answer["text"].strip() and not answer["text"].startswith("error")
        # The request's 5000 tokens were capped at the sampler's 8: the model ran out.
        assert generate.max_tokens == [8] and answer["stop"] == "maxTokens"
        (request,) = approver.asked
        assert (request.server, request.tool) == ("samples", "haiku")
        assert request.system_prompt == "You are a poet." and request.temperature == 0.0
        assert [(m.role, m.text) for m in request.messages] == [("user", "A haiku about rain.")]
        assert request.max_tokens == 5000
        assert approver.threads[0] != "mcp-hub"  # a worker thread, not the hub's loop
        # "once" asks again next time.
        hub.call("samples", "haiku", {"max_tokens": 4})
        assert len(approver.asked) == 2 and generate.max_tokens == [8, 4]


def test_allowed_for_the_server_it_is_not_asked_again(tmp_path, tiny_model):
    approver = Scripted("server")
    sampler = Sampler(approver, ModelGenerate(lambda: tiny_model))
    with samples_hub(tmp_path, sampler) as hub:
        for _ in range(2):
            text = hub.call("samples", "haiku", {"max_tokens": 4}).text
            assert parsed(text)["model"] == tiny_model.info.name, text
        assert len(approver.asked) == 1 and sampler.allowed == {"samples"}


def test_headless_declines_and_the_model_is_not_used(tmp_path, tiny_model):
    generate = Counting(tiny_model)
    with samples_hub(tmp_path, Sampler(decline, generate)) as hub:
        assert hub.call("samples", "can_sample", {}).text == "yes"
        text = hub.call("samples", "haiku", {}).text
        assert text.startswith("error: declined: no one can be asked here"), text
        assert generate.max_tokens == []


def test_a_person_declining_is_an_error_the_server_reads(tmp_path, tiny_model):
    generate = Counting(tiny_model)
    with samples_hub(tmp_path, Sampler(Scripted("decline"), generate)) as hub:
        text = hub.call("samples", "haiku", {}).text
        assert text.startswith("error: declined: the user declined"), text
        assert generate.max_tokens == []


def test_images_are_refused_before_anyone_is_asked(tmp_path, tiny_model):
    approver = Scripted("once")
    with samples_hub(tmp_path, Sampler(approver, ModelGenerate(lambda: tiny_model))) as hub:
        text = hub.call("samples", "picture", {}).text
        assert text.startswith("error:") and "images and audio are not supported" in text
        assert approver.asked == []


def test_the_call_timeout_stops_while_a_person_decides(tmp_path, tiny_model):
    # 3 s deciding, under a 1.5 s call timeout: the clock stood still meanwhile.
    sampler = Sampler(Scripted("once", delay=3.0), ModelGenerate(lambda: tiny_model))
    with samples_hub(tmp_path, sampler, call_timeout=1.5) as hub:
        result = hub.call("samples", "haiku", {"max_tokens": 4})
        assert not result.is_error and parsed(result.text)["model"] == tiny_model.info.name


def test_no_model_loaded_is_a_clear_error(tmp_path):
    with samples_hub(tmp_path, Sampler(Scripted("once"), ModelGenerate(lambda: None))) as hub:
        text = hub.call("samples", "haiku", {}).text
        assert "the local model could not answer: no model is loaded yet" in text


def test_what_the_person_reads_and_stop_reasons():
    request = SampleRequest("srv", (), 4000, system_prompt="Be brief.", tool="srv__x")
    lines = describe(request, cap=512)
    assert lines[0] == "srv asks during srv__x to use the local model (up to 512 tokens, " \
                       "4000 asked)."
    assert lines[1] == "system: Be brief."
    assert (stop_reason("length"), stop_reason("stop")) == ("maxTokens", "endTurn")
