import re


def verify(workspace, answer):
    """Half for Lena named, half for 4 observations."""
    said = answer.lower()
    numbers = re.findall(r"\d+|four", said)
    return (("lena" in said) + ("4" in numbers or "four" in numbers)) / 2
