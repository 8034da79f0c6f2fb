import re

# The everything server's weather: New York 33 °F (0.6 °C), cloudy; Chicago 36 °F (2.2 °C),
# light rain / drizzle; Los Angeles 73 °F (22.8 °C), sunny. Go ahead: the fun run (0.6 >= 0),
# the rooftop cinema, the street food market (2.2 >= 2, rain is fine) and the farmers'
# market: 4. Slips: °F compared with °C (the sculpture park tour and beach volleyball too, 6),
# the drizzle not taken for rain (jazz on the lawn too, 5), both (7).
GO = ["harbour 5k fun run", "rooftop cinema", "street food market", "farmers market"]
COUNT = 4
WRONG = {5, 6, 7}
WORDS = {"four": 4, "five": 5, "six": 6, "seven": 7}


def _names(text):
    """The event names the file lists, a line each (bullets, numbering, quotes and a
    trailing note after " - " or " (" aside), lowercased, apostrophes dropped."""
    names = []
    for line in text.splitlines():
        name = line.strip().lstrip("-*•").strip()
        name = re.sub(r"^\d+[.)]\s*", "", name)
        name = re.split(r"\s+[-–—(:]\s*|,", name, maxsplit=1)[0]
        name = " ".join(name.strip("\"`").split()).lower().replace("\u2019", "").replace("'", "")
        if name:
            names.append(name)
    return names


def _counts(text):
    """Whole numbers below 100 that stand alone (not a temperature, a time, a decimal or
    the 5 of "5K"), and number words."""
    numbers = {int(n) for n in re.findall(
        r"(?<![\w./:°-])(\d{1,2})(?![\w/:°-]|[.,]\d|\s*°|\s*(?:deg|degrees)\b)", text)}
    return numbers | {n for word, n in WORDS.items() if re.search(rf"\b{word}\b", text)}


def verify(workspace, answer):
    """Half for go-ahead.txt naming exactly the four events that can go ahead (the header
    not one of them); a quarter for them in the order of events.csv; a quarter for 4 (or
    "four") in the answer and not 5, 6 or 7."""
    path = workspace / "go-ahead.txt"
    names = _names(path.read_text()) if path.is_file() else []
    listed = sorted(names) == sorted(GO)
    counts = _counts(answer.lower())
    return (0.5 * listed + 0.25 * (listed and names == GO)
            + 0.25 * (COUNT in counts and not counts & WRONG))
