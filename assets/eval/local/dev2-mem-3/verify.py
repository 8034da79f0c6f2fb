from helpers import memory_graph

LEAVERS = ("Marco Bianchi", "Omar Haddad")
STAYERS = ("Priya Nair", "Sofia Lind", "Yusuf Demir", "Hannah Cole", "Lena Park", "Atlas")
KEPT = {("Sofia Lind", "reports_to", "Priya Nair"), ("Lena Park", "reports_to", "Sofia Lind"),
        ("Yusuf Demir", "works_on", "Atlas")}
NEW = {("Yusuf Demir", "reports_to", "Priya Nair"), ("Hannah Cole", "reports_to", "Priya Nair")}


def _kind(relation_type):
    return "_".join(str(relation_type).strip().lower().replace("-", " ").split())


def verify(workspace, answer):
    """A sixth each: each leaver's entity gone, no relation left to or from a leaver, the
    other entities and their relations kept (Sofia's and Lena's managers unchanged), Yusuf
    and Hannah (Marco's reports) reporting to Priya and nobody else. "reports to" and
    "Reports-To" are reports_to."""
    entities, relations = memory_graph(workspace)
    relations = {(a, _kind(kind), b) for a, kind, b in relations}
    managers = {}
    for a, kind, b in relations:
        if kind == "reports_to":
            managers.setdefault(a, set()).add(b)
    checks = [name not in entities for name in LEAVERS]
    checks += [
        not any(a in LEAVERS or b in LEAVERS for a, _, b in relations),
        all(name in entities for name in STAYERS) and relations >= KEPT
        and managers.get("Lena Park") == {"Sofia Lind"}
        and managers.get("Sofia Lind") == {"Priya Nair"},
    ]
    checks += [managers.get(a) == {b} for a, _, b in sorted(NEW)]
    return sum(checks) / len(checks)
