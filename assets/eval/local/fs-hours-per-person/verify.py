import re


def verify(workspace, answer):
    """A quarter for each person's total on their line of hours.txt (Ines 11.5, Tomas
    10.5, Wen 10.5), a quarter for Ines named as the one who worked the most."""
    path = workspace / "hours.txt"
    text = path.read_text().lower() if path.exists() else ""

    def total(name, value):
        line = next((line for line in text.splitlines() if name in line), "")
        return value in [float(n) for n in re.findall(r"\d+(?:\.\d+)?", line)]

    said = answer.lower()
    most = "ines" in said and not re.search(r"(tomas|wen)\W+(\w+\W+){0,3}(most|more)", said)
    return (total("ines", 11.5) + total("tomas", 10.5) + total("wen", 10.5) + most) / 4
