from helpers import memory_graph


def verify(workspace, answer):
    entities, _ = memory_graph(workspace)
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
