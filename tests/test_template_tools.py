"""Tools for chat templates: passed to a template that reads them, written into the
system message for one that does not (the template would drop them silently)."""

from __future__ import annotations

import jinja2

from deskmate.app.llm.base import ChatMessage
from deskmate.app.llm.template_tools import reads_tools, template_input

PLAIN = ("{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}"
         "<|assistant|>")
# Says "tools" in its text and in a comment, and still never reads the variable.
WORDY = "{# no tools here #}" + PLAIN.replace("<|assistant|>", "tools: none<|assistant|>")
AWARE = ("{% if tools %}<|tools|>{{ tools | tojson }}\n{% endif %}" + PLAIN)
TOOL = {"type": "function", "function": {"name": "s__t", "description": "Do it.",
                                         "parameters": {"type": "object"}}}


def render(template: str, messages: list[ChatMessage], tools=()) -> str:
    chat, schemas = template_input(messages, list(tools), template)
    return jinja2.Environment().from_string(template).render(messages=chat, tools=schemas)


def test_which_templates_read_tools():
    assert reads_tools(AWARE)
    assert not reads_tools(PLAIN) and not reads_tools(WORDY)


def test_a_template_that_reads_tools_gets_them_untouched():
    messages = [ChatMessage("system", "Be brief."), ChatMessage("user", "go")]
    out = render(AWARE, messages, [TOOL])
    assert out.startswith('<|tools|>[{') and '"name": "s__t"' in out and "# Tools" not in out
    assert "<|system|>Be brief.\n" in out


def test_a_plain_template_gets_them_in_the_system_message():
    messages = [ChatMessage("system", "Be brief."), ChatMessage("user", "go")]
    out = render(WORDY, messages, [TOOL])
    assert out.startswith("<|system|>Be brief.\n\n# Tools\n")
    assert '<tools>\n{"name": "s__t", "description": "Do it.", "parameters"' in out
    assert out.count("<|system|>") == 1


def test_without_a_system_message_one_is_added_first():
    out = render(PLAIN, [ChatMessage("user", "go")], [TOOL])
    assert out.startswith("<|system|># Tools\n") and "<|user|>go\n" in out


def test_no_tools_no_section():
    messages = [ChatMessage("system", "Be brief."), ChatMessage("user", "go")]
    assert render(PLAIN, messages) == "<|system|>Be brief.\n<|user|>go\n<|assistant|>"
