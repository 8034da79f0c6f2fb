from helpers import memory_graph


def verify(workspace, answer):
    entities, _ = memory_graph(workspace)
    ada = entities.get("Ada Lovelace")
    if ada is None:
        return 0.0
    notes = " ".join(ada.get("observations", [])).lower()
    return (
        1 + float(ada.get("entityType", "").lower() == "person") + float("algorithm" in notes)
    ) / 3
