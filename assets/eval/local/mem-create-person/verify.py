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
    ada = entities.get("Ada Lovelace")
    if ada is None:
        return 0.0
    notes = " ".join(ada.get("observations", [])).lower()
    return (
        1 + float(ada.get("entityType", "").lower() == "person") + float("algorithm" in notes)
    ) / 3
