"""A CSV file's text unpacked by a loop as if it were rows gets the loop that splits
each line (tools/sandbox/worker/row_hints.unpack_lines), through the code-mode loop with the
real MCP filesystem server: a tool's text iterates by line."""

from __future__ import annotations

from conftest import run_scripted

from deskmate.app.agent import events as ev


def test_a_loop_over_a_files_text_is_shown_how_to_split_its_lines(file_hub):
    hub, workdir = file_hub
    launches = workdir / "launches.csv"
    launches.write_text("city,local_time,timezone\nNew York,07:00,America/New_York\n"
                        "Tokyo,18:00,Asia/Tokyo\n")
    cell = (f"launches = filesystem.read_text_file(path='{launches}')\n"
            "order = [city for city, local_time, timezone in launches]")
    events = run_scripted(hub, [f"```python\n{cell}\n```", "Final answer: -",
                                "Final answer: -"], f"Order the cities of {launches}.")
    output = next(e.content for e in events if isinstance(e, ev.Observation))
    assert "ValueError: too many values to unpack (expected 3)" in output
    assert ("Hint: launches is text, so the loop takes its lines, each one str, not 3 "
            "values; split each line on ',': for line in launches.splitlines()[1:]: city, "
            "local_time, timezone = line.split(',') (the [1:] leaves out its header line)"
            ) in output
