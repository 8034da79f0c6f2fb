import re

EXPECTED = {"milk": True, "bread": False, "coffee": True, "eggs": True, "olive oil": False,
            "tomatoes": True}


def verify(workspace, answer):
    """One check per item (listed once, ticked as it should be: [x] or [X]) and one for
    the list otherwise kept (its title, the same items in the same order); the mean."""
    path = workspace / "shopping.md"
    if not path.is_file():
        return 0.0
    lines = [line.strip() for line in path.read_text().splitlines() if line.strip()]
    items = []
    for line in lines[1:]:
        found = re.fullmatch(r"[-*]\s*\[([ xX])\]\s*(.+)", line)
        items.append((found[2].strip().lower(), found[1] != " ") if found else (line, None))
    names = [name for name, _ in items]
    checks = [bool(lines) and lines[0] == "# Shopping" and names == list(EXPECTED)]
    checks += [names.count(name) == 1 and (name, ticked) in items
               for name, ticked in EXPECTED.items()]
    return sum(checks) / len(checks)
