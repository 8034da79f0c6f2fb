import re

# Of those at Helix Labs now, Imran Shah started first (January 2017, Tomasz Nowak that
# September); Ruth Alvarez started in 2015 but left in 2022, Leo Park is at Orbit Foods.
PEOPLE = ["imran", "tomasz", "grace", "ana", "ruth", "leo"]
ANSWER = "imran"
SINCE = re.compile(r"\b(jan(uary)?\.?(\s+of)?\s*2017|2017[-/.]0?1|0?1[-/.]2017)\b",
                   re.IGNORECASE)


def _named_first(answer):
    """The person the answer names first (by first or full name)."""
    text = answer.lower()
    found = [(m.start(), name) for name in PEOPLE for m in re.finditer(rf"\b{name}\b", text)]
    return min(found)[1] if found else None


def verify(workspace, answer):
    """Half for Imran Shah as the person the answer names first; half for January 2017 (as
    words or 2017-01)."""
    return 0.5 * (_named_first(answer) == ANSWER) + 0.5 * (SINCE.search(answer) is not None)
