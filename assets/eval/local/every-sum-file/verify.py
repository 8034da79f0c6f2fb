def verify(workspace, answer):
    path = workspace / "sum.txt"
    return float(path.exists() and path.read_text().strip().replace(",", "") == "99255")
