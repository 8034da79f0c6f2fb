def verify(workspace, answer):
    path = workspace / "errors.txt"
    count = path.exists() and path.read_text().strip() == "3"
    return (float(count) + float("disk quota exceeded" in answer.lower())) / 2
