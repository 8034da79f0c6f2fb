import csv
import io
import re
import tomllib
from datetime import date, timedelta
from pathlib import Path

# Due = lent + 21 days, + 42 when renewed; 2024 is a leap year (29 February). Wrong:
# Middlemarch (2024-02-16, due 02-15), Beloved (03-19, due 03-18: right only without
# 29 February) and Circe (04-22 is 42 days, but it was not renewed: due 04-01). Slips:
# Kindred "fixed" to 03-13 and Beloved kept (no leap day); Piranesi and Dune "fixed" to
# 21 days (the renewal missed).
WRONG_BOOKS = ("middlemarch", "beloved", "circe")
RIGHT_BOOKS = ("the left hand of darkness", "piranesi", "kindred", "dune", "station eleven")


def _setup_rows():
    task = tomllib.loads((Path(__file__).parent / "task.toml").read_text())
    return list(csv.reader(io.StringIO(task["setup"]["files"]["loans.csv"].strip())))


def _expected():
    rows = _setup_rows()
    out = [rows[0]]
    for member, title, lent, _, renewed in rows[1:]:
        days = 42 if renewed == "yes" else 21
        due = (date.fromisoformat(lent) + timedelta(days=days)).isoformat()
        out.append([member, title, lent, due, renewed])
    return out


def _rows(path):
    if not path.is_file():
        return []
    text = path.read_text()
    return [[cell.strip() for cell in row] for row in csv.reader(io.StringIO(text.strip()))
            if any(cell.strip() for cell in row)]


def verify(workspace, answer):
    """0.6 times the share of the file's rows (header and eight loans, in order) that are
    exactly as they should be (the three due dates corrected, all else unchanged; nothing
    if the row count differs); 0.4 for an answer that names Middlemarch, Beloved and Circe
    and none of the books whose due date was right."""
    rows, expected = _rows(workspace / "loans.csv"), _expected()
    file_score = (sum(a == b for a, b in zip(rows, expected, strict=True)) / len(expected)
                  if len(rows) == len(expected) else 0.0)
    text = answer.lower()
    named = all(re.search(rf"\b{book}\b", text) for book in WRONG_BOOKS)
    extra = any(re.search(rf"\b{book}\b", text) for book in RIGHT_BOOKS)
    return 0.6 * file_score + 0.4 * (named and not extra)
