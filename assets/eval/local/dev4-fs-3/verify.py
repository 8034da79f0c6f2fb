import re

from helpers import named_nearest

# Postponed matches are not played. Blue Herons and Red Lions both have 6 points (two wins,
# a loss); goal difference puts Blue Herons (8-4, +4) above Red Lions (6-5, +1). Night Owls
# have played nothing yet: a row of zeros, last. Slips: the postponed matches counted as
# 0-0 draws (Red Lions top on 7, Night Owls 2 points), Night Owls left out, the tie left in
# the file's order.
TABLE = [("blue herons", 3, 6, 4), ("red lions", 3, 6, 1), ("golden foxes", 3, 4, -1),
         ("green otters", 3, 1, -4), ("night owls", 0, 0, 0)]
TEAMS = [row[0] for row in TABLE]
NUMBER = re.compile(r"[+-]?\d+")


def _rows(path):
    """[(team, played, points, goal_difference)] of the file's rows, header skipped; None if
    the file is missing or a row is not a team and three whole numbers."""
    if not path.is_file():
        return None
    rows = []
    for line in path.read_text().splitlines():
        cells = [cell.strip().strip("\"'") for cell in line.split(",")]
        if not any(cells) or cells[0].lower() == "team":
            continue
        numbers = [cell.replace("\u2212", "-") for cell in cells[1:]]
        if len(numbers) != 3 or not all(NUMBER.fullmatch(n) for n in numbers):
            return None
        rows.append((" ".join(cells[0].lower().split()), *map(int, numbers)))
    return rows


def verify(workspace, answer):
    """Half for table.csv's rows: the share of the five teams with their row right (none if
    a team is listed twice or a team not in the league is); a quarter for the rows in
    table order; a quarter for Blue Herons named as top of the table."""
    rows = _rows(workspace / "table.csv") or []
    names = [row[0] for row in rows]
    valid = len(set(names)) == len(names) and set(names) <= set(TEAMS)
    right = sum(row in rows for row in TABLE) / len(TABLE) if valid else 0.0
    leader = named_nearest(answer, TEAMS, r"top|first|leads?|leading|leaders?|tops|head")
    return 0.5 * right + 0.25 * (rows == TABLE) + 0.25 * (leader == TEAMS[0])
