from helpers import memory_graph


def verify(workspace, answer):
    entities, _ = memory_graph(workspace)
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
