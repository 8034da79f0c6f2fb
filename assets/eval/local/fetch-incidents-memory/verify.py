from helpers import memory_graph

OPEN = {"311": "slow checkout in eu", "312": "payment webhook retries"}


def verify(workspace, answer):
    """Per open incident: half for an entity whose name holds its id, half more if that
    entity's observations hold its title; nothing if a resolved one (305, 309) is stored."""
    entities, _ = memory_graph(workspace)
    if any(i in name for name in entities for i in ("305", "309")):
        return 0.0
    score = 0.0
    for number, title in OPEN.items():
        entity = next((e for name, e in entities.items() if number in name), None)
        if entity is not None:
            notes = " ".join(entity.get("observations", [])).lower()
            score += 0.5 + 0.5 * (title in notes)
    return score / len(OPEN)
