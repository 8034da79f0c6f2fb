"""Training rollouts: the tool gate (a destructive tool is never called live; read-only
live; replay of a recorded call; refusal otherwise), through the real bridge and agent,
and the samples a rollout yields (the model's own tokens only; tool output masked)."""

from __future__ import annotations

import pytest

from deskmate.app.agent.bridge import BridgeError, CallContext, ToolBridge
from deskmate.app.agent.loop import AgentLimits
from deskmate.app.agent.scripted import ScriptedModel
from deskmate.app.store import Recorder, open_db
from deskmate.finetune.rollout import RolloutSettings, rollout_seed, run_rollout
from deskmate.finetune.toolgate import (
    Recorded,
    ToolGate,
    TrainingPolicy,
    TrainingRefusal,
    call_key,
    recorded_results,
)
from deskmate.tools.catalog import Catalog
from deskmate.tools.hub.results import ContentItem, ToolResult
from deskmate.tools.spec import ToolSpec

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}
SPECS = [
    ToolSpec("fs", "read_file", "Read a file", SCHEMA, {"readOnlyHint": True}),
    ToolSpec("fs", "write_file", "Write a file", SCHEMA, {"destructiveHint": False}),
    ToolSpec("fs", "delete_file", "Delete a file", SCHEMA, {"destructiveHint": True}),
    # read-only hint false and no destructive hint: MCP says assume destructive
    ToolSpec("fs", "touch", "Touch a file", SCHEMA, {}),
]


class FakeHub:
    """Answers every call live — and remembers it, which must not happen for writes."""

    def __init__(self) -> None:
        self.live: list[tuple[str, str, dict]] = []

    def tools(self):
        return SPECS

    def states(self):
        return []

    def call(self, server, tool, arguments=None, *, cancel=None, hooks=None):
        self.live.append((server, tool, arguments))
        return ToolResult(server, tool, (ContentItem("text", text=f"LIVE {tool} done"),))


def test_gate_rules():
    hub = FakeHub()
    recorded = {call_key("fs", "delete_file", {"path": "a"}): Recorded("deleted a", None, False),
                call_key("fs", "write_file", {"path": "b"}): Recorded("", {"ok": 1}, False)}
    gate = ToolGate(SPECS, hub.call, recorded)
    assert gate("fs", "read_file", {"path": "x"}).text == "LIVE read_file done"
    assert hub.live == [("fs", "read_file", {"path": "x"})]
    replay = gate("fs", "delete_file", {"path": "a"})
    assert replay.text == "deleted a" and not replay.is_error
    assert gate("fs", "write_file", {"path": "b"}).value() == {"ok": 1}
    for tool, args in (("delete_file", {"path": "other"}), ("write_file", {"path": "c"}),
                       ("touch", {"path": "x"}), ("unknown", {})):
        with pytest.raises(TrainingRefusal, match="it was not run"):
            gate("fs", tool, args)
    assert hub.live == [("fs", "read_file", {"path": "x"})]  # nothing else went live
    assert gate.counts == {"live": 1, "replayed": 2, "refused": 4}


def test_a_throwaway_workspace_gate_runs_every_call_live():
    hub = FakeHub()
    default, throwaway = ToolGate(SPECS, hub.call), ToolGate(SPECS, hub.call, live_all=True)
    with pytest.raises(TrainingRefusal, match="it was not run"):
        default("fs", "write_file", {"path": "c"})
    assert hub.live == []
    for tool in ("write_file", "delete_file", "touch"):
        assert throwaway("fs", tool, {"path": "c"}).text == f"LIVE {tool} done"
    assert [t for _, t, _ in hub.live] == ["write_file", "delete_file", "touch"]
    assert throwaway.counts == {"live": 3}


def test_destructive_never_live_even_when_the_user_trusts_the_server():
    hub = FakeHub()
    gate = ToolGate(SPECS, hub.call)
    policy = TrainingPolicy(trusted_servers={"fs"}, yes_all=True)
    events = []
    bridge = ToolBridge(Catalog.from_specs(SPECS), gate, policy)
    bridge.new_turn(CallContext(emit=events.append))
    with pytest.raises(BridgeError, match=r"destructive.*not run"):
        bridge.call_json("fs", "delete_file", {"path": "important.txt"})
    with pytest.raises(BridgeError, match="not read-only"):
        bridge.call_json("fs", "write_file", {"path": "x"})
    assert bridge.call_json("fs", "read_file", {"path": "x"}) == "LIVE read_file done"
    assert [t for _, t, _ in hub.live] == ["read_file"]
    decided = [e for e in events if type(e).__name__ == "ToolApprovalDecided"]
    assert {e.decided_by for e in decided} == {"training"}
    assert not [e for e in events if type(e).__name__ == "ToolApprovalNeeded"]


def test_recorded_results_come_from_real_sessions_not_denials(home):
    db = open_db()
    rec = Recorder.new(db, model="m")
    from deskmate.app.agent import events as ev

    rec.record(ev.TurnStarted(turn=1, user_message="clean up"))
    for call_id, tool, args, approval, result in (
            ("c1", "delete_file", {"path": "a"}, "allow_once", "deleted a"),
            ("c2", "delete_file", {"path": "b"}, "deny", "denied: no")):
        rec.record(ev.ToolCallStarted(call_id=call_id, step=1, server="fs", tool=tool,
                                      arguments=args))
        rec.record(ev.ToolApprovalDecided(call_id=call_id, decision=approval,
                                          decided_by="user"))
        rec.record(ev.ToolCallFinished(call_id=call_id, server="fs", tool=tool, result=result,
                                       is_error=approval == "deny", duration_s=0.1))
    got = recorded_results(db)
    assert got == {call_key("fs", "delete_file", {"path": "a"}): Recorded("deleted a", None,
                                                                         False)}


class RecordingModel(ScriptedModel):
    """A ScriptedModel that records calls the way PolicyChatModel does: the prompt as
    ids (one per character of the rendered messages) and the reply's ids."""

    def __init__(self, replies):
        super().__init__(replies)
        self.records = []
        self.seeds = []

    def stream(self, messages, params=None, cancel=None):
        from types import SimpleNamespace

        self.seeds.append(params.seed)
        text = ""
        for event in super().stream(messages, params, cancel):
            text = getattr(event, "text", text) if type(event).__name__ == "Finished" else text
            yield event
        prompt = "".join(f"<{m.role}>{m.content}" for m in messages) + "<assistant>"
        self.records.append(SimpleNamespace(prompt_ids=tuple(map(ord, prompt)),
                                            completion_ids=tuple(map(ord, text))))

    def take_records(self):
        out, self.records = self.records, []
        return out


def _decode(ids):
    return "".join(map(chr, ids))


def test_eager_rollout_samples_are_the_models_own_tokens():
    call = '<tool_call>{"name": "fs__read_file", "arguments": {"path": "notes.md"}}</tool_call>'
    delete = '<tool_call>{"name": "fs__delete_file", "arguments": {"path": "notes.md"}}</tool_call>'
    model = RecordingModel([call, delete, "The notes say hello."])
    hub = FakeHub()
    gate = ToolGate(SPECS, hub.call)
    settings = RolloutSettings(mode="eager", limits=AgentLimits(max_steps=4))
    rollout = run_rollout(model, "t1", "What do my notes say?", gate, hub=hub,
                          settings=settings, seed=100)
    assert rollout.answer == "The notes say hello." and rollout.status == "answered"
    assert [_decode(s.completion_ids) for s in rollout.samples] == [
        call, delete, "The notes say hello."]
    # tool output is in the next prompt, never in a completion
    assert "LIVE read_file done" in _decode(rollout.samples[1].prompt_ids)
    assert "it was not run" in _decode(rollout.samples[2].prompt_ids)
    assert all("LIVE" not in _decode(s.completion_ids) for s in rollout.samples)
    assert [t for _, t, _ in hub.live] == ["read_file"]
    assert model.seeds == [100, 101, 102]
    assert rollout.transcript[-1].content == "The notes say hello."


def test_code_rollout_through_the_real_sandbox():
    code = "```python\nprint(fs.read_file(path='a.txt'))\nfs.delete_file(path='a.txt')\n```"
    # The cell failed (the delete was refused), so the first answer after it is checked
    # once, as in the app; the second is checked because the delete asked for never ran;
    # the third is taken.
    model = RecordingModel([code] + ["Final answer: it said LIVE"] * 3)
    hub = FakeHub()
    rollout = run_rollout(model, "t2", "Read a.txt then delete it", ToolGate(SPECS, hub.call),
                          hub=hub, settings=RolloutSettings(mode="code"))
    assert rollout.answer == "it said LIVE"
    observation = _decode(rollout.samples[1].prompt_ids)
    assert "LIVE read_file done" in observation and "it was not run" in observation
    assert "right after an error" in _decode(rollout.samples[2].prompt_ids)
    assert "Nothing has been changed yet" in _decode(rollout.samples[3].prompt_ids)
    assert [t for _, t, _ in hub.live] == ["read_file"]
    assert rollout.tool_calls == 2


def test_a_model_that_does_not_record_gives_no_samples():
    rollout = run_rollout(ScriptedModel(["hi"]), "t", "hi", ToolGate([], None),
                          settings=RolloutSettings(mode="eager"))
    assert rollout.answer == "hi" and rollout.samples == ()


def test_rollout_seeds_differ_per_rollout_and_repeat_per_run():
    seeds = {rollout_seed(0, 1, "t", g) for g in range(8)}
    assert len(seeds) == 8
    assert rollout_seed(0, 3, "t", 2) == rollout_seed(0, 3, "t", 2) != rollout_seed(1, 3, "t", 2)
    assert all(type(s) is int and 0 <= s < 2**31 for s in seeds)  # plain ints, as torch takes


def test_a_full_context_ends_the_rollout_as_an_outcome_at_top_p_1():
    from deskmate.finetune.grpo import GRPOConfig
    from deskmate.finetune.policy import ContextFull

    call = '<tool_call>{"name": "fs__read_file", "arguments": {"path": "notes.md"}}</tool_call>'

    class FillsUp(RecordingModel):
        """Like PolicyChatModel once the prompt passes max_seq_len on the third call."""

        top_ps: list = []

        def stream(self, messages, params=None, cancel=None):
            self.top_ps.append(params.top_p)
            if len(self.records) == 2:
                raise ContextFull("the prompt is 12,300 tokens but the policy allows 12,288")
            yield from super().stream(messages, params, cancel)

    model = FillsUp([call, call, "never reached"])
    hub = FakeHub()
    settings = RolloutSettings.of("eager", GRPOConfig(max_model_calls=4))
    rollout = run_rollout(model, "t1", "What do my notes say?", ToolGate(SPECS, hub.call),
                          hub=hub, settings=settings)
    # Not a failure of the run: scored like an unfinished attempt, its calls trained on.
    assert rollout.status == "context_full" and rollout.error == ""
    assert len(rollout.samples) == 2
    # Training samples from the whole distribution: the loss takes log-probs under it.
    assert model.top_ps == [1.0, 1.0, 1.0]
