from helpers import memory_graph


def verify(workspace, answer):
    entities, _ = memory_graph(workspace)
    checks = ["Apollo" not in entities, "Zephyr" in entities, "Marta" in entities]
    return sum(checks) / len(checks)
