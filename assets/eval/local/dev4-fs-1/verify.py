import re

# Pace = duration / distance. Runs of 10 km or more: 6 Sep 10.0 km in 48:50 = 293 s/km =
# 4:53 (the fastest), 13 Sep 5:00, 20 Sep 5:01.4 (1:46:00 is h:mm:ss), 4 Oct 4:57, 18 Oct
# 5:00. Slips: 4:57 (10.0 km left out, "more than 10"), 4:48 (the 9.5 km run) or 4:52 (the
# 8 km one), 1:58 or 2:00 (a ride counted as a run), 0:05 (1:46:00 read as minutes).
PACE = (4, 53)
WRONG = {(4, 57), (4, 48), (4, 52), (1, 58), (2, 0), (0, 5)}
MONTHS = r"sep(?:t(?:ember)?)?\.?"
DATE = re.compile(
    rf"2025[-/.]0?9[-/.]0?6(?!\d)|(?<!\d)0?6(?:st|nd|rd|th)?(?:\s+of)?\s+{MONTHS}"
    rf"|\b{MONTHS}\s+0?6(?:st|nd|rd|th)?\b|(?<![\d/.])0?6[/.]0?9[/.](?:20)?25(?!\d)"
    r"|(?<![\d/.])0?9/0?6/(?:20)?25(?!\d)",
    re.IGNORECASE)
# 4:53, 4'53", 4 min 53 s, 4 minutes 53 seconds (a duration's h:mm:ss is not a pace)
PACES = re.compile(r"(?<![\d:])(\d{1,2})\s*(?::|'|’|′|\s*min(?:utes?)?\.?,?\s*(?:and\s+)?)"
                   r"\s*(\d{2})(?!:\d)(?!\d)", re.IGNORECASE)


def _paces(text):
    return {(int(m), int(s)) for m, s in PACES.findall(text) if int(s) < 60}


def verify(workspace, answer):
    """Half for the date, 6 September 2025 (2025-09-06, Sep 6, 06/09/2025...); half for
    the pace 4:53 per km (4'53", 4 min 53 s) with no pace a slip gives."""
    paces = _paces(answer)
    pace_ok = PACE in paces and not paces & WRONG
    return 0.5 * (DATE.search(answer) is not None) + 0.5 * pace_ok
