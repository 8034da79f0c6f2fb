from helpers import memory_graph

KEPT = ["works at Northwind as a buyer", "allergic to peanuts", "birthday: 14 March"]
PRIYA = ["coffee order: double espresso", "works at Northwind as an accountant"]


def verify(workspace, answer):
    """Nothing unless Jonah Price is still there without his coffee order (a new note that
    he gave up coffee is fine); then a third each: his other three observations kept, his
    works_at relation kept, Priya Nair's notes untouched (she keeps her coffee order)."""
    entities, relations = memory_graph(workspace)
    jonah = entities.get("Jonah Price")
    if jonah is None:
        return 0.0
    notes = [str(note) for note in jonah.get("observations", [])]
    if any(word in note.lower() for note in notes for word in ("flat white", "oat milk")):
        return 0.0
    priya = entities.get("Priya Nair", {}).get("observations", [])
    checks = [
        all(note in notes for note in KEPT),
        ("Jonah Price", "works_at", "Northwind") in relations,
        sorted(priya) == PRIYA,
    ]
    return sum(checks) / len(checks)
