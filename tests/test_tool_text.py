"""A tool's text in a cell iterates by line, a listing by name, and opens like a file:
in the sandbox's worker, and through the code-mode loop with the real MCP filesystem
server."""

from __future__ import annotations

import pytest

from deskmate.app.agent import events as ev
from deskmate.app.agent.factory import build_agent
from deskmate.app.agent.loop import AgentLimits
from deskmate.app.agent.scripted import ScriptedModel
from deskmate.tools.policy import Policy
from deskmate.tools.sandbox import Sandbox

TEXTS = {"read_text_file": "ana@x.org\nben@x.org\nana@x.org\n",
         "list_directory": "[FILE] april.csv\n[DIR] old\n[FILE] march.csv",
         "one_line": "Successfully wrote to /w/a.txt"}


def answer(kind: str, payload: dict):
    if payload["tool"] == "echo":
        return payload["kwargs"]["text"]
    return TEXTS[payload["tool"]]


@pytest.fixture
def box():
    namespace = {"servers": {"files": [*TEXTS, "echo"]}}
    with Sandbox(answer, namespace=namespace) as sandbox:
        yield sandbox


def test_a_tools_text_iterates_by_line_and_stays_a_str_otherwise(box):
    out = box.execute("text = files.read_text_file(path='/w/s.txt')\n"
                      "print([line for line in text])\n"
                      "print(list(dict.fromkeys(text)), len(set(text)))\n"
                      "print(len(text), text[0], text.count('ana'), 'ben@x.org' in text)\n"
                      "print(isinstance(text, str), text.splitlines()[-1], repr(text))").stdout
    assert out.splitlines() == [
        "['ana@x.org', 'ben@x.org', 'ana@x.org']",
        "['ana@x.org', 'ben@x.org'] 2",
        "30 a 2 True",
        "True ana@x.org 'ana@x.org\\nben@x.org\\nana@x.org\\n'"]
    # A text the code derives keeps it; split gives a plain list, as always.
    derived = box.execute("print(list(text.strip().upper())[1], text.split('\\n')[:1])").stdout
    assert derived == "BEN@X.ORG ['ana@x.org']\n"


def test_a_listing_iterates_by_name_and_a_text_opens_like_a_file(box):
    out = box.execute("names = files.list_directory(path='/w')\n"
                      "print([n for n in names if n.endswith('.csv')], sorted(names)[0])\n"
                      "with files.read_text_file(path='/w/s.txt') as f:\n"
                      "    print(f.readlines()[0] == 'ana@x.org\\n', f.read()[:3])\n"
                      "print([w for w in files.one_line()])").stdout
    assert out.splitlines() == ["['april.csv', 'march.csv'] april.csv", "True ana",
                                "['Successfully wrote to /w/a.txt']"]
    # The text goes back to a tool as the text it is.
    assert box.execute("print(repr(files.echo(text=names)))").stdout == (
        "'[FILE] april.csv\\n[DIR] old\\n[FILE] march.csv'\n")


@pytest.fixture(scope="module")
def hub(file_hub):
    return file_hub


def test_the_loops_small_models_write_work_on_the_real_file_server(hub):
    hub, workdir = hub
    (workdir / "expenses").mkdir()
    (workdir / "expenses" / "march.csv").write_text("item,amount\nrent,900\nfood,250.5\n")
    (workdir / "expenses" / "april.csv").write_text("item,amount\nrent,900\nfood,199\n")
    (workdir / "subs.txt").write_text("ana@x.org\nben@x.org\nana@x.org\ncem@x.org\n")
    # The code as a small model writes it: over the listing's text, a text in a with.
    cell = (f"totals = {{}}\n"
            f"for name in filesystem.list_directory(path='{workdir}/expenses'):\n"
            f"    with filesystem.read_text_file(path=f'{workdir}/expenses/{{name}}') as f:\n"
            "        rows = [line.split(',') for line in f][1:]\n"
            "    totals[name[:-4]] = sum(float(amount) for _, amount in rows)\n"
            f"subs = filesystem.read_text_file(path='{workdir}/subs.txt')\n"
            "kept = list(dict.fromkeys(subs))\n"
            f"filesystem.write_file(path='{workdir}/subs.txt', content='\\n'.join(kept) + '\\n')\n"
            "print(sorted(totals.items()), len(subs.splitlines()) - len(kept))")
    model = ScriptedModel([f"```python\n{cell}\n```", "Final answer: done"])
    runtime = build_agent(model, hub=hub, policy=Policy(yes_all=True),
                          limits=AgentLimits(first_look=False))
    try:
        events = list(runtime.agent.run(f"Total each month in {workdir}/expenses and drop "
                                        f"the repeated lines of {workdir}/subs.txt."))
    finally:
        runtime.sandbox.close()
    output = next(e.content for e in events if isinstance(e, ev.Observation))
    assert "[('april', 1099.0), ('march', 1150.5)] 1" in output, output
    assert (workdir / "subs.txt").read_text() == "ana@x.org\nben@x.org\ncem@x.org\n"
