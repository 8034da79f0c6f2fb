# Next watering = last watering + interval: Moth orchid 14 March, Monstera, Snake plant
# (2 weeks) and Basil 15 March, Fiddle-leaf fig 16 March. Not due then: Calathea (13
# March, the day before), Pothos (17th, the day after), Golden barrel cactus (20th), and
# the Peace lily is no longer mine. Slips: the first or last day left out (Moth orchid,
# Fiddle-leaf fig), weeks read as days (Snake plant out), the Peace lily kept, a day off.
DUE = ["Basil", "Fiddle-leaf fig", "Monstera", "Moth orchid", "Snake plant"]


def _names(text):
    """The names the file lists, a line each (bullets, numbering and quotes aside),
    lowercased with one space between words and "-" as in "fiddle-leaf"."""
    names = []
    for line in text.splitlines():
        name = line.strip().lstrip("-*•").strip()
        if name[:1].isdigit():
            name = name.lstrip("0123456789").lstrip(".)").strip()
        name = " ".join(name.strip("\"'`").split()).lower().replace("fiddle leaf", "fiddle-leaf")
        if name:
            names.append(name)
    return names


def verify(workspace, answer):
    """Three quarters for for-ines.txt naming exactly the five plants due from 14 to 16
    March, each once; a quarter more for their alphabetical order."""
    path = workspace / "for-ines.txt"
    names = _names(path.read_text()) if path.is_file() else []
    expected = [name.lower() for name in DUE]
    listed = sorted(names) == expected
    return 0.75 * listed + 0.25 * (listed and names == expected)
