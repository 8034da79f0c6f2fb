def verify(workspace, answer):
    path = workspace / "TODO.md"
    if not path.exists():
        return 0.0
    items = {
        line.strip()[2:].strip().lower()
        for line in path.read_text().splitlines()
        if line.strip().startswith(("- ", "* "))
    }
    wanted = {"renew passport", "book dentist", "call grandma"}
    return len(items & wanted) / 3 * float(not items & {"pay rent", "water plants"})
