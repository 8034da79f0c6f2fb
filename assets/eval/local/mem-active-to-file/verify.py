def verify(workspace, answer):
    path = workspace / "active.txt"
    if not path.exists():
        return 0.0
    names = {line.strip() for line in path.read_text().splitlines() if line.strip()}
    want, wrong = {"Borealis", "Driftwood"}, {"Cinder", "Ember", "Noor"}
    return len(names & want) / len(want) * float(not names & wrong)
