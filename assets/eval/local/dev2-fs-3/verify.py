import re

from helpers import named_nearest

# 0.2 * coursework + 0.3 * midterm + 0.5 * exam; the plain mean would put Emeka first.
FINAL = {"amara": 81.0, "bilal": 82.5, "chen": 79.3, "dorota": 75.6, "emeka": 82.2}
TOP = "bilal"


def _marks(path):
    """{student: mark} of the file's rows (a header or a row without a number is skipped);
    None when a student has two rows or the file is missing."""
    if not path.is_file():
        return None
    marks = {}
    for line in path.read_text().splitlines():
        cells = [cell.strip().strip("\"'") for cell in line.split(",")]
        if len(cells) < 2 or not re.fullmatch(r"-?\d+(?:\.\d+)?", cells[-1]):
            continue
        name = cells[0].lower()
        if name in marks:
            return None
        marks[name] = float(cells[-1])
    return marks


def verify(workspace, answer):
    """Three quarters for the file: the share of students whose final mark is right
    (within 0.05), nothing if it lists anyone else; a quarter for naming Bilal."""
    marks = _marks(workspace / "final-marks.csv")
    file_score = 0.0
    if marks and set(marks) <= set(FINAL):
        file_score = sum(abs(marks.get(name, -1.0) - mark) < 0.05
                         for name, mark in FINAL.items()) / len(FINAL)
    return 0.75 * file_score + 0.25 * (named_nearest(answer, FINAL, "highest|top|best") == TOP)
