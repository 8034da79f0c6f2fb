"""Agent mechanics: sandbox round trips, the tool channel's overhead, code vs eager.

    python benchmarks/agent.py [--model NAME|PATH] [--repeats 50]

- cell_roundtrip_ms_p50: a trivial cell in a warm sandbox (goal ≤ 30).
- tool_proxy_overhead_ms_p50: a cell making one MCP echo call, minus a trivial cell, minus
  the bare hub call to the same echo tool (goal ≤ 5): what the sandbox → host channel,
  the schema check and the permission policy add.
- fan_out: a scripted 10-item task (echo each of 10 items, report them) in `code` mode
  (one cell loops over the items) and `eager` mode (one native tool call per model
  reply); model calls and prompt tokens per mode. Tokens are counted with the model's
  tokenizer (`--model`, default tiny) over what each mode sends: the rendered transcript,
  and for eager the tool schemas in the Hermes/Qwen `<tools>` layout (SmolLM2's own
  template ignores tools).
The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from deskmate.app.agent import events as ev  # noqa: E402
from deskmate.app.agent.actions_eager import tool_schemas  # noqa: E402
from deskmate.app.agent.factory import build_agent  # noqa: E402
from deskmate.app.agent.loop import AgentLimits  # noqa: E402
from deskmate.app.agent.modes import Mode  # noqa: E402
from deskmate.app.agent.scripted import ScriptedModel  # noqa: E402
from deskmate.app.llm.base import ChatMessage, ModelError  # noqa: E402
from deskmate.tools.hub import Hub  # noqa: E402
from deskmate.tools.policy import Policy  # noqa: E402

ITEMS = [f"item-{i}" for i in range(10)]


def toy_config():
    from conftest import toy_server

    return toy_server(call_timeout=10)


def p50(values: list[float]) -> float:
    return statistics.median(values)


def timings(hub: Hub, repeats: int) -> dict:
    from deskmate.tools.sandbox import Sandbox

    model = ScriptedModel([])
    runtime = build_agent(model, hub=hub, policy=Policy(yes_all=True))
    sandbox: Sandbox = runtime.sandbox
    trivial, with_call, bare = [], [], []
    sandbox.execute("x = 1")
    sandbox.execute("toy.echo(text='warm')")
    for i in range(repeats):
        start = time.perf_counter()
        sandbox.execute("x = 1")
        trivial.append((time.perf_counter() - start) * 1000)
        runtime.agent.bridge.new_turn()  # no per-turn call limit or repeat guard here
        start = time.perf_counter()
        result = sandbox.execute(f"toy.echo(text='hi {i}')")
        assert result.status == "ok", result.error
        with_call.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        hub.call("toy", "echo", {"text": "hi"})
        bare.append((time.perf_counter() - start) * 1000)
    runtime.close()
    return {
        "cell_roundtrip_ms_p50": round(p50(trivial), 3),
        "tool_call_cell_ms_p50": round(p50(with_call), 3),
        "bare_mcp_call_ms_p50": round(p50(bare), 3),
        "tool_proxy_overhead_ms_p50": round(p50(with_call) - p50(trivial) - p50(bare), 3),
        "isolation": sandbox.isolation.level,
    }


def code_script() -> list[str]:
    code = ("results = [toy.echo(text=item) for item in " + repr(ITEMS) + "]\n"
            "print(len(results), results[0], results[-1])")
    return [f"I'll echo every item in one loop.\n```python\n{code}\n```",
            "Final answer: echoed all 10 items, item-0 … item-9."]


def eager_script() -> list[str]:
    replies = [f'<tool_call>\n{{"name": "toy__echo", "arguments": {{"text": "{item}"}}}}\n'
               "</tool_call>" for item in ITEMS]
    return [*replies, "Echoed all 10 items, item-0 … item-9."]


def hermes_tools(tools: list[dict]) -> str:
    lines = "\n".join(json.dumps(t) for t in tools)
    return f"# Tools\n\n<tools>\n{lines}\n</tools>\n"


def fan_out(hub: Hub, mode: Mode, count_tokens) -> dict:
    model = ScriptedModel(code_script() if mode == "code" else eager_script())
    runtime = build_agent(model, hub=hub, mode=mode, policy=Policy(yes_all=True),
                          limits=AgentLimits(max_steps=15))
    events = list(runtime.agent.run("Echo each of the ten items item-0 … item-9 with the toy "
                                    "server and tell me when done."))
    tools_text = hermes_tools(tool_schemas(runtime.catalog)) if mode == "eager" else ""
    runtime.close()
    prompt_tokens = sum(count_tokens(tools_text + render(call)) for call in model.calls)
    done = events[-1]
    assert isinstance(done, ev.TurnFinished)
    return {"status": done.status, "model_calls": done.model_calls,
            "tool_calls": done.tool_calls, "prompt_tokens": prompt_tokens}


def render(messages: list[ChatMessage]) -> str:
    return "".join(f"<|im_start|>{m.role}\n{m.content}<|im_end|>\n" for m in messages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="tiny", help="tokenizer for token counts")
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args()

    from deskmate.app.llm.llamacpp import LlamaCppModel
    from deskmate.app.llm.registry import resolve_model

    try:
        tokenizer = LlamaCppModel(resolve_model(args.model), context=512)
    except ModelError as exc:  # not downloaded, not a GGUF, …: say so, no traceback
        parser.exit(1, f"{parser.prog}: {exc}\n")
    count = lambda text: len(tokenizer.tokenize(text))  # noqa: E731
    with Hub([toy_config()], Path(tempfile.mkdtemp())) as hub:
        hub.start()
        result = timings(hub, args.repeats)
        code = fan_out(hub, "code", count)
        eager = fan_out(hub, "eager", count)
    tokenizer.close()
    result["fan_out"] = {"code": code, "eager": eager,
                         "prompt_tokens_ratio_eager_over_code":
                             round(eager["prompt_tokens"] / code["prompt_tokens"], 2)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
