"""The judge: a model that scores each rubric criterion in [0, 1] from a trajectory.

One call per group: the task, the criteria and all G trajectories go into one prompt,
and the answer is JSON of exactly one score per (rollout, criterion). On llama.cpp the
output is held to that shape by a GBNF grammar — the model chooses only the digits —
so even a small judge cannot answer malformed JSON; an OpenAI-compatible endpoint gets
the same shape as a JSON schema and is parsed strictly, with one retry.

By default the judge is the serving model itself (a GGUF on llama.cpp).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from deskmate.app.llm.base import ChatMessage, ChatModel, GenerationParams, ModelError, complete
from deskmate.finetune.rubrics import CATEGORIES, DEFAULT_WEIGHTS, PASS, Criterion, Rubric, reward
from deskmate.tools.sandbox.capture import truncate_middle as truncate

if TYPE_CHECKING:
    from deskmate.finetune.rollout import Rollout


class JudgeError(ModelError):
    """The judge did not return usable scores."""


SYSTEM = """\
You grade AI agents strictly and fairly. For each rollout and each criterion, give a \
score from 0 (not met at all) to 1 (fully met); use values in between for partly met. \
Judge only from the transcript: tool outputs shown are what really happened."""


def render_trajectory(messages: Sequence[ChatMessage], budget: int) -> str:
    """What the agent did after the task: its messages, tool output, its answer."""
    lines = []
    after_task = False
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "user" and not after_task:
            after_task = True  # the task itself: shown once, above the rollouts
            continue
        who = "AGENT" if message.role == "assistant" else "TOOL OUTPUT"
        calls = [f"calls {c['function']['name']}({c['function']['arguments']})"
                 for c in message.tool_calls]  # eager mode's native tool calls
        lines.append(f"{who}: " + "\n".join([message.content.strip(), *calls]).strip())
    return truncate("\n".join(lines) or "(the agent produced nothing)", budget)


def scores_grammar(rollouts: int, criteria: int) -> str:
    """GBNF for {"rollout_1": {"c1": s, ...}, ...} with s a number in [0, 1]."""
    def row(i: int) -> str:
        cells = ' ", " '.join(f'"\\"c{j}\\": " score' for j in range(1, criteria + 1))
        return f'"\\"rollout_{i}\\": {{" {cells} "}}"'

    body = ' ", " '.join(row(i) for i in range(1, rollouts + 1))
    return (f'root ::= "{{" {body} "}}"\n'
            'score ::= "0" | "1" | "0." [0-9] [0-9]? | "1.0"\n')


def scores_schema(rollouts: int, criteria: int) -> dict:
    cell = {"type": "number", "minimum": 0, "maximum": 1}
    row = {"type": "object", "properties": {f"c{j}": cell for j in range(1, criteria + 1)},
           "required": [f"c{j}" for j in range(1, criteria + 1)]}
    return {"type": "object", "properties": {f"rollout_{i}": row for i in range(1, rollouts + 1)},
            "required": [f"rollout_{i}" for i in range(1, rollouts + 1)]}


def parse_scores(text: str, rollouts: int, criteria: int) -> list[list[float]]:
    """Scores[rollout][criterion] from the judge's JSON; every cell must be there."""
    try:
        data = json.loads(text)
        out = []
        for i in range(1, rollouts + 1):
            row = data[f"rollout_{i}"]
            cells = [row[f"c{j}"] for j in range(1, criteria + 1)]
            if any(isinstance(v, bool) or not isinstance(v, int | float) for v in cells):
                raise TypeError("a score is not a number")
            out.append([min(1.0, max(0.0, float(v))) for v in cells])
        return out
    except (ValueError, KeyError, TypeError) as exc:
        raise JudgeError(f"the judge's answer is not the scores asked for ({exc}): "
                         f"{text[:300]!r}") from exc


@dataclass(frozen=True)
class Scored:
    """The reward of one rollout and what it is made of."""

    reward: float
    criteria: tuple[float, ...]  # one score per rubric criterion
    checks: float | None  # fraction of deterministic checks passed; None: no checks


class Judge:
    def __init__(self, model: ChatModel | None, *, budget_chars: int = 8000, retries: int = 1,
                 weights: Mapping[str, float] | None = None) -> None:
        self.model = model
        self.budget_chars = budget_chars  # all trajectories of a group together
        self.retries = retries
        self.weights = weights or DEFAULT_WEIGHTS  # of the rubric categories in the reward
        self.grammar = model is not None and model.info.grammar

    def score_criteria(self, prompt: str, criteria: Sequence[Criterion],
                       transcripts: Sequence[Sequence[ChatMessage]]) -> list[list[float]]:
        """scores[rollout][criterion] for one group, in one judge call."""
        n, k = len(transcripts), len(criteria)
        if n == 0 or k == 0:
            return [[] for _ in transcripts]
        if self.model is None:
            raise JudgeError("these tasks have rubric criteria but no judge model was given: "
                             "pass --judge MODEL (default: the serving model)")
        per = max(600, self.budget_chars // n)
        listed = "\n".join(f"c{j}. [{c.category}] {c.text}" for j, c in enumerate(criteria, 1))
        rollouts = "\n\n".join(f"=== rollout_{i} ===\n{render_trajectory(t, per)}"
                               for i, t in enumerate(transcripts, 1))
        text = (f"Task given to the agent:\n{prompt}\n\nCriteria:\n{listed}\n\n{rollouts}\n\n"
                f"Answer with JSON only: {{\"rollout_1\": {{\"c1\": score, ...}}, ...}} "
                f"for rollout_1..rollout_{n} and c1..c{k}.")
        params = GenerationParams(
            max_tokens=n * k * 14 + 16, temperature=0.0,
            grammar=scores_grammar(n, k) if self.grammar else None,
            json_schema=None if self.grammar else scores_schema(n, k))
        messages = [ChatMessage("system", SYSTEM), ChatMessage("user", text)]
        for attempt in range(self.retries + 1):
            answer = complete(self.model, messages, params).text
            try:
                return parse_scores(answer, n, k)
            except JudgeError:
                if attempt == self.retries:
                    raise
        raise AssertionError("unreachable")

    def score_group(self, prompt: str, rubric: Rubric,
                    rollouts: Sequence[tuple[Sequence[ChatMessage], str]],
                    checks: Sequence[float | None] | None = None) -> list[Scored]:
        """Reward every (transcript, final answer) of a group.

        ``checks``: each rollout's own check score (None: the rubric's answer checks).
        """
        table = self.score_criteria(prompt, rubric.criteria, [t for t, _ in rollouts])
        own = checks if checks is not None else [None] * len(rollouts)
        out = []
        for scores, (_, answer), check in zip(table, rollouts, own, strict=True):
            if check is None:
                check = rubric.checks.score(answer)
            out.append(Scored(reward(rubric, scores, answer, self.weights, check),
                              tuple(scores), check))
        return out

    def score_rollouts(self, prompt: str, rubric: Rubric,
                       rollouts: Sequence[Rollout]) -> list[Scored]:
        """``score_group`` of rollouts; one that could not run (``error``) scores 0 unjudged."""
        ran = [r for r in rollouts if not r.error]
        scored = iter(self.score_group(prompt, rubric, [(r.transcript, r.answer) for r in ran],
                                       [r.checks for r in ran]))
        failed = Scored(0.0, (0.0,) * len(rubric.criteria), None)
        return [failed if r.error else next(scored) for r in rollouts]


def pass_rates(rubric_scored: Sequence[tuple[Rubric, Scored]]) -> dict[str, float]:
    """Fraction of criteria passed per category, and of checks, over scored rollouts."""
    hits: dict[str, list[float]] = {}
    for rubric, scored in rubric_scored:
        for criterion, value in zip(rubric.criteria, scored.criteria, strict=True):
            hits.setdefault(criterion.category, []).append(float(value >= PASS))
        if scored.checks is not None:
            hits.setdefault("checks", []).append(scored.checks)
    order = [*CATEGORIES, "checks"]
    return {name: round(sum(hits[name]) / len(hits[name]), 4) for name in order if name in hits}
