import re

from helpers import json_object

# Confirmed registrations (7: the cancelled and the waitlisted ones out) and the three
# speakers, Ruth Levin counted once though she is on both lists: 9 people. By size: S Hannah;
# M Noor, Ruth, Chen; L Jakub, Samuel, Lea; XL Diego; XXL Marcus (Kwame cancelled); XS
# nobody (Emily cancelled), but XS is on the form: 0.
SHIRTS = {"XS": 0, "S": 1, "M": 3, "L": 3, "XL": 1, "XXL": 1}
TOTAL = 9
# Slips: Ruth counted twice, or Aiko (waitlist) counted (10); every registration (12); no
# speakers (7); both Ruth twice and the waitlist (11).
WRONG = {10, 11, 12, 7}
WORDS = {"seven": 7, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}


def _counts(data):
    """{size: count} with the keys uppercased; None when a value is not a whole number."""
    out = {}
    for key, value in data.items():
        if isinstance(value, bool):
            return None
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value)
        if not isinstance(value, int | float) or value != int(value):
            return None
        out[str(key).strip().upper()] = int(value)
    return out


def verify(workspace, answer):
    """Three quarters for shirts.json: the share of the six sizes with the right count (XS's
    0 included), nothing when it has a key that is no size on the form; a quarter for 9 (or
    "nine") in the answer and no total a slip gives."""
    counts = _counts(json_object(workspace / "shirts.json") or {}) or {}
    file_score = 0.0
    if counts and set(counts) <= set(SHIRTS):
        file_score = sum(counts.get(size) == n for size, n in SHIRTS.items()) / len(SHIRTS)
    text = answer.lower()
    numbers = {int(n) for n in re.findall(r"(?<![\w.,])\d+(?!\w|[.,]\d)", text)}
    numbers |= {n for word, n in WORDS.items() if re.search(rf"\b{word}\b", text)}
    told = TOTAL in numbers and not numbers & WRONG
    return 0.75 * file_score + 0.25 * told
