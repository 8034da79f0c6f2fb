import re

# Use per month is a reading less the one before it: November's 22634 - 22117 = 517 is the
# most (December's 503 next). The highest reading is December's; a use put against the
# reading before it would say October.
USE = 517
MONTH = 11
MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
FULL = ["january", "february", "march", "april", "may", "june", "july", "august",
        "september", "october", "november", "december"]
# A month's name or abbreviation, 2025-11 or 11/2025 (not a reading's date, 2025-11-30).
NAMES = re.compile(r"\b(" + "|".join(FULL + MONTHS + ["sept"]) + r")\b"
                   r"|\b2025[-/.](\d{1,2})\b(?![-/.]\d)|(?<![\d/.-])(\d{1,2})[-/.]2025\b",
                   re.IGNORECASE)
USED = re.compile(rf"(?<![\d.,]){USE}(?!\d|[.,]\d)")


def _months(text):
    """(start, end, month) of each month a text names ("may" only capitalised, being a word
    too)."""
    found = []
    for match in NAMES.finditer(text):
        if match[1]:
            if match[1].lower() == "may" and not match[1].startswith("May"):
                continue
            month = MONTHS.index(match[1].lower()[:3]) + 1
        else:
            month = int(match[2] or match[3])
        found.append((match.start(), match.end(), month))
    return found


def verify(workspace, answer):
    """Half for 517 (kWh) in the answer; half for November as the month: the month named
    nearest the first 517 (by the gap between them, the earlier one on a tie), or without a
    517, the one month the answer names."""
    use = USED.search(answer)
    months = _months(answer)
    if use and months:
        month = min((max(start - use.end(), use.start() - end), start, month)
                    for start, end, month in months)[2]
        month_ok = month == MONTH
    else:
        month_ok = {month for _, _, month in months} == {MONTH}
    return 0.5 * (use is not None) + 0.5 * month_ok
