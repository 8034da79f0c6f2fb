"""Which llama.cpp build this is (CPU, CUDA, Metal, …), without loading a model."""

from __future__ import annotations

from functools import cache

# Names llama.cpp's system info uses for its GPU backends, and how we say them.
_GPU_BACKENDS = {"CUDA": "CUDA", "METAL": "Metal", "VULKAN": "Vulkan", "HIP": "ROCm",
                 "ROCM": "ROCm", "SYCL": "SYCL", "OPENCL": "OpenCL"}


def backend_of(system_info: str) -> str:
    """The GPU backend named in llama.cpp's system info, or "CPU"."""
    sections = {part.split(":", 1)[0].strip().upper()
                for part in system_info.split("|") if ":" in part}
    for key, name in _GPU_BACKENDS.items():
        if key in sections or any(s.startswith(key) for s in sections):
            return name
    return "CPU"


@cache
def llama_build() -> str:
    """"CPU", or the GPU backend this llama-cpp-python was compiled with."""
    import llama_cpp  # loads the shared library; no model

    if not llama_cpp.llama_supports_gpu_offload():
        return "CPU"
    info = llama_cpp.llama_print_system_info()
    text = info.decode(errors="replace") if isinstance(info, bytes) else str(info)
    found = backend_of(text)
    return found if found != "CPU" else "GPU"  # offload works; the name is not listed
