import re


def verify(workspace, answer):
    """A third each: March's total (996.5) and April's (1103.25) in totals.txt, and April
    named as the dearer month (March is not said to cost more)."""
    path = workspace / "totals.txt"
    text = path.read_text().lower() if path.exists() else ""

    def total(month, value):
        line = next((line for line in text.splitlines() if month in line), "")
        numbers = [float(n) for n in re.findall(r"\d+(?:\.\d+)?", line.replace(",", ""))]
        return value in numbers

    said = answer.lower()
    april = "april" in said and not re.search(r"march\W+(\w+\W+){0,3}(more|higher|most)", said)
    return (total("march", 996.5) + total("april", 1103.25) + april) / 3
