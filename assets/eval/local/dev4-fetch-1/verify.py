import re

# Kettles of the recalled models with a serial in range, both ends included: KP2-10400 (the
# first), KP2-10899 (the last) and KP25-3120. Not affected: KP2-10399 and KP2-10900 (just
# outside), KP2-10655 (green dot: repaired), KP15-10512 (a KP-150, though its number is in
# the KP-200 range) and KP3-3250 (a KP-300, its number in the KP-250 range). 3 kettles.
# Slips: 4 (the repaired one, or a wrong model, kept); 1 or 2 (an end of a range left out).
RECALLED = {"KP2-10400", "KP2-10899", "KP25-3120"}
COUNT = 3
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
SERIAL = re.compile(r"\bKP\d+-\d+\b")


def _count(answer):
    """The first count from 1 to 6 the answer gives (not part of a serial number or a
    model), as a digit or a word."""
    text = answer.lower()
    found = [(m.start(), int(m[1])) for m in
             re.finditer(r"(?<![\w.,:/-])([1-6])(?![\w:/-])(?![.,]\d)", text)]
    found += [(m.start(), n) for word, n in WORDS.items()
              for m in re.finditer(rf"\b{word}\b", text)]
    return min(found)[1] if found else None


def verify(workspace, answer):
    """Two thirds for recalled.txt listing exactly the three affected serial numbers, each
    once (in any order); a third for 3 as the count the answer gives first."""
    path = workspace / "recalled.txt"
    serials = SERIAL.findall(path.read_text().upper()) if path.is_file() else []
    listed = sorted(serials) == sorted(RECALLED)
    return (2 * listed + (_count(answer) == COUNT)) / 3
