from helpers import memory_graph


def verify(workspace, answer):
    entities, _ = memory_graph(workspace)
    entity = entities.get("service")
    if entity is None:
        return 0.0
    notes = " ".join(entity.get("observations", []))
    found = [p for p in ("app.py", "routes.py", "db/models.py") if p in notes]
    wrong = "README.md" in notes or "site.css" in notes
    return (len(found) / 3) * (0.5 if wrong else 1.0)
