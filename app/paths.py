"""Where deskmate keeps its files.

Default locations follow platformdirs (XDG on Linux). Two environment variables
override them, for tests and power users:

- ``DESKMATE_CONFIG``: the path of the config file itself.
- ``DESKMATE_HOME``: one folder holding ``config.toml``, ``data/`` and ``cache/``.

Nothing here creates a directory: callers create what they write into, so merely
importing or asking for help never touches the disk.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "deskmate"


def home_override() -> Path | None:
    value = os.environ.get("DESKMATE_HOME")
    return Path(value).expanduser() if value else None


def config_file() -> Path:
    if value := os.environ.get("DESKMATE_CONFIG"):
        return Path(value).expanduser()
    if home := home_override():
        return home / "config.toml"
    return Path(platformdirs.user_config_dir(APP_NAME)) / "config.toml"


def data_dir() -> Path:
    """SQLite database, adapters, KV states."""
    if home := home_override():
        return home / "data"
    return Path(platformdirs.user_data_dir(APP_NAME))


def embeddings_cache() -> Path:
    """Tool-description embeddings of the hybrid search (recomputed when missing)."""
    return cache_dir() / "embeddings"


def cache_dir() -> Path:
    """Downloads that can be fetched again."""
    if home := home_override():
        return home / "cache"
    return Path(platformdirs.user_cache_dir(APP_NAME))


def hf_cache_dir() -> Path | None:
    """Hugging Face downloads: the shared HF cache unless DESKMATE_HOME isolates us.

    Sharing the standard cache means a model the user already has from other tools is
    not downloaded twice.
    """
    if home := home_override():
        return home / "cache" / "huggingface"
    return None


def kv_state_dir() -> Path:
    return data_dir() / "kv"
