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
        "Nadia Haddad": "engineering manager",
        "Owen Price": "site reliability engineer",
        "Sofia Marin": "product designer",
    }
    score = 0.0
    for name, title in team.items():
        entity = entities.get(name)
        if entity is not None:
            notes = " ".join(entity.get("observations", [])).lower()
            score += 0.5 + 0.5 * float(title in notes)
    return score / len(team)
