from helpers import memory_graph

# Saturday's confirmed volunteers and their jobs (Mei Lin waters on Sunday, not Saturday);
# Ravi Kumar cancelled his Saturday shift, the others work on Sunday only.
SATURDAY = {"Aisha Rahman": "water", "Mei Lin": "seed sort", "Jonas Weber": "gate"}
OTHERS = ("Ravi Kumar", "Tom Becker", "Carla Souza", "Priya Das")


def verify(workspace, answer):
    """A quarter per Saturday volunteer (half of it for an entity of type person by that
    name, half for an observation naming their Saturday job), a quarter for nobody else on
    the rota in the graph."""
    entities, _ = memory_graph(workspace)
    score = 0.0
    for name, job in SATURDAY.items():
        entity = entities.get(name)
        if entity is not None and str(entity.get("entityType", "")).strip().lower() == "person":
            notes = " ".join(str(note) for note in entity.get("observations", [])).lower()
            score += 0.5 + 0.5 * (job in " ".join(notes.replace("-", " ").split()))
    score += not any(name in entities for name in OTHERS)
    return score / (len(SATURDAY) + 1)
