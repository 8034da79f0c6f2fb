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
    marta = entities.get("Marta", {})
    notes = [o.lower() for o in marta.get("observations", [])]
    return (float(any("tea" in o for o in notes)) + float("works as a translator" in notes)) / 2
