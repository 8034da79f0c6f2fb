"""``TableScreen``: a screen around one ``DataTable`` whose rows are keyed (an id, a name).

The sessions, MCP servers and models screens list things this way; the cursor follows
its row's key when the rows are redrawn.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from textual.screen import Screen
from textual.widgets import DataTable

from deskmate.app.ui.workers import ReportsWorkers


class TableScreen(ReportsWorkers, Screen):
    TABLE = "DataTable"  # the selector of the keyed table, where a screen has several
    @property
    def selected(self) -> str | None:
        """The key of the row under the cursor; None when the table is empty."""
        table = self.query_one(self.TABLE, DataTable)
        if table.row_count == 0:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    def refill(self, rows: Iterable[tuple[str, Sequence[Any]]]) -> None:
        """Replace the rows (key, cells); the cursor stays on its key if it is still listed."""
        table = self.query_one(self.TABLE, DataTable)
        keep = self.selected
        table.clear()
        for key, cells in rows:
            table.add_row(*cells, key=key)
        if keep is not None and keep in table.rows:
            table.move_cursor(row=table.get_row_index(keep))
