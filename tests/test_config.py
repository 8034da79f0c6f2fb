"""Config: defaults, validation with file/line/key, atomic and careful writing."""

from __future__ import annotations

import dataclasses
import tomllib

import pytest

from deskmate.app import paths
from deskmate.app.config import (
    Config,
    ConfigError,
    config_from_dict,
    documented_template,
    load_config,
    update_config,
)


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_missing_file_means_defaults(home):
    assert load_config() == Config()


def test_valid_file_is_read(home):
    write(paths.config_file(), '[model]\nname = "tiny"\ncontext = 4096\nadapter_scale = 1\n')
    cfg = load_config()
    assert cfg.model.name == "tiny"
    assert cfg.model.context == 4096
    assert cfg.model.adapter_scale == 1.0 and isinstance(cfg.model.adapter_scale, float)
    assert cfg.openai == Config().openai


def test_invalid_toml_names_file_and_line(home):
    path = write(paths.config_file(), '[model]\nname = "tiny"\ncontext = = 3\n')
    with pytest.raises(ConfigError) as err:
        load_config()
    assert err.value.path == path
    assert err.value.line == 3
    assert str(path) in str(err.value) and ":3" in str(err.value)


def test_unknown_key_names_line_and_suggests(home):
    write(paths.config_file(), '[model]\nname = "tiny"\n\n# comment\ncontxt = 4096\n')
    with pytest.raises(ConfigError) as err:
        load_config()
    assert err.value.line == 5
    assert err.value.key == "model.contxt"
    assert "did you mean 'context'" in str(err.value)


def test_unknown_section(home):
    write(paths.config_file(), '[modle]\nname = "x"\n')
    with pytest.raises(ConfigError) as err:
        load_config()
    assert err.value.line == 1 and "did you mean 'model'" in str(err.value)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("context = true", "expected int, got bool"),
        ('context = "big"', "expected int, got str"),
        ("context = 10", "at least 256"),
        ('backend = "ollama"', "must be one of"),
        ("temperature = -1", "at least 0"),
    ],
)
def test_bad_values_name_key_and_line(home, line, message):
    write(paths.config_file(), f'[model]\nname = "tiny"\n{line}\n')
    with pytest.raises(ConfigError) as err:
        load_config()
    assert err.value.line == 3
    assert err.value.key.startswith("model.")
    assert message in str(err.value)


def test_a_key_binding_cannot_be_empty(home):
    write(paths.config_file(), '[keys]\nhelp = "f9"\nsession_search = " "\n')
    with pytest.raises(ConfigError) as err:
        load_config()
    assert (err.value.line, err.value.key) == (3, "keys.session_search")
    assert "needs a key" in str(err.value)


def test_dotted_keys_are_located(home):
    write(paths.config_file(), 'model.name = "tiny"\nmodel.threads = "four"\n')
    with pytest.raises(ConfigError) as err:
        load_config()
    assert err.value.line == 2 and err.value.key == "model.threads"


def test_section_must_be_a_table(home):
    write(paths.config_file(), 'model = "tiny"\n')
    with pytest.raises(ConfigError, match="must be a table"):
        load_config()


def test_update_writes_atomically_and_keeps_backup(home):
    path = write(paths.config_file(), '[model]\nname = "tiny"\n')
    update_config(lambda d: d["model"].update(context=4096))
    assert tomllib.loads(path.read_text())["model"] == {"name": "tiny", "context": 4096}
    assert path.with_name("config.toml.bak").read_text() == '[model]\nname = "tiny"\n'
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_update_never_clobbers_a_file_that_does_not_parse(home):
    broken = '[model\nname = "my half-edited file"\n'
    path = write(paths.config_file(), broken)
    with pytest.raises(ConfigError):
        update_config(lambda d: d.setdefault("model", {}).update(name="x"))
    assert path.read_text() == broken


def test_update_refuses_to_write_an_invalid_config(home):
    path = write(paths.config_file(), '[model]\nname = "tiny"\n')
    with pytest.raises(ConfigError):
        update_config(lambda d: d["model"].update(context="huge"))
    assert path.read_text() == '[model]\nname = "tiny"\n'


def test_update_of_an_unreadable_config_is_a_config_error(home, tmp_path):
    path = paths.config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"[model]\nname = \"caf\xe9\"\n")  # Latin-1, not UTF-8
    with pytest.raises(ConfigError, match="cannot read the file"):
        update_config(lambda d: d.setdefault("model", {}).update(name="tiny"))
    assert path.read_bytes() == b"[model]\nname = \"caf\xe9\"\n"
    with pytest.raises(ConfigError, match="is a folder"):
        update_config(lambda d: d.setdefault("model", {}).update(name="tiny"), tmp_path)


def test_cli_config_writes_report_an_unreadable_file_without_a_traceback(tmp_path):
    from tests.conftest import deskmate

    config = tmp_path / "config.toml"  # where DESKMATE_HOME keeps it
    config.write_bytes(b"\xff\xfe not text")
    for args in (("models", "use", "tiny"), ("mcp", "add", "t", "--", "true")):
        result = deskmate(*args, home=tmp_path)
        assert result.returncode == 3, result.stderr
        assert "cannot read the file" in result.stderr and "Traceback" not in result.stderr
    assert config.read_bytes() == b"\xff\xfe not text"


def test_update_creates_the_file(home):
    update_config(lambda d: d.setdefault("model", {}).update(name="tiny"))
    assert load_config().model.name == "tiny"


def test_paths_follow_overrides(tmp_path, monkeypatch):
    monkeypatch.setenv("DESKMATE_HOME", str(tmp_path))
    monkeypatch.delenv("DESKMATE_CONFIG", raising=False)
    assert paths.config_file() == tmp_path / "config.toml"
    assert paths.data_dir() == tmp_path / "data"
    assert paths.cache_dir() == tmp_path / "cache"
    monkeypatch.setenv("DESKMATE_CONFIG", str(tmp_path / "other.toml"))
    assert paths.config_file() == tmp_path / "other.toml"
    monkeypatch.delenv("DESKMATE_HOME")
    assert "deskmate" in str(paths.data_dir())


def test_documented_template_is_complete_and_equals_defaults(tmp_path):
    """The shipped, commented config documents every key, with the real defaults."""
    text = documented_template()
    data = tomllib.loads(text)
    assert config_from_dict(data, tmp_path / "config.toml", text) == Config()
    for section in dataclasses.fields(Config):
        fields = dataclasses.fields(section.default_factory())
        names = {f.name for f in fields if "parse" not in f.metadata}
        assert set(data[section.name]) == names, section.name
        for f in fields:  # tables of tables are documented by commented examples
            if "parse" in f.metadata:
                assert f"[{section.name}.{f.name}." in text, f.name


def test_mcp_servers_are_validated_with_line_and_key(home):
    write(paths.config_file(), '[mcp.servers.git]\ncommand = "uvx"\nargs = ["mcp-server-git"]\n'
          '\n[mcp.servers.web]\nurl = "ftp://nope"\n')
    with pytest.raises(ConfigError) as err:
        load_config()
    assert err.value.line == 6 and err.value.key == "mcp.servers.web.url"
    assert "not an http(s) URL" in str(err.value)


def test_mcp_servers_are_read(home):
    write(paths.config_file(), '[mcp.servers.git]\ncommand = "uvx"\nargs = ["mcp-server-git"]\n'
          'env = { A = "${HOME}" }\n[mcp.servers.web]\nurl = "https://x.test/mcp"\n')
    servers = load_config().mcp.servers
    assert servers["git"].args == ("mcp-server-git",) and servers["git"].env == {"A": "${HOME}"}
    assert servers["web"].transport == "http"


def test_mcp_server_unknown_key(home):
    write(paths.config_file(), '[mcp.servers.git]\ncommand = "uvx"\nargz = ["x"]\n')
    with pytest.raises(ConfigError) as err:
        load_config()
    assert err.value.line == 3 and err.value.key == "mcp.servers.git.argz"
