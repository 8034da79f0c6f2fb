"""Atomic writes never leave a half-written user file."""

from __future__ import annotations

import pytest

from deskmate.app.files import atomic_write, atomic_writer


def test_a_failure_midway_keeps_the_old_file(tmp_path):
    target = tmp_path / "export.jsonl"
    target.write_text("old\n")
    target.chmod(0o600)
    with pytest.raises(RuntimeError), atomic_writer(target) as f:
        f.write("half of the new ")
        raise RuntimeError("disk full")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["export.jsonl"]  # no temp file left
    atomic_write(target, "new\n")
    assert target.read_text() == "new\n"
    assert target.stat().st_mode & 0o777 == 0o600  # the replaced file's mode is kept
