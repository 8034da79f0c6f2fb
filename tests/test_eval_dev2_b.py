"""Ten tasks of the `dev2` split (dev2-fs-5 … dev2-fetch-2): each verifier scores a correct
outcome 1.0, a plausible slip below 1.0 and an untouched workspace below 1.0, and accepts
the usual ways of writing a right answer."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from conftest import git_out, says, tells_right_from_wrong, writes

from deskmate.finetune.eval.suite import load_suite

LOCAL = Path(__file__).resolve().parent.parent / "assets" / "eval" / "local"
SUITE = load_suite(LOCAL)
IDS = {"dev2-fs-5", "dev2-fs-6", "dev2-fs-7", "dev2-fs-8", "dev2-git-3", "dev2-git-4",
       "dev2-mem-3", "dev2-time-2", "dev2-fetch-1", "dev2-fetch-2"}


def _project(readme_at: str = "weather", readme: str = "# weather\nDaily forecasts for my "
             "garden.\n", keep: bool = False) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        for folder in ("src", "tests"):
            (workspace / "weather" / folder).mkdir(parents=True)
            if keep:
                (workspace / "weather" / folder / ".gitkeep").write_text("")
        (workspace / readme_at / "README.md").write_text(readme)
        return "Done."
    return solve


def _tick(items: tuple[str, ...], box: str = "[x]") -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        path = workspace / "shopping.md"
        lines = [line.replace("[ ]", box) if line.removeprefix("- [ ] ") in items else line
                 for line in path.read_text().splitlines()]
        path.write_text("\n".join(lines) + "\n")
        return "Ticked."
    return solve


ISO = {"7 March 2025": "2025-03-07", "2025/03/11": "2025-03-11",
       "March 18, 2025": "2025-03-18", "28.03.2025": "2025-03-28"}


def _dates(answer: str, skip: str = "", quote_all: bool = False) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        path = workspace / "invoices.csv"
        rows = list(csv.reader(io.StringIO(path.read_text())))
        for row in rows[1:]:
            if row[2] != skip:
                row[2] = ISO.get(row[2], row[2])
        out = io.StringIO()
        csv.writer(out, lineterminator="\n",
                   quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL).writerows(rows)
        path.write_text(out.getvalue())
        return answer
    return solve


def _edit(workspace: Path, rel: str, old: str, new: str) -> None:
    path = workspace / rel
    path.write_text(path.read_text().replace(old, new))


def _tax(separate: bool = True) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        _edit(workspace, "cart.py", "TAX_RATE = 0.20", "TAX_RATE = 0.21")
        if separate:
            git_out(workspace, "commit", "-q", "-am", "Raise tax rate")
        with (workspace / "README.md").open("a") as readme:
            readme.write("Prices include 21% tax.\n")
        git_out(workspace, "commit", "-q", "-am", "Document tax rate")
        return "Two commits made."
    return solve


def _requirements(lines: list[str], message: str = "Sort requirements") -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        (workspace / "requirements.txt").write_text("\n".join(lines) + "\n")
        git_out(workspace, "commit", "-q", "-am", message)
        return ""
    return solve


REQUIREMENTS = ["requests==2.32.3", "Flask==3.0.3", "pytest==8.2.0", "click==8.1.7",
                "SQLAlchemy==2.0.30", "black==24.4.2"]


def _leavers(new_manager: str | None = "Priya Nair",
             relation_type: str = "reports_to") -> Callable[[Path], str]:
    leavers = {"Marco Bianchi", "Omar Haddad"}

    def solve(workspace: Path) -> str:
        path = workspace / ".memory.jsonl"
        items = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        kept = [item for item in items
                if item.get("name") not in leavers and item.get("from") not in leavers
                and item.get("to") not in leavers]
        if new_manager:
            kept += [{"type": "relation", "from": name, "to": new_manager,
                      "relationType": relation_type} for name in ("Yusuf Demir", "Hannah Cole")]
        path.write_text("".join(json.dumps(item) + "\n" for item in kept))
        return "Done."
    return solve


def _ahead() -> float:
    now = datetime.now(ZoneInfo("UTC"))
    offset = (now.astimezone(ZoneInfo("Australia/Adelaide")).utcoffset()
              - now.astimezone(ZoneInfo("Europe/Lisbon")).utcoffset())
    return offset.total_seconds() / 3600


def _writes_ahead(text: Callable[[float], str]) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        (workspace / "ahead.txt").write_text(text(_ahead()))
        return ""
    return solve


def _hours_minutes(hours: float) -> str:
    return f"{int(hours)}:{round((hours - int(hours)) * 60):02d}\n"


# task id -> a correct outcome (changes the workspace, returns the answer)
SOLUTIONS: dict[str, Callable[[Path], str]] = {
    "dev2-fs-5": _project(),
    "dev2-fs-6": writes("over-budget.json",
                        '{"groceries": 14.7, "eating out": 22.3, "household": 0.35}\n'),
    "dev2-fs-7": _tick(("milk", "eggs", "tomatoes")),
    "dev2-fs-8": _dates("I changed 4 dates."),
    "dev2-git-3": _tax(),
    "dev2-git-4": _requirements(sorted(REQUIREMENTS, key=str.lower)),
    "dev2-mem-3": _leavers(),
    "dev2-time-2": _writes_ahead(lambda hours: f"{hours}\n"),
    "dev2-fetch-1": says("The library closes at 16:30 on Saturdays."),
    "dev2-fetch-2": writes("total-eur.txt", "912.50\n"),
}

# task id -> a plausible wrong outcome (a slip a small model makes)
MISTAKES: dict[str, Callable[[Path], str]] = {
    "dev2-fs-5": _project(readme_at="."),  # the README beside the project, not in it
    "dev2-fs-6": writes("over-budget.json",  # household's 0.35 taken for within budget
                        '{"groceries": 14.7, "eating out": 22.3}\n'),
    "dev2-fs-7": _tick(("milk", "eggs", "bread")),  # the wrong item ticked
    "dev2-fs-8": _dates("I changed 3 dates.", skip="28.03.2025"),  # dd.mm.yyyy missed
    "dev2-git-3": _tax(separate=False),  # both changes in one commit
    "dev2-git-4": _requirements(sorted(REQUIREMENTS)),  # capitals first
    "dev2-mem-3": _leavers(new_manager=None),  # nobody reassigned
    "dev2-time-2": _writes_ahead(lambda hours: f"{round(hours + 0.01)}\n"),  # rounded up
    "dev2-fetch-1": says("It closes at 18:00."),  # Friday's row
    "dev2-fetch-2": writes("total-eur.txt", "892.50\n"),  # the yen left out
}

# task id -> another right outcome, written the way a user would also accept
VARIANTS: dict[str, Callable[[Path], str]] = {
    "dev2-fs-5": _project(readme="# Weather\n\nDaily forecasts for my garden\n", keep=True),
    "dev2-fs-6": writes("over-budget.json",
                        '{"Groceries": "14.70", "eating_out": 22.30, "Household": 0.35}'),
    "dev2-fs-7": _tick(("milk", "eggs", "tomatoes"), box="[X]"),
    "dev2-fs-8": _dates("Four of them: 2025-015, 2025-016, 2025-017 and 2025-019.",
                        quote_all=True),
    "dev2-git-4": _requirements([*sorted(REQUIREMENTS, key=str.lower), ""],
                                "Sort requirements."),
    "dev2-mem-3": _leavers(relation_type="reports to"),
    "dev2-time-2": _writes_ahead(_hours_minutes),
    "dev2-fetch-1": says("Saturday: 10 am to 4:30 pm."),
    "dev2-fetch-2": writes("total-eur.txt", "€912,50\n"),
}

# task id -> more wrong outcomes a loose check would take for right
MORE_MISTAKES: dict[str, Callable[[Path], str]] = {
    "dev2-fs-6": writes("over-budget.json",  # every category, the ones within budget too
                        '{"groceries": 14.7, "transport": -7.5, "eating out": 22.3, '
                        '"entertainment": -19.01, "household": 0.35}'),
    "dev2-mem-3": _leavers(new_manager="Sofia Lind"),  # the wrong manager
    "dev2-time-2": _writes_ahead(lambda hours: f"{hours + 1}\n"),  # a summer time missed
    "dev2-fetch-1": says("Monday to Thursday until 20:00, Friday 18:00, Saturday 16:30."),
    "dev2-fetch-2": writes("total-eur.txt", "912.50 EUR (or 1140.63 USD)\n"),
}


def test_the_ten_tasks_each_have_a_solution_and_a_slip():
    assert set(SOLUTIONS) == set(MISTAKES) == IDS
    assert set(SUITE.tasks) >= IDS
    assert set(VARIANTS) <= IDS and set(MORE_MISTAKES) <= IDS
    assert sum(len(SUITE.tasks[t].servers) > 1 for t in IDS) >= 5
    assert set(SUITE.selections["dev2"]) >= IDS


@pytest.mark.parametrize("task_id", sorted(IDS))
def test_a_dev2_tasks_check_tells_right_from_wrong(task_id, tmp_path):
    tells_right_from_wrong(SUITE, task_id, SOLUTIONS[task_id], MISTAKES[task_id], tmp_path)


@pytest.mark.parametrize("task_id", sorted(VARIANTS))
def test_a_dev2_task_accepts_another_way_of_writing_it(task_id, tmp_path):
    tells_right_from_wrong(SUITE, task_id, VARIANTS[task_id], MISTAKES[task_id], tmp_path)


@pytest.mark.parametrize("task_id", sorted(MORE_MISTAKES))
def test_a_dev2_task_rejects_another_slip(task_id, tmp_path):
    tells_right_from_wrong(SUITE, task_id, SOLUTIONS[task_id], MORE_MISTAKES[task_id],
                           tmp_path)


def test_the_new_pages_say_what_the_fetch_tasks_expect():
    library = (LOCAL / "site" / "dev2-library.html").read_text()
    rates = (LOCAL / "site" / "dev2-rates.html").read_text()
    assert "<td>Saturday</td><td>10:00</td><td>16:30</td>" in library
    for currency, rate in {"USD": "1.25", "GBP": "0.80", "CHF": "0.96", "JPY": "160"}.items():
        assert f"<td>{currency}</td><td>{rate}</td>" in rates
