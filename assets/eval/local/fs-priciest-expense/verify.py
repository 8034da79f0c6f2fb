import re


def verify(workspace, answer):
    text = answer.lower()
    total = bool(re.search(r"1,?014\.74", text))
    return (float("hotel" in text) + float(total)) / 2
