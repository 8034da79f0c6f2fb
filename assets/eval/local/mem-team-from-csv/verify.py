import re

from helpers import people_in_memory


def verify(workspace, answer):
    """Two thirds for the people in the graph with their roles, a third for 3 in the
    answer."""
    stored = people_in_memory(workspace, {"Nadia Khan": "designer",
                                          "Oskar Lind": "backend engineer",
                                          "Rita Gomes": "product manager"})
    said = re.findall(r"\d+|three", answer.lower())
    return (2 * stored + (bool(said) and said[0] in ("3", "three"))) / 3
