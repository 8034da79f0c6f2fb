import re

# Neither zone has summer time: Bangalore (Asia/Kolkata) is UTC+5:30, São Paulo
# (America/Sao_Paulo) UTC-3. The API's first ERROR, 17:42:15, is 12:12:15 UTC; the
# gateway's, 09:20:15, is 12:20:15 UTC: the API was first, by 8 minutes. Slips: the clock
# times compared as they are (the gateway, 8 h 22 min = 502 min earlier), India taken as
# UTC+5 (the gateway by 22) or +6 (the API by 38), São Paulo as UTC-2 (the gateway by 52)
# or -4 (the API by 68), the INFO line that mentions ERROR flags taken for an error (the
# gateway, by 6 min 45 s).
MINUTES = 8
WRONG = {22, 38, 52, 68, 502, 6, 7, 482}
SIDES = {
    "api": r"api|bangalore|bengaluru|india|kolkata|ist",
    "gateway": r"(?:payment\s+)?gateway|s[ãa]o\s+paulo|brazil|brt",
}
NAME = "|".join(f"(?P<{side}>\\b(?:{pattern})\\b)" for side, pattern in SIDES.items())


def _side(match):
    return next(side for side in SIDES if match.group(side))


def _first(text):
    """The side the answer says logged first: the other one of "before / earlier than /
    ahead of X", else X of "after X", else the side named nearest a first/earlier."""
    name = rf"(?:the\s+|its\s+|their\s+)?(?:{NAME})"
    found = re.search(rf"\b(?:before|earlier\s+than|ahead\s+of|preceded)\s+{name}", text)
    if found:
        return "gateway" if _side(found) == "api" else "api"
    found = re.search(rf"\bafter\s+{name}", text)
    if found:
        return _side(found)
    word = re.search(r"\b(first|earlier|earliest|before)\b", text)
    if word is None:
        return None
    names = [(abs(m.start() - word.start()), _side(m)) for m in re.finditer(NAME, text)]
    return min(names)[1] if names else None


def _numbers(text):
    """Whole numbers that stand alone (not part of a clock time, a log's figure like 5000
    ms, or a decimal), and "eight"."""
    found = {int(n) for n in re.findall(r"(?<![\w.:,-])(\d{1,3})(?![\w:]|[.,]\d)", text)}
    return found | ({8} if re.search(r"\beight\b", text) else set())


def verify(workspace, answer):
    """Half for the API (Bangalore) as the side that logged an ERROR first; half for 8
    minutes in the answer and no number of minutes a slip gives."""
    text = answer.lower()
    numbers = _numbers(text)
    return 0.5 * (_first(text) == "api") + 0.5 * (MINUTES in numbers and not numbers & WRONG)
