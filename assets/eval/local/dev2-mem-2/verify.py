import re

# Dana manages Eli and Farah; Eli manages Gus and Hana; Hana manages Ivo. (Dana only
# mentors Nia, who reports to Max.)
REPORTS = ["Eli", "Farah", "Gus", "Hana", "Ivo"]


def _names(path):
    """The names the file lists, a line each (a bullet or number before one is fine)."""
    names = []
    for line in path.read_text().splitlines():
        name = re.sub(r"^\s*(?:[-*•]|\d+[.)])?\s*", "", line).strip().strip("*`\"'")
        if name:
            names.append(name.capitalize())
    return names


def verify(workspace, answer):
    """Half for dana-org.txt listing exactly the five people under Dana, a quarter more
    for their alphabetical order; a quarter for 5 in the answer."""
    path = workspace / "dana-org.txt"
    names = _names(path) if path.is_file() else []
    listed = sorted(names) == REPORTS
    count = re.search(r"\b(5|five)\b", answer.lower()) is not None
    return 0.5 * listed + 0.25 * (listed and names == REPORTS) + 0.25 * count
