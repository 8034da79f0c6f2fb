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
    team = {
        "Ingrid Berg": "backend developer",
        "Kofi Mensah": "data analyst",
        "Lucia Romero": "tech lead",
    }
    score = 0.0
    for name, role in team.items():
        entity = entities.get(name)
        if entity is not None:
            notes = " ".join(entity.get("observations", [])).lower()
            score += 0.5 + 0.5 * float(role in notes)
    return score / len(team)
