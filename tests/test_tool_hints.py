"""What an error or an empty result adds, through the code-mode loop with real servers:
the time server refusing 'New York', the memory server finding nothing for a sentence."""

from __future__ import annotations

import pytest

from deskmate.app.agent import events as ev
from deskmate.app.agent.factory import build_agent
from deskmate.app.agent.scripted import ScriptedModel
from deskmate.tools.hub import Hub, ServerConfig
from deskmate.tools.policy import Policy

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def hub(tmp_path_factory, mcp_bin):
    workdir = tmp_path_factory.mktemp("hints")
    npm = mcp_bin / "npm" / "node_modules" / ".bin"
    servers = [ServerConfig("time", command=str(mcp_bin / "py" / "bin" / "mcp-server-time")),
               ServerConfig("memory", command=str(npm / "mcp-server-memory"),
                            env={"MEMORY_FILE_PATH": str(workdir / "memory.json")})]
    with Hub(servers, workdir) as hub:
        assert all(s.status == "ready" for s in hub.start())
        yield hub


def observations(hub, *cells: str) -> list[str]:
    replies = [f"Let me check.\n```python\n{cell}\n```" for cell in cells] + ["Final answer: -"]
    runtime = build_agent(ScriptedModel(replies), hub=hub, policy=Policy(yes_all=True))
    try:
        events = list(runtime.agent.run("What time is it in Tokyo when it is 09:30 in "
                                        "New York, and where does Marta live?"))
    finally:
        runtime.sandbox.close()
    return [e.content for e in events if isinstance(e, ev.Observation)]


def test_a_timezone_written_as_a_city_gets_the_call_with_the_examples_form(hub):
    seen = observations(hub, 'print(time.convert_time(source_timezone="New York", '
                               'time="09:30", target_timezone="Tokyo"))')[0]
    assert "Invalid timezone" in seen
    assert seen.rstrip().endswith(
        "likely meant: time.convert_time(source_timezone='America/New_York', time='09:30', "
        "target_timezone='Asia/Tokyo')")


def test_a_search_with_a_sentence_that_found_nothing_is_told_to_try_a_word(hub):
    create = ('memory.create_entities(entities=[{"name": "Marta", "entityType": "person", '
              '"observations": ["lives in Porto"]}])')
    first, second = observations(
        hub, f'{create}\nprint(memory.search_nodes(query="Marta lives in a city"))',
        'print(memory.search_nodes(query="Marta"))')
    assert first.endswith(
        "Note: memory.search_nodes(query='Marta lives in a city') found nothing. Searches "
        "often match single words or names, not sentences: before answering that nothing "
        "exists, search again with one name or word from the request, or read everything "
        "with memory.read_graph().")
    assert "Porto" in second and "Note:" not in second
