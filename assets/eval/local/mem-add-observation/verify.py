from helpers import memory_graph


def verify(workspace, answer):
    entities, _ = memory_graph(workspace)
    marta = entities.get("Marta", {})
    notes = [o.lower() for o in marta.get("observations", [])]
    return (float(any("tea" in o for o in notes)) + float("works as a translator" in notes)) / 2
