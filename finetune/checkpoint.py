"""Checkpoints of a training run: the trainable weights, the optimizer, the step.

A run folder holds ``checkpoint-N.pt`` files; resuming loads the newest and continues
with step N + 1. GRPO reseeds sampling from (seed, step) at every step, so a resumed
run draws with the seeds the uninterrupted run would have: on the CPU it generates the
same rollouts bit for bit; on CUDA only statistically (its matmul and attention kernels
are not deterministic, so the weights, and the tokens sampled from them, drift apart
in the last bits). Only the trainable parameters (the LoRA) are saved: the base is read
again from where it came from.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

_NAME = re.compile(r"checkpoint-(\d+)\.pt$")


@dataclass
class TrainState:
    step: int = 0  # the last finished step
    history: list[dict[str, Any]] = field(default_factory=list)  # Step events, as JSON


def trainable_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {name: p.detach().clone() for name, p in model.named_parameters() if p.requires_grad}


def save_checkpoint(run_dir: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer,
                    state: TrainState, keep: int = 2) -> Path:
    """Write ``checkpoint-<step>.pt`` atomically and keep only the newest ``keep``."""
    import torch

    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / f"checkpoint-{state.step}.pt"
    tmp = path.with_suffix(".tmp")
    torch.save({"weights": trainable_state(model), "optimizer": optimizer.state_dict(),
                "step": state.step, "history": state.history}, tmp)
    os.replace(tmp, path)
    for old in list_checkpoints(run_dir)[:-keep]:
        old.unlink(missing_ok=True)
    return path


def list_checkpoints(run_dir: Path) -> list[Path]:
    found = [(int(m.group(1)), p) for p in run_dir.glob("checkpoint-*.pt")
             if (m := _NAME.search(p.name))]
    return [p for _, p in sorted(found)]


def load_checkpoint(run_dir: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer
                    ) -> TrainState:
    """Restore the newest checkpoint into ``model`` and ``optimizer``; step 0 when none."""
    import torch

    checkpoints = list_checkpoints(run_dir)
    if not checkpoints:
        return TrainState()
    data = torch.load(checkpoints[-1], map_location="cpu", weights_only=False)
    params = dict(model.named_parameters())
    missing = [name for name in data["weights"] if name not in params]
    if missing:
        raise ValueError(f"{checkpoints[-1]} does not fit this model (no parameter "
                         f"{missing[0]}): was it made with another base or LoRA config?")
    with torch.no_grad():
        for name, value in data["weights"].items():
            params[name].copy_(value.to(params[name].device))
    optimizer.load_state_dict(data["optimizer"])
    return TrainState(step=int(data["step"]), history=list(data["history"]))
