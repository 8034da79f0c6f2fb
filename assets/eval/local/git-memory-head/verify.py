from helpers import git, memory_graph


def verify(workspace, answer):
    entities, _ = memory_graph(workspace)
    repo = entities.get("repo")
    if repo is None:
        return 0.0
    head = git(workspace, "rev-parse", "HEAD")
    return 0.5 + 0.5 * float(any(head in o for o in repo.get("observations", [])))
