import re

# Invited: Amara Osei, Lukas Brandt, Sofia Reyes, Hiro Tanaka, Ben Carter, Ola Nordmann;
# Sofia declined. At the table: the five others and the host, 6. Their allergies: peanuts
# (Amara), sesame (Hiro), kiwi (Ola); Lukas is vegetarian, Ben has none. Slips: 5 (the host
# or Ola left out), 7 (Sofia counted), shellfish (Sofia's) or gluten (Nadia's, not invited).
COUNT = 6
WRONG_COUNT = 7  # 5 may stand for the guests besides the host ("you and 5 guests")
WORDS = {"five": 5, "six": 6, "seven": 7}
ALLERGIES = (r"peanuts?", r"sesame", r"kiwis?")
NOT_THEIRS = (r"shellfish", r"gluten")


def _counts(text):
    """The counts the answer gives: whole numbers below 100 that stand alone (not part of
    a date, a time or a decimal), and number words."""
    numbers = {int(n) for n in re.findall(r"(?<![\w./:-])(\d{1,2})(?![\w/:-]|[.,]\d)", text)}
    return numbers | {n for word, n in WORDS.items() if re.search(rf"\b{word}\b", text)}


def verify(workspace, answer):
    """Half for 6 at the table (and not 7; a 5 beside the 6 counts the guests); half for
    peanuts, sesame and kiwi named, and neither shellfish nor gluten."""
    text = answer.lower()
    counts = _counts(text)
    allergies = (all(re.search(rf"\b{a}\b", text) for a in ALLERGIES)
                 and not any(re.search(rf"\b{a}\b", text) for a in NOT_THEIRS))
    return 0.5 * (COUNT in counts and WRONG_COUNT not in counts) + 0.5 * allergies
