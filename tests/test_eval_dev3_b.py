"""Ten tasks of the `dev3` split (dev3-fs-5 … dev3-fetch-2): each verifier scores a correct
outcome 1.0, a plausible slip below 1.0 and an untouched workspace below 1.0, and accepts
the usual ways of writing a right answer."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from conftest import git_out, says, suite_helpers, tells_right_from_wrong, writes

from deskmate.finetune.eval.suite import load_suite

LOCAL = Path(__file__).resolve().parent.parent / "assets" / "eval" / "local"
SUITE = load_suite(LOCAL)
IDS = {"dev3-fs-5", "dev3-fs-6", "dev3-fs-7", "dev3-fs-8", "dev3-git-3", "dev3-git-4",
       "dev3-mem-3", "dev3-time-2", "dev3-fetch-1", "dev3-fetch-2"}

REORDER = "B-230\nA-104\nA-221\nB-112\nC-101\n"


def _translate(extra: dict[str, str], answer: str, ascii_only: bool = False,
               english: bool = False) -> Callable[[Path], str]:
    """de.json with ``extra`` added (or, with ``english``, en.json copied over it)."""
    def solve(workspace: Path) -> str:
        folder = workspace / "locales"
        data = json.loads((folder / ("en.json" if english else "de.json")).read_text())
        data.update(extra)
        (folder / "de.json").write_text(json.dumps(data, indent=2, ensure_ascii=ascii_only)
                                        + "\n")
        return answer
    return solve


def _makefile(answer: str, message: str | None = "Fix Makefile indentation",
              indent: str = "\t") -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        path = workspace / "Makefile"
        path.write_text(path.read_text().replace("    $(PYTHON) -m pytest --cov",
                                                 f"{indent}$(PYTHON) -m pytest --cov"))
        if message is not None:
            git_out(workspace, "commit", "-q", "-am", message)
        return answer
    return solve


TRACKED = [".gitignore", "README.md", "pyproject.toml", "src/harbor/__init__.py",
           "src/harbor/cli.py", "tests/test_cli.py"]
IGNORED = [".env", "build/lib/harbor/cli.py", "harbor-debug.log"]


def _manifest(paths: list[str], prefix: str = "",
              message: str = "Add manifest") -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        (workspace / "MANIFEST.txt").write_text("".join(f"{prefix}{p}\n" for p in paths))
        git_out(workspace, "add", "MANIFEST.txt")
        git_out(workspace, "commit", "-q", "-m", message)
        return "Committed."
    return solve


ALIASES = {"Sam Ortiz": "Samuel Ortiz", "Liz Moreau": "Elizabeth Moreau"}


def _merge(move_relations: bool = True, answer: str = "I deleted 2 entities.",
           relation_type: Callable[[str], str] = str) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        path = workspace / ".memory.jsonl"
        items = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        entities = {i["name"]: i for i in items if i["type"] == "entity"}
        relations = []
        for item in items:
            if item["type"] != "relation":
                continue
            ends = (item["from"], item["to"])
            if not move_relations and any(end in ALIASES for end in ends):
                continue
            new = (ALIASES.get(item["from"], item["from"]), relation_type(item["relationType"]),
                   ALIASES.get(item["to"], item["to"]))
            if new not in relations:
                relations.append(new)
        for short, full in ALIASES.items():
            notes = entities[full]["observations"]
            notes += [n for n in entities.pop(short)["observations"] if n not in notes]
        lines = [json.dumps(e) for e in entities.values()]
        lines += [json.dumps({"type": "relation", "from": a, "to": b, "relationType": kind})
                  for a, kind, b in relations]
        path.write_text("\n".join(lines) + "\n")
        return answer
    return solve


def _utc(hhmm: str, shift: int = 0) -> str:
    """HH:MM New York time today in UTC, ``shift`` hours off (a summer time missed)."""
    moment = datetime.strptime(suite_helpers().convert(hhmm, "America/New_York", "UTC"),
                               "%H:%M")
    return (moment + timedelta(hours=shift)).strftime("%H:%M")


def _window(text: Callable[[str, str], str], shift: int = 0) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        (workspace / "maintenance-utc.txt").write_text(
            text(_utc("22:30", shift), _utc("01:15", shift)))
        return "Written."
    return solve


def _rota(people: dict[str, str], kind: str = "person") -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        (workspace / ".memory.jsonl").write_text("".join(
            json.dumps({"type": "entity", "name": name, "entityType": kind,
                        "observations": [note]}) + "\n" for name, note in people.items()))
        return "Added them."
    return solve


SATURDAY = {"Aisha Rahman": "Saturday job: watering", "Mei Lin": "Saturday job: seed sorting",
            "Jonas Weber": "Saturday job: gate duty"}

# task id -> a correct outcome (changes the workspace, returns the answer)
SOLUTIONS: dict[str, Callable[[Path], str]] = {
    "dev3-fs-5": writes("reorder.txt", REORDER, "5 items need reordering."),
    "dev3-fs-6": says("February: you used 497 kWh."),
    "dev3-fs-7": _translate({"station.favourite": "Add to favourites"},
                            "The key station.favourite was missing."),
    "dev3-fs-8": says("17.6% of the requests ended in a server error."),
    "dev3-git-3": _makefile("The coverage target: its first recipe line was indented with "
                            "spaces instead of a tab."),
    "dev3-git-4": _manifest(sorted(TRACKED)),
    "dev3-mem-3": _merge(),
    "dev3-time-2": _window(lambda start, end: f"{start}-{end}\n"),
    "dev3-fetch-1": says("You paid €17.70 for the two stays."),
    "dev3-fetch-2": _rota(SATURDAY),
}

# task id -> a plausible wrong outcome (a slip a small model makes)
MISTAKES: dict[str, Callable[[Path], str]] = {
    "dev3-fs-5": writes("reorder.txt",  # the tie left in the file's order
                        "B-230\nA-104\nB-112\nA-221\nC-101\n", "5 items need reordering."),
    "dev3-fs-6": says("March: 497 kWh."),  # the usage put against the later reading
    "dev3-fs-7": _translate({"station.favourite": "Add to favourites"},  # en.json copied
                            "station.favourite was missing.", english=True),
    "dev3-fs-8": says("41.2%"),  # every line with 500/502/503 in it counted
    "dev3-git-3": _makefile("The coverage target.", message=None),  # fixed, not committed
    "dev3-git-4": _manifest(sorted(TRACKED + IGNORED)),  # the ignored files listed too
    "dev3-mem-3": _merge(move_relations=False),  # the short names' relations lost
    "dev3-time-2": _window(lambda start, end: f"{start}-{end}\n", shift=1),  # winter offset
    "dev3-fetch-1": says("You paid €18.90."),  # the weekend maximum not applied
    "dev3-fetch-2": _rota({**SATURDAY, "Ravi Kumar": "Saturday job: tool shed"}),  # cancelled
}

# task id -> another right outcome, written the way a user would also accept
VARIANTS: dict[str, Callable[[Path], str]] = {
    "dev3-fs-5": writes("reorder.txt", "- B-230 (short by 20)\n- A-104 (short by 18)\n"
                        "- A-221 (short by 6)\n- B-112 (short by 6)\n- C-101 (short by 4)",
                        "Five items are below their reorder level."),
    "dev3-fs-6": says("Feb 2025 was the highest, 497 kWh (18,646 to 19,143)."),
    "dev3-fs-7": _translate({"station.favourite": " Add to favourites"},
                            "Missing: `station.favourite`.", ascii_only=True),
    "dev3-fs-8": says("About 17,6 % (3 of 17 requests)."),
    "dev3-git-3": _makefile("`coverage`", message="Fix Makefile indentation."),
    "dev3-git-4": _manifest(sorted(TRACKED, key=str.lower), prefix="./"),
    "dev3-mem-3": _merge(answer="Two: Sam Ortiz and Liz Moreau (Kate Byrne was not there).",
                         relation_type=lambda kind: kind.replace("_", " ")),
    "dev3-time-2": _window(lambda start, end: f"Start: {start.lstrip('0')} UTC\n"
                           f"End: {end} UTC\n"),
    "dev3-fetch-1": says("Tuesday 9,70 € and Saturday 8,00 € (capped): 17,70 € in total."),
    "dev3-fetch-2": _rota({"Aisha Rahman": "waters the beds on Saturday",
                           "Mei Lin": "Saturday: seed-sorting",
                           "Jonas Weber": "on gate duty (Saturday)"}, kind="Person"),
}

# task id -> more wrong outcomes a loose check would take for right
MORE_MISTAKES: dict[str, Callable[[Path], str]] = {
    "dev3-fs-5": writes("reorder.txt",  # the discontinued items kept
                        "B-230\nA-104\nA-221\nB-017\nB-112\nC-101\nC-188\n", "7 items."),
    "dev3-fs-7": _translate({"station.favourite": "Add to favourites"},  # the wrong key named
                            "station.nearby was missing."),
    "dev3-fs-8": says("17.7%"),  # rounded twice
    "dev3-git-4": _manifest(sorted(TRACKED)[1:]),  # .gitignore left out
    "dev3-mem-3": _merge(answer="I deleted 3 entities."),  # Kate Byrne counted
    "dev3-time-2": _window(lambda start, end: f"{end}-{start}\n"),  # end first
    "dev3-fetch-1": says("17.70, or 15.90 if only whole hours count."),
    "dev3-fetch-2": _rota({**SATURDAY, "Mei Lin": "Saturday job: watering"}),  # Sunday's job
}


def test_the_ten_tasks_each_have_a_solution_and_a_slip():
    assert set(SOLUTIONS) == set(MISTAKES) == IDS
    assert set(SUITE.tasks) >= IDS
    assert set(VARIANTS) <= IDS and set(MORE_MISTAKES) <= IDS
    assert sum(len(SUITE.tasks[t].servers) > 1 for t in IDS) >= 5
    if "dev3" in SUITE.selections:
        assert set(SUITE.selections["dev3"]) >= IDS


@pytest.mark.parametrize("task_id", sorted(IDS))
def test_a_dev3_tasks_check_tells_right_from_wrong(task_id, tmp_path):
    tells_right_from_wrong(SUITE, task_id, SOLUTIONS[task_id], MISTAKES[task_id], tmp_path)


@pytest.mark.parametrize("task_id", sorted(VARIANTS))
def test_a_dev3_task_accepts_another_way_of_writing_it(task_id, tmp_path):
    tells_right_from_wrong(SUITE, task_id, VARIANTS[task_id], MISTAKES[task_id], tmp_path)


@pytest.mark.parametrize("task_id", sorted(MORE_MISTAKES))
def test_a_dev3_task_rejects_another_slip(task_id, tmp_path):
    tells_right_from_wrong(SUITE, task_id, SOLUTIONS[task_id], MORE_MISTAKES[task_id],
                           tmp_path)


def test_the_makefile_fails_where_the_prompt_says():
    makefile = SUITE.tasks["dev3-git-3"].files["Makefile"]
    assert makefile.splitlines()[11].startswith("    $(PYTHON) -m pytest --cov")
    assert "Makefile:12:" in SUITE.tasks["dev3-git-3"].prompt


def test_the_new_pages_say_what_the_fetch_tasks_expect():
    parking = (LOCAL / "site" / "dev3-parking.html").read_text()
    rota = (LOCAL / "site" / "dev3-rota.html").read_text()
    assert "<td>Monday to Friday</td><td>€2.50</td><td>€1.80</td><td>€14.00</td>" in parking
    assert ("<td>Saturday, Sunday and public holidays</td><td>€2.00</td><td>€1.20</td>"
            "<td>€8.00</td>") in parking
    for row in ("Aisha Rahman</td><td>Saturday</td><td>watering</td><td>confirmed",
                "Mei Lin</td><td>Saturday</td><td>seed sorting</td><td>confirmed",
                "Ravi Kumar</td><td>Saturday</td><td>tool shed</td><td>cancelled",
                "Jonas Weber</td><td>Saturday</td><td>gate duty</td><td>confirmed"):
        assert f"<td>{row}</td>" in rota
