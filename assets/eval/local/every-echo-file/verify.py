def verify(workspace, answer):
    path = workspace / "echo.txt"
    return float(path.exists() and path.read_text().strip() == "Echo: ping-7731")
