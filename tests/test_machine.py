"""Which llama.cpp build this is, where the layers run, and the model this machine fits."""

from __future__ import annotations

import json

from conftest import deskmate

from deskmate.app.llm.backend import backend_of, llama_build
from deskmate.app.llm.gguf_file import inspect_gguf
from deskmate.app.llm.llamacpp import _placement
from deskmate.app.llm.registry import registry
from deskmate.app.services.machine import free_memory_gb, machine_fit, need_gb, pick
from deskmate.finetune.hardware import Gpu


def test_the_backend_is_read_from_llama_cpps_system_info():
    assert backend_of("CPU : SSE3 = 1 | AVX2 = 1 | OPENMP = 1 | REPACK = 1 | ") == "CPU"
    assert backend_of("CUDA : ARCHS = 890 | USE_GRAPHS = 1 | CPU : SSE3 = 1 |") == "CUDA"
    assert backend_of("Metal : EMBED_LIBRARY = 1 | CPU : NEON = 1 |") == "Metal"
    assert backend_of("Vulkan : | CPU : AVX = 1 |") == "Vulkan"


def test_this_build_is_named():
    import llama_cpp

    assert (llama_build() == "CPU") == (not llama_cpp.llama_supports_gpu_offload())


def test_placement_counts_the_layers_on_the_gpu(tiny_model_path):
    gguf = inspect_gguf(tiny_model_path)
    total = gguf.metadata["llama.block_count"] + 1  # the blocks and the output layer
    assert _placement(False, -1, gguf) == ""  # a CPU build: nothing to choose
    assert _placement(True, -1, gguf) == f"GPU {total}/{total} layers"
    assert _placement(True, 10, gguf) == f"GPU 10/{total} layers"
    assert _placement(True, 999, gguf) == f"GPU {total}/{total} layers"
    assert _placement(True, 0, gguf) == "CPU (gpu_layers = 0)"


def test_the_recommended_model_when_it_fits_else_the_largest_that_does():
    entries = list(registry().values())
    four_b = registry()["qwen3-4b"]
    assert pick(entries, 64.0) == four_b
    smaller = pick(entries, need_gb(four_b) - 0.1)
    assert smaller is not None and smaller.name != "qwen3-4b"
    assert need_gb(smaller) <= need_gb(four_b) - 0.1
    assert pick(entries, need_gb(registry()["tiny"])) == registry()["tiny"]
    assert pick(entries, 0.5) is None


def test_a_gpu_with_a_cpu_build_says_how_to_build_for_it():
    gpu = Gpu("NVIDIA GeForce RTX 3060", 12.0, 11.5)
    fit = machine_fit(build="CPU", gpus=[gpu], ram_gb=3.0)
    assert fit.where == "CPU" and fit.memory_gb == 2.4
    assert fit.recommended == "qwen3-1.7b"
    assert "CUDA toolkit" in fit.note and "make clean run" in fit.note
    on_gpu = machine_fit(build="CUDA", gpus=[gpu], ram_gb=3.0)
    assert on_gpu.where == "GPU" and on_gpu.memory_gb == 10.8
    assert on_gpu.recommended == "qwen3-4b" and not on_gpu.note
    assert "GPU build (CUDA)" in on_gpu.summary() and "qwen3-4b fits" in on_gpu.summary()


def test_metal_counts_the_machines_memory_and_nothing_fits_says_so():
    assert machine_fit(build="Metal", gpus=[], ram_gb=16.0).where == "GPU"
    none = machine_fit(build="CPU", gpus=[], ram_gb=0.5)
    assert none.recommended == "" and "no listed model fits" in none.summary()


def test_free_memory_reads_memavailable(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24000000 kB\nMemAvailable:    8388608 kB\n")
    assert free_memory_gb(meminfo) == 8.0
    assert free_memory_gb(tmp_path / "missing") > 0  # falls back to physical memory


def test_models_lists_what_fits_this_machine(home):
    result = deskmate("models", home=home)
    assert result.returncode == 0, result.stderr
    assert "This machine: llama.cpp " in result.stdout
    rows = json.loads(deskmate("models", "list", "--json", home=home).stdout)
    assert sum(r["best_here"] for r in rows) <= 1
