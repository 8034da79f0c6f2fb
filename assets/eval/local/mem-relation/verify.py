from helpers import memory_graph


def verify(workspace, answer):
    entities, relations = memory_graph(workspace)
    checks = ["Alice" in entities, "Bob" in entities, ("Alice", "manages", "Bob") in relations]
    return sum(checks) / len(checks)
