from helpers import convert


def verify(workspace, answer):
    return float(convert("18:45", "Asia/Tokyo", "UTC") in answer)
