"""Model specs: registry names, hf: references, paths; the tiny model's package."""

from __future__ import annotations

import pytest

from deskmate.app.config import Config, ModelConfig
from deskmate.app.llm import ModelError, NoModelConfigured, open_model
from deskmate.app.llm.registry import (
    ModelNotDownloaded,
    parse_model_spec,
    recommended,
    registry,
    resolve_model,
)


def test_registry_entries_are_complete():
    entries = registry()
    assert recommended().name == "qwen3-4b"
    assert "tiny" in entries
    for entry in entries.values():
        assert entry.file.endswith(".gguf")
        assert bool(entry.repo) != bool(entry.package), entry.name
        assert entry.train, f"{entry.name} needs a training checkpoint for finetuning"


def test_hf_spec():
    source = parse_model_spec(
        "hf:unsloth/Qwen3-4B-Instruct-2507-GGUF/Qwen3-4B-Instruct-2507-Q4_K_M.gguf")
    assert source.repo == "unsloth/Qwen3-4B-Instruct-2507-GGUF"
    assert source.file == "Qwen3-4B-Instruct-2507-Q4_K_M.gguf"
    with pytest.raises(ModelError, match=r"hf:OWNER/REPO/FILE\.gguf"):
        parse_model_spec("hf:just-a-repo")


def test_path_spec(tmp_path):
    assert parse_model_spec(str(tmp_path / "m.gguf")).path == tmp_path / "m.gguf"


def test_unknown_name_lists_choices():
    with pytest.raises(ModelError, match=r"unknown model 'llama-9000'.*qwen3-4b"):
        parse_model_spec("llama-9000")


def test_remote_model_not_downloaded_tells_how(home):
    with pytest.raises(ModelNotDownloaded, match="deskmate models pull qwen3-4b"):
        resolve_model("qwen3-4b")


def test_tiny_comes_from_its_package(home):
    path = resolve_model("tiny")
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.exists()


def test_tiny_pull_verifies_the_installed_package(home):
    from deskmate.app.llm.download import pull

    assert pull("tiny") == resolve_model("tiny")


def test_verify_checks_sha256(tiny_model_path):
    from deskmate.app.llm.download import verify

    verify(tiny_model_path, registry()["tiny"].sha256)
    with pytest.raises(ModelError, match="sha256"):
        verify(tiny_model_path, "0" * 64)


def test_open_model_without_a_name():
    with pytest.raises(NoModelConfigured, match="models pull qwen3-4b"):
        open_model(Config())


def test_openai_backend_needs_no_local_file():
    model = open_model(Config(model=ModelConfig(backend="openai")))
    try:
        assert model.info.backend == "openai"
    finally:
        model.close()
