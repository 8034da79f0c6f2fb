"""What this machine can train, before a run: the Finetune screen's first look.

Blocking (nvidia-smi, the GGUF header, the sessions database, the bundled suite), so
the screen calls ``survey`` from a thread worker. It takes plain values (the model's
name, how many tools are connected), not the app.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from deskmate.finetune.extras import Extras, check_extras
from deskmate.finetune.hardware import Call, Gpu, Plan
from deskmate.finetune.runs import RunRecord


@dataclass(frozen=True)
class Survey:
    hardware: str  # the GPUs and their free memory, or why training is CPU-only
    plan: Plan | None  # the settings for the configured model (None: no usable model)
    model: str  # the model's name, or why there is none to train
    serving: str  # the serving GGUF ("" without a model)
    base: str  # what the LoRA trains on: a Hugging Face checkpoint or the GGUF itself
    sources: tuple[tuple[str, str], ...]  # (label, task source) to choose from
    runs: tuple[RunRecord, ...]  # the runs so far, newest first
    default_steps: int
    extras: Extras  # the training libraries this plan's device lacks, and their install


def survey(model_name: str | None, tools: int) -> Survey:
    """The GPUs, the plan for ``model_name``, task sources and runs. ``tools`` is the
    number of connected tools: with none there is nothing to generate tasks for."""
    from deskmate.app.llm.base import ModelError
    from deskmate.app.store import open_db
    from deskmate.finetune import hardware
    from deskmate.finetune import tasks as T
    from deskmate.finetune.grpo import GRPOConfig
    from deskmate.finetune.runs import list_runs, training_models

    gpus = hardware.detect_gpus()
    described = (" · ".join(f"GPU {g.name}: {g.free_gb:.1f} of {g.total_gb:.1f} GB free"
                            for g in gpus) if gpus else
                 "No NVIDIA GPU found: training runs on the CPU, for tiny models only.")
    plan, serving, base, model = None, "", "", "No model configured: pick one in Models (F4)."
    if model_name:
        try:
            path, base = training_models(model_name)
        except ModelError as exc:
            model = str(exc)
        else:
            serving = str(path)
            plan = plan_for(gpus, path, db_calls=True, base=base)
            model = Path(model_name).name
            if plan.device == "cuda" and base != serving:
                model += f" (the LoRA trains on {base})"
    with open_db() as db:
        candidates = T.from_sessions(db, with_excluded=True)
        runs = list_runs(db)
    excluded = sum(1 for t in candidates if t.metadata.get("excluded"))
    sessions = f"your sessions ({len(candidates) - excluded} tasks"
    sessions += f", {excluded} excluded)" if excluded else ")"
    sources = [(sessions, "sessions"),
               (f"the bundled eval suite ({bundled_suite_size()} tasks)",
                f"suite:{bundled_suite()}")]
    if tools:
        sources.append((f"generated for your {tools} tools", "generate"))
    extras = check_extras(plan.device if plan is not None else None)
    return Survey(described, plan, model, serving, base, tuple(sources), tuple(runs),
                  GRPOConfig().steps, extras)


def plan_for(gpus: list[Gpu], serving: Path, *, db_calls: bool, base: str = "") -> Plan:
    """The plan for training ``serving``'s model here, the judge (the serving model, on
    the GPU), the rollout engine and the held-out eval counted; with ``db_calls`` the
    call lengths come from the recorded sessions (else the config's bound). A GPU plan
    for a ``base`` that is only a GGUF is no plan: it would load as full bf16, not as the
    4-bit estimate."""
    from deskmate.finetune import hardware
    from deskmate.finetune.grpo import GRPOConfig
    from deskmate.finetune.policy import gguf_on_gpu
    from deskmate.finetune.spec import cpu_allowed

    if gpus and base.endswith(".gguf"):
        return Plan(None, gguf_on_gpu(base))

    arch = hardware.arch_of_gguf(serving)
    llama = engine = 0.0
    if arch is not None and serving.is_file():
        size = serving.stat().st_size
        llama = hardware.llamacpp_gb(size, arch, hardware.LLAMACPP_CONTEXT)
        # The rollout engine (the default sampler): the served model, at max_seq_len.
        engine = hardware.llamacpp_gb(size, arch, GRPOConfig().max_seq_len)
    return hardware.recommend(gpus, arch, cpu_ok=cpu_allowed(str(serving)),
                              calls=recorded_calls() if db_calls and gpus else None,
                              judge_gb=llama, eval_gb=llama, engine_gb=engine)


def recorded_calls(sessions: int = 200) -> list[Call]:
    """(prompt, completion) tokens of the model calls in the latest recorded sessions."""
    from deskmate.app.store import open_db
    from deskmate.app.store.sessions import get_session, list_sessions

    with open_db() as db:
        return [(u.prompt_tokens, u.completion_tokens)
                for summary in list_sessions(db, limit=sessions)
                for u in get_session(db, summary.id).usage]


def bundled_suite() -> Path:
    from importlib.resources import files

    return Path(str(files("deskmate.assets").joinpath("eval", "local")))


@cache
def bundled_suite_size() -> int:
    """Tasks in the suite shipped with deskmate: read once, not at every survey (the
    screen surveys each time it is shown)."""
    from deskmate.finetune.eval import load_suite

    return len(load_suite(bundled_suite()).tasks)
