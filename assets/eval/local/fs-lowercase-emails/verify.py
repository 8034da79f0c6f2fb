import re

LOWER = ["maria@example.org", "jonas.berg@example.org", "lee@example.org",
         "priya@example.org", "omar@example.org"]


def verify(workspace, answer):
    """Half for the file's addresses all in lower case in their order, half for 2 changed
    lines in the answer."""
    path = workspace / "contacts.txt"
    lines = [line.strip() for line in path.read_text().splitlines() if line.strip()] \
        if path.exists() else []
    said = re.findall(r"\d+|two", answer.lower())
    return ((lines == LOWER) + (bool(said) and said[0] in ("2", "two"))) / 2
