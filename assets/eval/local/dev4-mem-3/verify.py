import re

# "speaks" Portuguese: Ana, Bruno, Carla, Elena, Felipe. On 8 July 2025: Bruno is on leave
# (7 to 11 July); Carla's leave ended on 7 July and Elena's starts on 9 July, so both are
# in; Felipe left in May. David is only learning Portuguese (is_learning, not speaks).
# Three people. Slips: Bruno, David or Felipe kept in (4); Carla or Elena left out (2).
NAMES = ["Ana Ribeiro", "Carla Mendes", "Elena Fischer"]
OTHERS = ["Bruno Costa", "David Okoro", "Felipe Santos", "Greta Holm"]
COUNT = 3
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}


def _names(path):
    """The person each line names (by full or first name), in order; None for a line that
    names two."""
    found = []
    for line in path.read_text().lower().splitlines():
        named = [name for name in NAMES + OTHERS
                 if re.search(rf"\b{name.split()[0].lower()}\b", line)]
        if len(named) > 1:
            return None
        found += named
    return found


def _count(answer):
    """The first count from 1 to 7 the answer gives, as a digit or a word."""
    text = answer.lower()
    found = [(m.start(), int(m[1])) for m in
             re.finditer(r"(?<![\w.,:/-])([1-7])(?![\w:/-])(?![.,]\d)", text)]
    found += [(m.start(), n) for word, n in WORDS.items()
              for m in re.finditer(rf"\b{word}\b", text)]
    return min(found)[1] if found else None


def verify(workspace, answer):
    """Half for lisbon-call.txt naming exactly Ana Ribeiro, Carla Mendes and Elena Fischer;
    a quarter more for that (alphabetical) order; a quarter for 3 as the count the answer
    gives first."""
    path = workspace / "lisbon-call.txt"
    names = _names(path) if path.is_file() else None
    listed = names is not None and sorted(names) == NAMES
    return 0.5 * listed + 0.25 * (listed and names == NAMES) + 0.25 * (_count(answer) == COUNT)
