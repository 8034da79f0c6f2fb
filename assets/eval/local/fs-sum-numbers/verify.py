def verify(workspace, answer):
    path = workspace / "total.txt"
    return float(path.exists() and path.read_text().strip() == "137")
