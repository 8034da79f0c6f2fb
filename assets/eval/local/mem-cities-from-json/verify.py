from helpers import memory_graph


def verify(workspace, answer):
    entities, relations = memory_graph(workspace)
    want = [("Aiko", "works_in", "Osaka"), ("Bruno", "works_in", "Porto"),
            ("Chiara", "works_in", "Osaka")]
    named = all(n in entities for n in ("Aiko", "Bruno", "Chiara", "Osaka", "Porto"))
    return (float(named) + sum(r in relations for r in want) / len(want)) / 2
