from helpers import memory_graph


def verify(workspace, answer):
    entities, _ = memory_graph(workspace)
    config = entities.get("config")
    if config is None:
        return 0.0
    notes = " ".join(config.get("observations", [])).lower()
    return 0.5 + 0.5 * float("marmalade" in notes)
