from helpers import memory_graph, people_in_memory


def verify(workspace, answer):
    """A third each: Keiko Tanaka in the graph with her role (half for the entity alone),
    her entity of type person, the entities already there kept."""
    entities, _ = memory_graph(workspace)
    keiko = entities.get("Keiko Tanaka", {})
    checks = [
        people_in_memory(workspace, {"Keiko Tanaka": "data analyst"}),
        str(keiko.get("entityType", "")).strip().lower() == "person",
        "Lucas Ferreira" in entities and "Growth" in entities,
    ]
    return sum(checks) / len(checks)
