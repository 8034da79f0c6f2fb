"""The chat messages a Jinja chat template renders, with the tools it may not know.

Eager mode passes the tools' JSON schemas to the chat template, as OpenAI-style
servers do. A template written for tool calling (Qwen2.5, Llama 3.1, Hermes) writes
them into the prompt; a template that never reads ``tools`` (SmolLM2's, and any plain
ChatML one) drops them without a word, so the model is asked to call tools it was never
shown. For such a template the schemas go into the system message here, in the Hermes
format that ``actions_eager`` parses back (``<tool_call>`` JSON), as the calls already
written into earlier assistant messages are (``ChatMessage.for_template``).

Both renderers use this: llama.cpp's (``LlamaCppModel.render``) and the finetune
policy's tokenizer (``finetune.policy``), so a training rollout sees what the served
model sees.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deskmate.app.llm.base import ChatMessage

TOOLS_SECTION = """\
# Tools

You can call these functions. Their signatures, one JSON object a line:
<tools>
{schemas}
</tools>

To call a function, reply with a JSON object of its name and arguments inside \
<tool_call></tool_call> tags:
<tool_call>
{{"name": "<function name>", "arguments": {{"<parameter>": "<value>"}}}}
</tool_call>"""


@lru_cache(maxsize=8)
def reads_tools(template: str) -> bool:
    """Whether the template renders the ``tools`` variable (parsed, not searched: a
    template may say "tools" in its text and still ignore the variable)."""
    import jinja2
    import jinja2.meta

    try:
        parsed = jinja2.Environment().parse(template)
    except jinja2.TemplateSyntaxError:
        return "tools" in template  # the renderer will report the template itself
    return "tools" in jinja2.meta.find_undeclared_variables(parsed)


def tools_section(tools: Sequence[dict[str, Any]]) -> str:
    schemas = "\n".join(json.dumps(tool.get("function", tool), ensure_ascii=False)
                        for tool in tools)
    return TOOLS_SECTION.format(schemas=schemas)


def template_input(messages: Sequence[ChatMessage], tools: Sequence[dict[str, Any]],
                   template: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """The message dicts and the ``tools`` argument to render ``messages`` with."""
    chat = [m.for_template(template) for m in messages]
    if not tools:
        return chat, None
    if reads_tools(template):
        return chat, list(tools)
    section = tools_section(tools)
    if chat and chat[0]["role"] == "system":
        chat[0] = {**chat[0], "content": f"{chat[0]['content']}\n\n{section}".lstrip()}
    else:
        chat.insert(0, {"role": "system", "content": section})
    return chat, None
