def verify(workspace, answer):
    path = workspace / "VERSION"
    return float(path.exists() and path.read_text().strip().lstrip("v") == "3.4.1")
