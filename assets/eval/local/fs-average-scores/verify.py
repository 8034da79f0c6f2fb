def verify(workspace, answer):
    path = workspace / "average.txt"
    return float(path.exists() and path.read_text().strip() == "76.8")  # 461 / 6, one decimal
