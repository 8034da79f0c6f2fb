"""The deskmate command as a user runs it: real subprocesses, real model, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import tomllib

import pytest
from conftest import deskmate

from deskmate.app import __version__


def test_importing_the_cli_loads_nothing_heavy():
    code = ("import sys, deskmate.app.cli; heavy = [m for m in ('llama_cpp', 'torch', 'unsloth', "
            "'textual', 'huggingface_hub', 'numpy') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_help_is_fast_and_lists_every_command(home):
    start = time.perf_counter()
    result = deskmate("--help", home=home)
    elapsed = time.perf_counter() - start
    assert result.returncode == 0
    for command in ("chat", "run", "models", "mcp", "tools", "sandbox", "sessions", "eval",
                    "finetune", "config"):
        assert f"  {command}" in result.stdout
    assert elapsed < 3.0  # includes interpreter start; the import itself is ~0.1 s


def test_version(home):
    result = deskmate("--version", home=home)
    assert result.returncode == 0 and __version__ in result.stdout


def test_chat_without_a_model_explains_how_to_get_one(home):
    result = deskmate("chat", "hello", home=home)
    assert result.returncode == 1
    assert "no model is configured" in result.stderr
    assert "models pull" in result.stderr and "tiny" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_config_exits_3_with_file_and_line(home):
    (home).mkdir(parents=True)
    (home / "config.toml").write_text('[model]\nname = "tiny"\nthreads = "many"\n')
    result = deskmate("chat", "hello", home=home)
    assert result.returncode == 3
    assert f"{home / 'config.toml'}:3" in result.stderr and "model.threads" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_model_file_is_a_clear_error(home, tmp_path):
    bogus = tmp_path / "download.gguf"
    bogus.write_text("<html>rate limited</html>")
    result = deskmate("chat", "--model", str(bogus), "hello", home=home)
    assert result.returncode == 1
    assert "not a GGUF model file" in result.stderr and str(bogus) in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_model_name(home):
    result = deskmate("chat", "-m", "gpt-17", "hello", home=home)
    assert result.returncode == 1 and "unknown model 'gpt-17'" in result.stderr


def test_usage_error_exits_2(home):
    assert deskmate("chat", home=home).returncode == 2
    assert deskmate("chat", "--max-tokens", "zero", "hi", home=home).returncode == 2


@pytest.mark.slow
def test_chat_streams_an_answer(home, tiny_model_path, tiny_model):
    question = "What is the capital of France?"
    result = deskmate("chat", "-m", str(tiny_model_path), "--temperature", "0",
                      "--max-tokens", "20", question, home=home)
    assert result.returncode == 0, result.stderr
    expected = tiny_model._llm.create_chat_completion(
        messages=[{"role": "user", "content": question}], max_tokens=20, temperature=0.0)
    assert result.stdout.strip() == expected["choices"][0]["message"]["content"].strip()


@pytest.mark.slow
def test_chat_json_from_stdin(home, tiny_model_path):
    result = deskmate("chat", "-m", str(tiny_model_path), "--json", "-t", "0",
                      "--max-tokens", "8", "-", home=home, stdin="Say hello.")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["finish_reason"] in ("stop", "length") and out["text"]
    assert out["usage"]["completion_tokens"] >= 1 and out["usage"]["prompt_tokens"] > 5


@pytest.mark.slow
def test_models_use_then_chat_from_config(home, tiny_model_path):
    result = deskmate("models", "use", str(tiny_model_path), home=home)
    assert result.returncode == 0, result.stderr
    config = tomllib.loads((home / "config.toml").read_text())
    assert config["model"]["name"] == str(tiny_model_path.resolve())
    result = deskmate("chat", "--json", "-t", "0", "--max-tokens", "4", "hi", home=home)
    assert result.returncode == 0, result.stderr
    listing = json.loads(deskmate("models", "list", "--json", home=home).stdout)
    assert any(row["active"] for row in listing)


def test_models_use_rejects_a_bad_file_and_keeps_config(home, tmp_path):
    home.mkdir(parents=True)
    (home / "config.toml").write_text('[model]\nname = "tiny"\n')
    bogus = tmp_path / "x.gguf"
    bogus.write_bytes(b"GGUF\x03\x00\x00\x00")
    result = deskmate("models", "use", str(bogus), home=home)
    assert result.returncode == 1 and "truncated" in result.stderr
    assert (home / "config.toml").read_text() == '[model]\nname = "tiny"\n'


def test_models_list_shows_the_registry(home):
    result = deskmate("models", home=home)
    assert result.returncode == 0
    assert "qwen3-4b" in result.stdout and "tiny" in result.stdout
    rows = json.loads(deskmate("models", "list", "--json", home=home).stdout)
    rec = next(r for r in rows if r["recommended"])
    assert rec["name"] == "qwen3-4b" and rec["train"]


def test_models_info(home, tiny_model_path):
    result = deskmate("models", "info", "--json", str(tiny_model_path), home=home)
    assert result.returncode == 0
    assert json.loads(result.stdout)["architecture"] == "llama"


def test_config_init_and_show(home):
    assert deskmate("config", "init", home=home).returncode == 0
    text = (home / "config.toml").read_text()
    assert text.startswith("# deskmate configuration")
    again = deskmate("config", "init", home=home)
    assert again.returncode == 1 and (home / "config.toml").read_text() == text
    shown = json.loads(deskmate("config", "show", home=home).stdout)
    assert shown["model"]["context"] == 8192
