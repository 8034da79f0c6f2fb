"""The system prompt: who the agent is, how it acts, a worked example, and which servers
it can use; and the same kind of example as chat turns, which code mode shows after the
prompt instead when ``[agent] example = "turns"``.

Both stay the same for the whole session (so the KV cache keeps them). The prompt lists
servers and tool names only — full signatures are pulled on demand with ``tool_help``.
"""

from __future__ import annotations

import re

from deskmate.app.agent.parse import OUTPUT_PREFIX, TOOLS_FOUND
from deskmate.app.llm.base import ChatMessage, ModelInfo

CODE_PROMPT = """\
You are deskmate, an assistant that solves tasks by writing Python code that calls tools.

How to act:
- To act, reply with a short thought, then exactly one ```python code block. It runs in a
  persistent Python session: variables and imports stay between blocks. Only what you
  print() comes back to you, so print what you need to see, and keep it short.
- When the task is done (or needs no tools), reply with `Final answer: ` followed by the
  answer for the user, and no code block.

In the Python session:
- Each server below is an object; its tools are methods: server.tool_name(arg=value).
  Results are Python values (dict, list, str); a failing call raises ToolError.
- search_tools("what you want to do", k=5) returns matching tools with their signatures.
- tool_help("server", "tool_name") returns a tool's full signature and documentation.
  Read it before calling a tool for the first time.
- read_resource("uri") returns the text of a resource a tool result links to.
- The session is a sandbox: it cannot see the user's files or the network. Reach them
  only through the tools.
- Pass tool arguments by name. After an error, read it and fix the call.
- Answer from what the tools returned, never from a guess. Count, add up and compare in
  code and print the result, rather than working numbers out in your head.

{example}{index}"""

# The worked example's request and answer, in both forms (and the copy check's text).
EXAMPLE_REQUEST = "Will it rain in Oslo tomorrow?"
EXAMPLE_ANSWER = "Final answer: Yes, about 4 mm of rain is forecast in Oslo tomorrow."

TEXT_EXAMPLE = f"""\
Example (a made-up server; use the servers listed below):
User: {EXAMPLE_REQUEST}
Assistant: A forecast tool would know; search_tools gives its name and parameters.
```python
print(search_tools("weather forecast for a city", k=3))
```
User: Output:
['weather.get_forecast(city: str, days: int = 1) — Forecast for a city']
Assistant: get_forecast takes the city and the number of days, by name; printing the result
shows its shape.
```python
forecast = weather.get_forecast(city="Oslo", days=2)
print(forecast)
```
User: Output:
{{'city': 'Oslo', 'days': [{{'rain_mm': 0.0}}, {{'rain_mm': 4.2}}]}}
Assistant: {EXAMPLE_ANSWER}

"""

NO_TOOLS = "No tool servers are connected; plain Python still works."

EAGER_PROMPT = """\
You are deskmate, an assistant that solves tasks by calling the tools provided.
Call tools when you need them; when the task is done, answer the user directly."""


# The same kind of example as chat turns between the system prompt and the conversation
# (``Agent.model_view``; ``[agent] example = "turns"``), in the form the loop itself
# writes: the request, the head start's note, code, its output, the answer. With the text
# example the 0.5B answered 20 of 35 train requests with the example's own answer and
# wrote no code first on any; with turns it wrote code first on 26 of 35 and solved 5/35
# train tasks against 3/35, but the 1.5B solved 6 of the first 14 against 9
# (benchmarks/RESULTS.md, session 14): text stays the default. The note offers three
# tools and the thought picks the one that answers: with one tool the 1.5B called every
# tool of its own note in turn.
CODE_EXAMPLE = (
    ChatMessage("user", EXAMPLE_REQUEST),
    ChatMessage("user", TOOLS_FOUND
                + "weather.get_alerts(region: str) — Active weather warnings for a region\n"
                "weather.get_forecast(city: str, days: int = 1) — Forecast for a city\n"
                "weather.list_stations(country: str) — Weather stations of a country"),
    ChatMessage("assistant", "Tomorrow's rain is in a forecast, so get_forecast is the one "
                "(not the warnings or the stations); I pass the city and the days by name "
                "and print the result to see its shape.\n```python\nforecast = "
                "weather.get_forecast(city=\"Oslo\", days=2)\nprint(forecast)\n```"),
    ChatMessage("user", OUTPUT_PREFIX + "{'city': 'Oslo', 'days': [{'rain_mm': 0.0}, "
                "{'rain_mm': 4.2}]}"),
    ChatMessage("assistant", EXAMPLE_ANSWER),
)


# example = "auto": models below this many parameters get the example as turns. Measured
# (benchmarks/RESULTS.md, session 14): a 0.63B model solved more with turns (5/35 train,
# 4/32 held out, against 3/35 and 1/32), a 1.78B fewer (6/14 against 9/14).
TURNS_BELOW_PARAMETERS = 1_000_000_000


def example_form(setting: str, info: ModelInfo) -> str:
    """"text" or "turns": the ``[agent] example`` setting, with "auto" decided by the
    model's size; a model of unknown size (a server) gets text, the form larger models
    do better with."""
    if setting != "auto":
        return setting
    return "turns" if 0 < info.parameters < TURNS_BELOW_PARAMETERS else "text"


def code_system_prompt(index: str, example_turns: bool = False) -> str:
    """The code-mode system prompt; with ``example_turns`` without the text example (the
    loop shows ``CODE_EXAMPLE`` as turns instead)."""
    return CODE_PROMPT.format(index=index.strip() or NO_TOOLS,
                              example="" if example_turns else TEXT_EXAMPLE)


def copies_example(answer: str) -> bool:
    """Whether a final answer's text is the example's answer, holds it, or is it with a
    word changed ("… forecast in Tokyo tomorrow": the 0.5B puts the request's city in)."""
    example = EXAMPLE_ANSWER.removeprefix("Final answer: ")
    if example in " ".join(answer.split()):
        return True
    ours, theirs = _words(example), _words(answer.removeprefix("Final answer:"))
    shared = len(ours & theirs)
    return bool(theirs) and shared >= 0.8 * len(ours) and shared >= 0.8 * len(theirs)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))
