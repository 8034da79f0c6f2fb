"""GGUF header checks on the real model and on damaged copies of it."""

from __future__ import annotations

import pytest

from deskmate.app.llm.gguf_file import GGUFError, inspect_gguf


def test_real_model(tiny_model_path):
    info = inspect_gguf(tiny_model_path)
    assert info.architecture == "llama"
    assert info.file_type == "model"
    assert info.context_length == 8192
    assert "<|im_start|>" in info.chat_template
    assert info.tensor_count > 100


def test_truncated_file(tiny_model_path, tmp_path):
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(tiny_model_path.read_bytes()[:50_000_000])
    with pytest.raises(GGUFError, match="truncated") as err:
        inspect_gguf(cut)
    assert str(cut) in str(err.value)


def test_header_cut_short(tiny_model_path, tmp_path):
    cut = tmp_path / "head.gguf"
    with tiny_model_path.open("rb") as f:
        cut.write_bytes(f.read(3000))
    with pytest.raises(GGUFError, match="damaged or truncated"):
        inspect_gguf(cut)


@pytest.mark.parametrize("content", [b"", b"<html>404 Not Found</html>", b"PK\x03\x04zip"])
def test_not_gguf(tmp_path, content):
    path = tmp_path / "model.gguf"
    path.write_bytes(content)
    with pytest.raises(GGUFError, match="not a GGUF model file"):
        inspect_gguf(path)


def test_missing_and_folder(tmp_path):
    with pytest.raises(GGUFError, match="not found"):
        inspect_gguf(tmp_path / "nope.gguf")
    with pytest.raises(GGUFError, match="is a folder"):
        inspect_gguf(tmp_path)
