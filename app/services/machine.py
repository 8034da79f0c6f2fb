"""Which model this machine runs well: its llama.cpp build, its GPU or its memory.

``deskmate models`` and the Models screen show the answer; nothing here loads a model.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from deskmate.app.llm.registry import RegistryEntry

# A GGUF needs its own size in memory plus the KV cache at the default context and
# llama.cpp's compute buffers: about a fifth more and a gigabyte (measured order for
# Qwen3-4B Q4_K_M at 8k context: 2.5 GB file, ~3.6 GB resident).
_OVERHEAD = 1.2
_FIXED_GB = 1.0
# Leave the rest of the machine room to work.
_SHARE_OF_FREE = 0.8


@dataclass(frozen=True)
class MachineFit:
    build: str  # llama.cpp's build: "CPU", "CUDA", "Metal", …
    gpus: tuple[str, ...]  # "NVIDIA GeForce RTX 4090 (24.0 GB)", as nvidia-smi names them
    where: str  # "GPU" or "CPU": where the model's layers would run
    memory_gb: float  # what a model may take there
    recommended: str  # the registry model to use here ("" when none fits)
    need_gb: float  # what the recommended one needs
    note: str = ""  # what would make this machine run models better, if anything

    def summary(self) -> str:
        place = (f"{self.where} build ({self.build})" if self.build != "CPU"
                 else "CPU build")
        memory = (f"{self.memory_gb:.1f} GB of GPU memory" if self.where == "GPU"
                  else f"{self.memory_gb:.1f} GB of memory to spare")
        line = f"This machine: llama.cpp {place}, {memory}"
        if self.recommended:
            line += f" → {self.recommended} fits (needs ~{self.need_gb:.1f} GB)"
        else:
            line += " → no listed model fits; close other programs or use a smaller GGUF"
        return line + (f"\n{self.note}" if self.note else "")


def need_gb(entry: RegistryEntry) -> float:
    return round(entry.size_mb / 1024 * _OVERHEAD + _FIXED_GB, 1)


def free_memory_gb(meminfo: Path = Path("/proc/meminfo")) -> float:
    """Memory available to a new program (Linux's MemAvailable, else physical memory)."""
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024**2
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1024**3
    except (ValueError, OSError, AttributeError):
        return 0.0


def pick(entries: list[RegistryEntry], memory_gb: float) -> RegistryEntry | None:
    """The recommended model if it fits, else the largest that fits, else None."""
    fitting = [e for e in entries if need_gb(e) <= memory_gb]
    for entry in fitting:
        if entry.recommended:
            return entry
    real = [e for e in fitting if not e.package]  # the packaged tiny model: last resort
    pool = real or fitting
    return max(pool, key=lambda e: e.size_mb) if pool else None


def machine_fit(build: str | None = None, gpus: list | None = None,
                ram_gb: float | None = None) -> MachineFit:
    """What this machine can run; the arguments stand in for detection in tests.

    ``gpus`` holds ``finetune.hardware.Gpu`` records (name, total_gb, free_gb).
    """
    from deskmate.app.llm.backend import llama_build
    from deskmate.app.llm.registry import registry
    from deskmate.finetune.hardware import detect_gpus

    build = build if build is not None else llama_build()
    gpus = gpus if gpus is not None else detect_gpus()
    ram = ram_gb if ram_gb is not None else free_memory_gb()
    names = tuple(f"{g.name} ({g.total_gb:.1f} GB)" for g in gpus)
    note = ""
    if build == "CUDA" and gpus:
        where, memory = "GPU", max(g.total_gb for g in gpus) * 0.9
    elif build == "Metal":  # unified memory: the GPU uses the machine's RAM
        where, memory = "GPU", ram * _SHARE_OF_FREE
    else:
        where, memory = "CPU", ram * _SHARE_OF_FREE
        if gpus and build == "CPU":
            note = (f"An NVIDIA GPU is here ({names[0]}) but llama.cpp was built for the "
                    "CPU: install the CUDA toolkit (nvcc) and run `make clean run`, which "
                    "builds it for CUDA when nvcc is found.")
    chosen = pick(list(registry().values()), memory)
    return MachineFit(build=build, gpus=names, where=where, memory_gb=round(memory, 1),
                      recommended=chosen.name if chosen else "",
                      need_gb=need_gb(chosen) if chosen else 0.0, note=note)
