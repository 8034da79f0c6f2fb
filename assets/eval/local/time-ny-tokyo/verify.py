from helpers import convert


def verify(workspace, answer):
    return float(convert("09:30", "America/New_York", "Asia/Tokyo") in answer)
