import re


def verify(workspace, answer):
    """1.0 when oslo-average.txt holds one number, 4.2 (21 / 5); a unit after it is fine."""
    path = workspace / "oslo-average.txt"
    if not path.is_file():
        return 0.0
    numbers = re.findall(r"-?\d+(?:\.\d+)?", path.read_text())
    return float(len(numbers) == 1 and abs(float(numbers[0]) - 4.2) < 1e-6)
