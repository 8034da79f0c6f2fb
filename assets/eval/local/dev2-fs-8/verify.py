import csv
import re

HEADER = ["invoice", "client", "issued", "amount"]
ROWS = [["2025-014", "Harbor Books", "2025-03-03", "420.00"],
        ["2025-015", "Lindqvist AB", "2025-03-07", "1250.00"],
        ["2025-016", "Cafe Aurora", "2025-03-11", "86.40"],
        ["2025-017", "Harbor Books", "2025-03-18", "310.00"],
        ["2025-018", "Nordlys Studio", "2025-03-24", "975.50"],
        ["2025-019", "Cafe Aurora", "2025-03-28", "64.80"],
        ["2025-020", "Lindqvist AB", "2025-04-01", "1250.00"]]
CHANGED = ("2025-015", "2025-016", "2025-017", "2025-019")
FOUR = r"(?<![\w.,/-])(4|four)(?![\w/-])(?![.,]\d)"  # not inside a date or a number


def verify(workspace, answer):
    """One check per invoice whose date was in another format (its row as it should be),
    one for the header and the other rows as they were (no row added or lost), one for 4
    (or "four") in the answer, standing alone rather than inside a date or number; the
    mean."""
    path = workspace / "invoices.csv"
    rows = []
    if path.is_file():
        lines = [line for line in path.read_text().splitlines() if line.strip()]
        rows = [[cell.strip() for cell in row] for row in csv.reader(lines)]
    found = {row[0]: row for row in rows[1:] if row}
    checks = [found.get(row[0]) == row for row in ROWS if row[0] in CHANGED]
    checks.append(bool(rows) and rows[0] == HEADER and len(rows) == len(ROWS) + 1
                  and all(found.get(row[0]) == row for row in ROWS if row[0] not in CHANGED))
    checks.append(re.search(FOUR, answer.lower()) is not None)
    return sum(checks) / len(checks)
