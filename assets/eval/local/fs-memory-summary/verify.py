import json


def graph(workspace):
    """Entities and relations of the memory server's JSONL file."""
    entities, relations = {}, []
    path = workspace / ".memory.jsonl"
    if not path.exists():
        return entities, relations
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        if item.get("type") == "entity":
            entities[item["name"]] = item
        elif item.get("type") == "relation":
            relations.append((item["from"], item["relationType"], item["to"]))
    return entities, relations


def verify(workspace, answer):
    entities, _ = graph(workspace)
    entity = entities.get("service")
    if entity is None:
        return 0.0
    notes = " ".join(entity.get("observations", []))
    found = [p for p in ("app.py", "routes.py", "db/models.py") if p in notes]
    wrong = "README.md" in notes or "site.css" in notes
    return (len(found) / 3) * (0.5 if wrong else 1.0)
