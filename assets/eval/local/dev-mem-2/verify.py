import re


def verify(workspace, answer):
    """1.0 when pages-read.txt holds one number, 994 (412 + 310 + 272)."""
    path = workspace / "pages-read.txt"
    if not path.is_file():
        return 0.0
    numbers = re.findall(r"\d+(?:\.\d+)?", path.read_text().replace(",", ""))
    return float(len(numbers) == 1 and float(numbers[0]) == 994)
