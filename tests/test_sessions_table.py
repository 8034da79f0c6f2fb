"""F2's title column: as wide as the terminal allows, a longer title ending in "…"; the
real app under run_test() at two terminal sizes (140 and 220 columns), resized while the
screen is shown."""

from __future__ import annotations

from test_ui_support import ask, make_app, ready, scripted, turn_done, wait_for
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey

from deskmate.app.ui.sessions_table import TITLE_MIN, fitted_widths

LONG = "Which rivers cross the capital of France, and where do they meet the sea?"


def test_fitted_widths():
    rows = [("id", "2026-12-02 01:00", LONG, "tiny", "1", "▲")]
    # updated 16, model 5 ("model"), turns 5, extra 8 ("👍/match"), a cell of padding
    # each side of five columns: 44 cells go to the other columns.
    assert fitted_widths(100, rows) == (56, 8)
    assert fitted_widths(70, rows) == (26, 8)
    assert fitted_widths(200, rows) == (len(LONG), 8)  # no wider than the longest title
    assert fitted_widths(50, rows) == (TITLE_MIN, 8)
    hit = [("id", "2026-12-02 01:00", "t", "tiny", "1", "x" * 90)]  # a search snippet
    assert fitted_widths(200, hit)[1] == 40


def row_text(table: DataTable, y: int) -> str:
    return "".join(segment.text for segment in table.render_line(y))


async def test_titles_use_the_width_the_terminal_has(home):
    app = make_app(scripted("The Seine."))
    async with app.run_test(size=(140, 30)) as pilot:
        await ready(app, pilot)
        await ask(app, pilot, LONG)
        await turn_done(app, pilot)
        await pilot.press("f2")
        table = app.screen.query_one("#sessions-table", DataTable)
        await wait_for(pilot, lambda: table.row_count == 1, what="the session")
        await pilot.pause()
        narrow = row_text(table, 1)  # row 0 is the header
        assert "…" in narrow and LONG[:30] in narrow and LONG not in narrow, narrow
        width = table.columns[ColumnKey("title")].width
        assert TITLE_MIN < width < len(LONG)  # the room there is, not a fixed 26
        await pilot.resize_terminal(220, 40)
        await wait_for(pilot, lambda: LONG in row_text(table, 1), 10, "the whole title",
                       context=lambda: row_text(table, 1))
        assert "…" not in row_text(table, 1)
        assert str(table.get_row_at(0)[1]) == LONG  # the cell keeps the whole title
