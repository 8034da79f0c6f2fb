import json
import subprocess


def graph(workspace):
    """Entities and relations of the memory server's JSONL file."""
    entities, relations = {}, []
    path = workspace / ".memory.jsonl"
    if not path.exists():
        return entities, relations
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        if item.get("type") == "entity":
            entities[item["name"]] = item
        elif item.get("type") == "relation":
            relations.append((item["from"], item["relationType"], item["to"]))
    return entities, relations


def git(workspace, *args):
    return subprocess.run(
        ["git", *args], cwd=workspace, capture_output=True, text=True, check=True
    ).stdout.strip()


def verify(workspace, answer):
    entities, _ = graph(workspace)
    repo = entities.get("repo")
    if repo is None:
        return 0.0
    head = git(workspace, "rev-parse", "HEAD")
    return 0.5 + 0.5 * float(any(head in o for o in repo.get("observations", [])))
