"""The Textual app under run_test(): first run, a streamed answer, cancel, model switch."""

from __future__ import annotations

import time

import pytest

from app.config import Config, ModelConfig
from app.llm import ChatMessage, Delta, Finished, ModelInfo, NoModelConfigured, Usage
from app.llm.llamacpp import LlamaCppModel
from app.ui.app import DeskmateApp
from app.ui.chat import ChatView
from app.ui.messages import ReplyDelta, ReplyDone


class SlowScriptedModel:
    """Streams a fixed reply slowly, so a test can cancel it midway."""

    info = ModelInfo(name="scripted", backend="test", context_size=1024)

    def __init__(self) -> None:
        self.calls: list[list[ChatMessage]] = []

    def stream(self, messages, params=None, cancel=None):
        self.calls.append(list(messages))
        sent = []
        for word in ["one ", "two ", "three ", "four ", "five "] * 20:
            if cancel is not None and cancel.is_set():
                yield Finished("".join(sent), "cancelled", Usage(completion_tokens=len(sent)))
                return
            sent.append(word)
            yield Delta(word)
            time.sleep(0.05)
        yield Finished("".join(sent), "stop", Usage(completion_tokens=len(sent)))

    def close(self) -> None:
        pass


async def ask(app, pilot, text: str) -> None:
    app.query_one("#prompt").value = text
    await pilot.press("enter")


async def wait_idle(app, pilot, timeout: float = 60) -> None:
    view = app.query_one(ChatView)
    deadline = time.monotonic() + timeout
    while (view.busy or view.model is None) and time.monotonic() < deadline:
        await pilot.pause(0.05)
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_first_run_without_a_model_explains_what_to_do():
    app = DeskmateApp(Config())
    async with app.run_test() as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        notice = app.query_one(".notice")
        text = notice.source
        assert "Welcome to deskmate" in text and "models pull qwen3-4b" in text
        assert "/model tiny" in text


@pytest.mark.slow
async def test_streams_an_answer_from_the_real_model(tiny_model_path):
    config = Config(model=ModelConfig(name=str(tiny_model_path), temperature=0.0,
                                      max_tokens=20, context=1024))
    posted = []
    app = DeskmateApp(config)
    async with app.run_test(message_hook=posted.append) as pilot:
        await wait_idle(app, pilot)
        assert isinstance(app.model, LlamaCppModel)
        await ask(app, pilot, "What is the capital of France?")
        await wait_idle(app, pilot)
        deltas = [m.text for m in posted if isinstance(m, ReplyDelta)]
        done = [m for m in posted if isinstance(m, ReplyDone)]
        assert len(deltas) > 1 and len(done) == 1
        assert "".join(deltas) == done[0].result.text
        reply = app.query_one(".assistant")
        assert reply.source == done[0].result.text
        view = app.query_one(ChatView)
        assert [m.role for m in view.history] == ["user", "assistant"]
        assert "generated" in str(app.query_one("#usage").render())
        # A follow-up reuses the KV cache of the first exchange.
        await ask(app, pilot, "And of Italy?")
        await wait_idle(app, pilot)
        second = [m for m in posted if isinstance(m, ReplyDone)][-1].result.usage
        assert second.reused_tokens >= done[0].result.usage.prompt_tokens


async def test_escape_cancels_the_reply():
    scripted = SlowScriptedModel()
    app = DeskmateApp(Config(), model_factory=lambda config, spec: scripted)
    posted = []
    async with app.run_test(message_hook=posted.append) as pilot:
        await wait_idle(app, pilot)
        await ask(app, pilot, "count")
        await pilot.pause(0.3)
        await pilot.press("escape")
        await wait_idle(app, pilot)
        done = [m for m in posted if isinstance(m, ReplyDone)]
        assert done[-1].result.finish_reason == "cancelled"
        assert done[-1].result.usage.completion_tokens < 100
        assert app.query_one(".assistant").has_class("cancelled")
        assert "cancelled" in str(app.query_one("#usage").render())


async def test_model_command_switches_model():
    scripted = SlowScriptedModel()
    asked = []

    def factory(config, spec):
        asked.append(spec)
        if spec is None:
            raise NoModelConfigured()
        return scripted

    app = DeskmateApp(Config(), model_factory=factory)
    async with app.run_test() as pilot:
        await app.workers.wait_for_complete()
        await ask(app, pilot, "/model tiny")
        await wait_idle(app, pilot)
        assert asked == [None, "tiny"]
        assert app.model is scripted and app.sub_title == "scripted"


async def test_a_failing_model_is_shown_not_fatal():
    def factory(config, spec):
        from app.llm import ModelError

        raise ModelError("/tmp/x.gguf is not a GGUF model file")

    app = DeskmateApp(Config(), model_factory=factory)
    async with app.run_test() as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "not a GGUF model file" in app.query_one(".notice").source
        assert app.is_running


