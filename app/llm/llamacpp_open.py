"""Opening a GGUF with llama-cpp-python, around a llama.cpp crash on AMX CPUs.

llama.cpp built for the machine it runs on (``-march=native``, our default) moves the
weights into AMX tiles on CPUs that have them (Xeon Sapphire Rapids and later); its AMX
matrix multiply then segfaults on the first prompt of more than one token
(ggml-org/llama.cpp#20824, open upstream; seen here on a Q4_1 and a Q4_K_M model). The
weights stay in plain CPU buffers when the model is loaded with ``use_extra_bufts`` off,
which costs those CPUs the repacked fast paths, not correctness. llama-cpp-python has
no argument for it, so the constructor gets default model params with it off.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from llama_cpp import Llama

_swap = threading.Lock()  # the defaults are swapped on the binding module, for one load


@cache
def amx_build() -> bool:
    """Whether this llama.cpp build runs matrix multiplies on AMX tiles."""
    import llama_cpp

    info = llama_cpp.llama_print_system_info()
    return "AMX_INT8 = 1" in (info.decode(errors="replace") if isinstance(info, bytes)
                              else str(info))


def open_llama(model_path: str, **kwargs: Any) -> Llama:
    """``llama_cpp.Llama(model_path, **kwargs)``, with AMX weight buffers off where the
    build would use them (see the module's note)."""
    import llama_cpp
    import llama_cpp.llama_cpp as binding  # what the constructor reads its defaults from

    if not amx_build():
        return llama_cpp.Llama(model_path=model_path, **kwargs)
    with _swap:
        default = binding.llama_model_default_params
        binding.llama_model_default_params = _without_extra_buffers(default)
        try:
            return llama_cpp.Llama(model_path=model_path, **kwargs)
        finally:
            binding.llama_model_default_params = default


def keep_weights_off_amx() -> None:
    """The same for every model this process loads from now on: for a process that
    loads models its own way (``llama_cpp.server``, started by the tests as a user's
    OpenAI-compatible server)."""
    import llama_cpp.llama_cpp as binding

    if amx_build():
        binding.llama_model_default_params = _without_extra_buffers(
            binding.llama_model_default_params)


def _without_extra_buffers(default: Callable[[], Any]) -> Callable[[], Any]:
    def params() -> Any:
        chosen = default()
        chosen.use_extra_bufts = False
        return chosen

    return params
