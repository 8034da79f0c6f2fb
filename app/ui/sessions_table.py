"""F2's list of sessions: the title column takes the width the other columns leave.

A fixed title width cut every title at the same column however wide the terminal was.
Here the other columns keep their content's width (a search hit's snippet at most
``EXTRA_MAX``), the title gets the rest (at least ``TITLE_MIN``) and a longer title ends
in "…"; when the table is resized, the screen redraws its rows at the new width.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.message import Message
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey

TITLE_MIN = 26  # as before on a narrow terminal; the table scrolls sideways there
EXTRA_MAX = 40  # a search hit's snippet: the title is what a person looks for first

# (label, key); a row is the session's id, then these cells in this order.
COLUMNS = (("updated", "updated"), ("title", "title"), ("model", "model"),
           ("turns", "turns"), ("👍/match", "extra"))
Row = Sequence[str]  # id, updated, title, model, turns, rating-or-snippet


def fitted_widths(room: int, rows: Sequence[Row], padding: int = 1) -> tuple[int, int]:
    """The title's and the last column's widths in ``room`` cells, for ``rows``."""
    def widest(i: int) -> int:
        return max([cell_len(COLUMNS[i][0]), *(cell_len(r[i + 1]) for r in rows)])

    extra = min(widest(4), EXTRA_MAX)
    others = sum(widest(i) for i in (0, 2, 3)) + extra + 2 * padding * 5
    # No wider than the longest title: the space left over goes to the right, not
    # between the title and the model.
    return max(TITLE_MIN, min(room - others, widest(1))), extra


def cells(row: Row) -> list[Text]:
    """A row's cells; the title and snippet end in "…" when their column is narrower."""
    return [Text(c, no_wrap=True, overflow="ellipsis") for c in row[1:]]


class SessionsTable(DataTable):
    """The table; the screen gives it the rows (``fit``) and redraws them on ``Resized``."""

    class Resized(Message):
        """The table's width changed: its title column may fit another width."""

    def on_mount(self) -> None:
        for label, key in COLUMNS:
            self.add_column(label, key=key)
        for key, width in (("title", TITLE_MIN), ("extra", cell_len(COLUMNS[4][0]))):
            column = self.columns[ColumnKey(key)]
            column.auto_width, column.width = False, width

    def on_resize(self, _: events.Resize) -> None:
        self.post_message(self.Resized())

    def fit(self, rows: Sequence[Row]) -> bool:
        """Size the title and snippet columns for ``rows`` at the table's width; True
        when a width changed (the rows must be drawn again)."""
        room = self.content_size.width - self.styles.scrollbar_size_vertical
        title, extra = fitted_widths(room, rows, self.cell_padding)
        columns = self.columns
        changed = False
        for key, width in (("title", title), ("extra", extra)):
            column = columns[ColumnKey(key)]
            if column.width != width:
                column.width, changed = width, True
        return changed
