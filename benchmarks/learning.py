"""Does finetuning make the agent better? GRPO on a real tool-use family, then held-out.

    .venv/bin/python benchmarks/learning.py [--model GGUF] [--steps N] [--seeds N]
                                            [--group G] [--tasks-per-step T]

A model (default: the tiny SmolLM2-135M of the tests) learns the task family of
``benchmarks/learning_tasks.py`` — one-tool requests over the real time, everything and
filesystem MCP servers, scored by deterministic checks (no judge) — through the
trainer's own loop (``finetune.train``, rollouts sampled by the llama.cpp engine, eager
mode). The adapter is exported to GGUF and served by llama.cpp on the GGUF base, as the
app serves it (``LlamaCppModel`` with ``adapter=``), and compared with the base on the
held-out half, each over ``--seeds`` sampling seeds at the app's temperature.

Progress goes out as JSON lines; the last line is
{"model", "train_tasks", "heldout_tasks", "seeds", "base_success", "adapter_success",
 "base_score", "adapter_score", "spread", "wall_s"} — success and score are means over
the seeds; spread is the largest seed-to-seed difference of any of the four. A line
``diagnosis`` before it gives what explains a gain or its absence: groups with reward
variance during training, and what the adapter changed (tool calls, statuses).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.learning_tasks import (  # noqa: E402  (after the path is set)
    Family,
    environment,
    make_family,
    servers,
    write_workspace,
)
from deskmate.finetune.environment import EnvironmentFor  # noqa: E402
from deskmate.finetune.tasks import TrainTask  # noqa: E402

MODE = "eager"  # see learning_tasks: the tiny model cannot write code-mode cells at all
EVAL_TEMPERATURE = 0.2  # the app's default (config.py), so seeds differ as users see


@dataclass(frozen=True)
class EvalResult:
    success: float  # fraction of held-out tasks scored 1.0
    score: float  # mean score
    tool_calls: float  # mean tool calls per task
    statuses: dict[str, int]
    answers: list[tuple[str, float, str]]  # (task key, score, answer head)


def say(**fields: Any) -> None:
    print(json.dumps(fields, default=str), flush=True)


def evaluate(gguf: Path, adapter: Path | None, tasks: list[TrainTask], env: EnvironmentFor,
             seed: int, max_tokens: int, max_steps: int) -> EvalResult:
    """One pass over ``tasks`` on llama.cpp as the app serves the model (and adapter)."""
    from deskmate.app.agent.loop import AgentLimits
    from deskmate.app.llm.llamacpp import LlamaCppModel
    from deskmate.finetune.environment import run_in
    from deskmate.finetune.rollout import RolloutSettings, rollout_seed

    settings = RolloutSettings(MODE, AgentLimits(max_steps=max_steps, max_tokens=max_tokens,
                                                 temperature=EVAL_TEMPERATURE))
    model = LlamaCppModel(gguf, context=2048, seed=seed, adapter=adapter)
    scores, calls, statuses, answers = [], 0, Counter[str](), []
    try:
        for task in tasks:
            rollout = run_in(env, model, task, settings=settings,
                             seed=rollout_seed(seed, 0, task.key, 0))
            value = 0.0 if rollout.error else float(rollout.checks or 0.0)
            scores.append(value)
            calls += rollout.tool_calls
            statuses[rollout.status] += 1
            answers.append((task.key, value, rollout.answer[:80]))
    finally:
        model.close()
    n = max(len(tasks), 1)
    return EvalResult(sum(s == 1.0 for s in scores) / n, sum(scores) / n, calls / n,
                      dict(statuses), answers)


def train_adapter(gguf: Path, family: Family, env: EnvironmentFor, run_dir: Path,
                  args: argparse.Namespace) -> tuple[Path, list[dict[str, Any]]]:
    import torch

    from deskmate.finetune.export import export_gguf_adapter
    from deskmate.finetune.grpo import GRPOConfig
    from deskmate.finetune.judge import Judge
    from deskmate.finetune.policy import PolicyConfig, load_policy
    from deskmate.finetune.rollout import RolloutSettings
    from deskmate.finetune.smoke import cpu_threads
    from deskmate.finetune.train import train

    torch.set_num_threads(cpu_threads())
    # Micro-batch 4: at 8, an update over two groups of ~900-token calls peaked at 20.7 GB
    # of RAM on the CPU, and the kernel's OOM killer ended the first full run at step 20.
    config = GRPOConfig(steps=args.steps, group_size=args.group,
                        tasks_per_step=args.tasks_per_step, learning_rate=args.lr,
                        micro_batch=4, temperature=1.0, max_new_tokens=args.max_tokens,
                        max_model_calls=args.max_steps, lora_rank=8, lora_alpha=16,
                        seed=0, checkpoint_every=args.steps, max_seq_len=1536,
                        rollout_engine="llamacpp")
    policy = load_policy(gguf, PolicyConfig(device="cpu", lora_rank=config.lora_rank,
                                            lora_alpha=config.lora_alpha, seed=config.seed,
                                            max_seq_len=config.max_seq_len))
    result = train(policy, family.train, config, Judge(None), run_dir=run_dir,
                   settings=RolloutSettings.of(MODE, config),
                   emit=lambda event: say(**event.to_json()), environment=env,
                   serving_gguf=gguf)
    adapter = export_gguf_adapter(policy.model, run_dir / "adapter.gguf", base_gguf=gguf,
                                  overwrite=True)
    return adapter, result.history


def spread(values: list[float]) -> float:
    return max(values) - min(values) if values else 0.0


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description="GRPO on a real tool-use family; "
                                     "adapter vs base on the held-out half")
    parser.add_argument("--model", type=Path, help="a GGUF (default: the tests' tiny model)")
    parser.add_argument("--steps", type=int, default=24,
                        help="GRPO steps (smoke: ~35 s each, ~100 s with a trained group)")
    parser.add_argument("--seeds", type=int, default=3, help="evaluation seeds")
    parser.add_argument("--group", type=int, default=6, help="rollouts per task (G)")
    parser.add_argument("--tasks-per-step", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-3, help="LoRA learning rate")
    parser.add_argument("--max-tokens", type=int, default=64, help="tokens per reply")
    parser.add_argument("--max-steps", type=int, default=2,
                        help="model calls per task: the tool call, then the answer")
    parser.add_argument("--heldout", type=int, default=0,
                        help="evaluate only the first N held-out tasks (0: all)")
    args = parser.parse_args(argv)

    from deskmate.tools.hub import Hub

    started = time.perf_counter()
    if args.model is None:
        from tests.conftest import _tiny_model_file

        args.model = _tiny_model_file()
    gguf = args.model.resolve()
    family = make_family()
    heldout = family.heldout[:args.heldout] if args.heldout else family.heldout
    say(event="family", train=len(family.train), heldout=len(heldout),
        split="within each kind: even index trains, odd is held out")
    with tempfile.TemporaryDirectory(prefix="deskmate-learning-") as tmp:
        workspace = write_workspace(Path(tmp) / "workspace")
        with Hub(servers(workspace), Path(tmp) / "logs") as hub:
            states = hub.start()
            down = [f"{s.name}: {s.error}" for s in states if s.status != "ready"]
            if down:
                raise SystemExit(f"MCP servers did not start: {down}")
            env = environment(hub, workspace)
            t0 = time.perf_counter()
            adapter, history = train_adapter(gguf, family, env, Path(tmp) / "run", args)
            say(event="trained", train_s=round(time.perf_counter() - t0, 1))
            results: dict[str, list[EvalResult]] = {"base": [], "adapter": []}
            for seed in range(args.seeds):
                for which, lora in (("base", None), ("adapter", adapter)):
                    t1 = time.perf_counter()
                    r = evaluate(gguf, lora, heldout, env, seed, args.max_tokens,
                                 args.max_steps)
                    results[which].append(r)
                    say(event="eval", which=which, seed=seed, success=round(r.success, 4),
                        score=round(r.score, 4), tool_calls=round(r.tool_calls, 2),
                        statuses=r.statuses, eval_s=round(time.perf_counter() - t1, 1))
    steps = [h for h in history if h.get("event") == "step"]
    say(event="diagnosis",
        groups_with_variance=sum(s["groups_used"] for s in steps),
        groups=len(steps) * args.tasks_per_step,
        reward_by_step=[s["reward_mean"] for s in steps],
        tool_calls_base=_mean([r.tool_calls for r in results["base"]]),
        tool_calls_adapter=_mean([r.tool_calls for r in results["adapter"]]),
        changed=_changed(results["base"], results["adapter"]))
    figures = {which: ([r.success for r in rs], [r.score for r in rs])
               for which, rs in results.items()}
    out = {
        "model": gguf.name, "train_tasks": len(family.train), "heldout_tasks": len(heldout),
        "seeds": args.seeds,
        "base_success": _mean(figures["base"][0]),
        "adapter_success": _mean(figures["adapter"][0]),
        "base_score": _mean(figures["base"][1]),
        "adapter_score": _mean(figures["adapter"][1]),
        "spread": round(max(spread(v) for pair in figures.values() for v in pair), 4),
        "wall_s": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(out), flush=True)
    return out


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def _changed(base: list[EvalResult], adapter: list[EvalResult]) -> dict[str, int]:
    """Per task and seed: did the adapter score better, worse, or the same as the base?"""
    out = Counter[str]()
    for b, a in zip(base, adapter, strict=True):
        for (_, sb, _), (_, sa, _) in zip(b.answers, a.answers, strict=True):
            out["better" if sa > sb else "worse" if sa < sb else "same"] += 1
    return dict(out)


if __name__ == "__main__":
    main()
