"""Whether the finetune extras are installed, and the command that installs them.

`make run` and a plain `pip install deskmate` leave torch, transformers and peft out
(they are the ``finetune`` extra, gigabytes). Without them a run's child process dies at
its first import; the CLI and the Finetune screen ask here first, before a run folder or
row exists. ``find_spec`` finds a package without importing it: importing torch takes
seconds, and the screen must open at once.
"""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass
from importlib import metadata
from importlib.util import find_spec

# Every run loads its policy with these (finetune.policy, finetune.export).
ALWAYS = ("torch", "transformers", "peft")
# A 4-bit LoRA on an NVIDIA GPU loads through unsloth; the CPU path uses peft alone.
CUDA_ONLY = ("unsloth",)


@dataclass(frozen=True)
class Extras:
    missing: tuple[str, ...]  # the importable names not found, in install order
    command: str  # the shell command that installs the extra into this environment

    @property
    def ok(self) -> bool:
        return not self.missing

    @property
    def message(self) -> str:
        """One line for the user: what is missing and how to install it."""
        return (f"finetuning needs {', '.join(self.missing)} (the finetune extra), not "
                f"installed here; install it with: {self.command}")


def check_extras(device: str | None) -> Extras:
    """The extras a run on ``device`` ("cuda", "cpu", or None when unknown) lacks."""
    wanted = ALWAYS + (CUDA_ONLY if device == "cuda" else ())
    missing = tuple(name for name in wanted if find_spec(name) is None)
    return Extras(missing, install_command())


def install_command() -> str:
    """``pip install`` of the finetune extra with this Python, so it lands in this venv.

    A checkout installed with ``pip install -e`` (as `make run` does) reinstalls itself
    editable from its folder: ``deskmate[finetune]`` from the index would replace the
    checkout with a released wheel. torch is not pinned: the pin in the Makefile keeps a
    CPU wheel that is already installed, and pip leaves an installed torch that fits the
    extra's range alone anyway.
    """
    target = "deskmate[finetune]"
    editable = _editable_root()
    if editable is not None:
        target = f"{editable}[finetune]"
    return " ".join([shlex.quote(sys.executable), "-m", "pip", "install",
                     *(["-e"] if editable is not None else []), shlex.quote(target)])


def _editable_root() -> str | None:
    """The folder of an editable install of deskmate (PEP 610's direct_url.json)."""
    try:
        raw = metadata.distribution("deskmate").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    try:
        direct = json.loads(raw or "{}")
    except ValueError:
        return None
    url = str(direct.get("url", ""))
    if not direct.get("dir_info", {}).get("editable") or not url.startswith("file://"):
        return None
    return url.removeprefix("file://")
