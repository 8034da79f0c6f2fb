import csv
import io
import re
import tomllib
from pathlib import Path

# Owen Price's company, Smith, Jones & Co, holds an unquoted comma: his row has five fields.
# Tom Becker's "Baker, Lane & Sons" has a comma too but is quoted already, so his row is
# fine; counting commas flags both. Fixed: "Smith, Jones & Co" in double quotes.
BROKEN = "Owen Price"
ROWS = [
    ["name", "company", "email", "phone"],
    ["Priya Shah", "Northwind Tiles", "priya@northwind.example", "+44 20 7946 0311"],
    ["Tom Becker", "Baker, Lane & Sons", "tom@bakerlane.example", "+44 161 496 0452"],
    ["Grace Liu", "Harbour Print", "grace@harbourprint.example", "+44 117 496 0780"],
    ["Owen Price", "Smith, Jones & Co", "owen@smithjones.example", "+44 29 2018 0977"],
    ["Lena Vogt", "Kiln House", "lena@kilnhouse.example", "+49 30 901820"],
    ["Marco Bianchi", "Forno Rosso Ltd", "marco@fornorosso.example", "+39 02 4455 1200"],
]


def _original_lines():
    task = tomllib.loads((Path(__file__).parent / "task.toml").read_text())
    return task["setup"]["files"]["contacts.csv"].splitlines()


def _first_named(answer):
    """Of Owen Price and Tom Becker, the one the answer names first (by first name)."""
    text = answer.lower()
    found = [(m.start(), name) for name in ("Owen Price", "Tom Becker")
             for m in re.finditer(rf"\b{name.split()[0].lower()}\b", text)]
    return min(found)[1] if found else None


def verify(workspace, answer):
    """A third each: contacts.csv parses (as CSV) to the seven rows of four fields, Owen
    Price's company whole; every other line of the file as it was; Owen Price, not Tom
    Becker, as the person the answer names first."""
    path = workspace / "contacts.csv"
    text = path.read_text() if path.is_file() else ""
    rows = [row for row in csv.reader(io.StringIO(text)) if row]
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    others = [line for line in _original_lines() if not line.startswith(BROKEN)]
    checks = [
        rows == ROWS,
        [line for line in lines if not line.startswith(BROKEN)] == others,
        _first_named(answer) == BROKEN,
    ]
    return sum(checks) / len(checks)
