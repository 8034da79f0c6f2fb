import re

# Usage: January 412, February 497, March 439, April 311, May 258, June 238. Put against
# the later reading's month, February's 497 reads as March's.
MONTH = re.compile(r"\b(february|feb|2025-02|02/2025)\b")
USAGE = 497.0


def verify(workspace, answer):
    """Half for naming February, half for its usage, 497 (kWh)."""
    text = answer.lower()
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)  # a thousands separator
    numbers = {float(n) for n in re.findall(r"(?<![\d-])\d+(?:\.\d+)?(?![\d-])", text)}
    checks = [MONTH.search(text) is not None, USAGE in numbers]
    return sum(checks) / len(checks)
