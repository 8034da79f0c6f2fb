def verify(workspace, answer):
    path = workspace / "roster.md"
    if not path.exists():
        return 0.0
    text = path.read_text()
    if "Orbit" in text:  # a project is not a person
        return 0.0
    lines = [line.strip().lower() for line in text.splitlines() if line.strip()]
    want = ["- greta: engineer", "- malik: product manager", "- yusuf: designer"]
    present = sum(w in lines for w in want) / len(want)
    ordered = [line for line in lines if line in want]
    return (2 * present + float(ordered == want)) / 3
