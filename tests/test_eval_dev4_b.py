"""Ten tasks of the `dev4` split (dev4-fs-5 … dev4-fetch-2): each verifier scores a correct
outcome 1.0, a plausible slip below 1.0 and an untouched workspace below 1.0, and accepts
the usual ways of writing a right answer."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from conftest import git_out, says, suite_helpers, tells_right_from_wrong, writes

from deskmate.finetune.eval.suite import load_suite

LOCAL = Path(__file__).resolve().parent.parent / "assets" / "eval" / "local"
SUITE = load_suite(LOCAL)
IDS = {"dev4-fs-5", "dev4-fs-6", "dev4-fs-7", "dev4-fs-8", "dev4-git-3", "dev4-git-4",
       "dev4-mem-3", "dev4-time-2", "dev4-fetch-1", "dev4-fetch-2"}

BIG = "/srv/backups\n/srv/vm-images\n/srv/media\n/srv/home\n"


def _requote(answer: str, requote_tom: bool = False) -> Callable[[Path], str]:
    """contacts.csv with Owen Price's company quoted (with ``requote_tom``, quotes put round
    Tom Becker's quoted one as well)."""
    def solve(workspace: Path) -> str:
        path = workspace / "contacts.csv"
        text = path.read_text().replace("Smith, Jones & Co", '"Smith, Jones & Co"')
        if requote_tom:
            text = text.replace('"Baker, Lane & Sons"', '""Baker, Lane & Sons""')
        path.write_text(text)
        return answer
    return solve


SHIRTS = {"XS": 0, "S": 1, "M": 3, "L": 3, "XL": 1, "XXL": 1}


def _shirts(counts: dict, answer: str) -> Callable[[Path], str]:
    return writes("shirts.json", json.dumps(counts, indent=2) + "\n", answer)


RENAMED = ["ledgerly/config.py", "tests/test_config.py", "README.md", ".env.example",
           "deploy/web.service"]


def _rename(answer: str, pattern: str = r"\bAPP_DB_URL\b(?!_)",
            message: str | None = "Rename APP_DB_URL to DATABASE_URL") -> Callable[[Path], str]:
    """Every match of ``pattern`` in the repository's files made DATABASE_URL, and committed
    with ``message`` (None: left uncommitted)."""
    def solve(workspace: Path) -> str:
        for path in workspace.rglob("*"):
            if path.is_file() and ".git" not in path.parts:
                text = path.read_text()
                new = re.sub(pattern, "DATABASE_URL", text)
                if new != text:
                    path.write_text(new)
        if message is not None:
            git_out(workspace, "commit", "-q", "-am", message)
        return answer
    return solve


HEADER = "# SPDX-License-Identifier: MIT\n"


def _spdx(answer: str, above_shebang: bool = False, blank: bool = False,
          twice: bool = False) -> Callable[[Path], str]:
    """The header added to src/'s Python files that lack it (below a #! line unless
    ``above_shebang``; a blank line after it with ``blank``; with ``twice``, to every one),
    committed as "Add SPDX headers"."""
    def solve(workspace: Path) -> str:
        header = HEADER + ("\n" if blank else "")
        for path in sorted((workspace / "src").rglob("*.py")):
            text = path.read_text()
            if text.startswith(HEADER) and not twice:
                continue
            if text.startswith("#!") and not above_shebang:
                first, rest = text.split("\n", 1)
                path.write_text(f"{first}\n{header}{rest}")
            else:
                path.write_text(header + text)
        git_out(workspace, "commit", "-q", "-am", "Add SPDX headers")
        return answer
    return solve


CALL = ["Ana Ribeiro", "Carla Mendes", "Elena Fischer"]


def _call(names: list[str], answer: str) -> Callable[[Path], str]:
    return writes("lisbon-call.txt", "".join(f"{name}\n" for name in names), answer)


def _late(extra: dict[str, int] | None = None,
          form: str = "{office}: {minutes} min") -> Callable[[Path], str]:
    """late.txt from today's conversions (the verifier's reading of "today"): the offices
    after 17:00 UTC, with ``extra`` {office: minutes} put in or over."""
    def solve(workspace: Path) -> str:
        rows = csv.DictReader(io.StringIO((workspace / "submissions.csv").read_text()))
        convert = suite_helpers().convert
        lines = []
        for row in rows:
            hour, minute = map(int, convert(row["submitted_local"], row["time_zone"],
                                            "UTC").split(":"))
            minutes = hour * 60 + minute - 17 * 60
            office = row["office"]
            if extra and office in extra:
                minutes = extra[office]
            elif minutes <= 0:
                continue
            lines.append(form.format(office=office, minutes=minutes))
        (workspace / "late.txt").write_text("\n".join(lines) + "\n")
        return "Written."
    return solve


RECALLED = ["KP2-10400", "KP25-3120", "KP2-10899"]


def _recall(serials: list[str], answer: str) -> Callable[[Path], str]:
    return writes("recalled.txt", "".join(f"{serial}\n" for serial in serials), answer)


# task id -> a correct outcome (changes the workspace, returns the answer)
SOLUTIONS: dict[str, Callable[[Path], str]] = {
    "dev4-fs-5": writes("big-folders.txt", BIG, "Together they take 9.5G."),
    "dev4-fs-6": _requote("Owen Price's row."),
    "dev4-fs-7": says("About 6.2 l/100 km."),
    "dev4-fs-8": _shirts(SHIRTS, "9 shirts in total."),
    "dev4-git-3": _rename("Changed ledgerly/config.py, tests/test_config.py, README.md, "
                          ".env.example and deploy/web.service."),
    "dev4-git-4": _spdx("I changed 3 files."),
    "dev4-mem-3": _call(CALL, "3 people could take it."),
    "dev4-time-2": _late(),
    "dev4-fetch-1": _recall(RECALLED, "3 kettles have to go."),
    "dev4-fetch-2": says("The 08:20 from Mill Road; it gets to Central Station at 08:45."),
}

# task id -> a plausible wrong outcome (a slip a small model makes)
MISTAKES: dict[str, Callable[[Path], str]] = {
    "dev4-fs-5": writes("big-folders.txt",  # du's grand total taken for a folder
                        "total\n/srv/backups\n/srv/vm-images\n/srv/media\n/srv/home\n",
                        "20.5G together."),
    "dev4-fs-6": _requote("Tom Becker's row."),  # the quoted comma counted too
    "dev4-fs-7": says("About 7.5 l/100 km."),  # the first fill-up's litres counted
    "dev4-fs-8": _shirts({"S": 1, "M": 3, "L": 3, "XL": 1, "XXL": 1},  # XS, chosen by
                         "9 shirts in total."),                       # nobody, left out
    "dev4-git-3": _rename("Changed ledgerly/config.py, tests/test_config.py, README.md, "
                          ".env.example, deploy/web.service and deploy/reports.service.",
                          pattern=r"APP_DB_URL"),  # the replica's variable renamed too
    "dev4-git-4": _spdx("I changed 3 files.", above_shebang=True),  # header above the #!
    "dev4-mem-3": _call(["Ana Ribeiro", "Bruno Costa", *CALL[1:]],  # his leave missed
                        "4 people."),
    "dev4-time-2": _late(extra={"Colombo": 0}),  # the submission at 17:00 exactly
    "dev4-fetch-1": _recall([*RECALLED, "KP2-10655"], "4 kettles."),  # the repaired one
    "dev4-fetch-2": says("The 08:24 from Mill Road, arriving at 08:43."),  # the school bus
}

# task id -> another right outcome, written the way a user would also accept
VARIANTS: dict[str, Callable[[Path], str]] = {
    "dev4-fs-5": writes("big-folders.txt", "- backups (4.2G)\n- vm-images (2.7G)\n"
                        "- media (1.5G)\n- home (1.1G)\n", "9,5 GB in all (4.2 + 2.7 + 1.5 "
                        "+ 1.1); /srv/logs is just under 1G at 980M."),
    "dev4-fs-6": _requote("It was the row of Owen Price (Smith, Jones & Co); Tom Becker's "
                          "comma was quoted already."),
    "dev4-fs-7": says("6,19 L/100 km: 188.8 l over 3,050 km."),
    "dev4-fs-8": _shirts({"xs": 0, "s": "1", "m": 3, "l": 3, "xl": 1, "xxl": 1},
                         "Nine shirts for the 10th birthday: 3 M, 3 L, 1 each of S, XL and "
                         "XXL."),
    "dev4-git-3": _rename("config.py, test_config.py, the README, .env.example and "
                          "web.service.", message="Rename APP_DB_URL to DATABASE_URL."),
    "dev4-git-4": _spdx("Three: cli.py, station.py and units.py.", blank=True),
    "dev4-mem-3": _call(["- Ana Ribeiro", "- Carla Mendes", "- Elena Fischer"],
                        "Three people (on 8 July): Ana, Carla and Elena."),
    "dev4-time-2": _late(form="{office} — {minutes} minutes late"),
    "dev4-fetch-1": _recall(["- kp2-10400 (Quay Street)", "- KP2-10899 (Station Road)",
                             "- KP25-3120 (Mill Lane)"], "Three of them: two KP-200s and a "
                            "KP-250."),
    "dev4-fetch-2": says("Catch the 8.20 am (the 08:08 from Harbourside); it arrives at "
                         "8:45 am."),
}

# task id -> more wrong outcomes a loose check would take for right
MORE_MISTAKES: dict[str, Callable[[Path], str]] = {
    "dev4-fs-5": writes("big-folders.txt",  # 980M taken for more than 1.1G
                        "/srv/backups\n/srv/vm-images\n/srv/media\n/srv/home\n/srv/logs\n",
                        "10.5G"),
    "dev4-fs-6": _requote("Owen Price's row.", requote_tom=True),  # the good row broken
    "dev4-fs-7": says("6.4 l/100 km"),  # the last fill-up left out instead of the first
    "dev4-fs-8": _shirts({**SHIRTS, "M": 4}, "10 shirts."),  # Ruth counted twice
    "dev4-git-3": _rename("Changed ledgerly/config.py, tests/test_config.py, README.md, "
                          ".env.example and deploy/web.service.", message=None),
    "dev4-git-4": _spdx("I changed 4 files.", twice=True),  # __init__.py's header doubled
    "dev4-mem-3": _call(["Ana Ribeiro", "Elena Fischer"], "2"),  # Carla back on the 8th
    "dev4-time-2": _late(extra={"Kathmandu": 20}),  # Nepal at +5:30
    "dev4-fetch-1": _recall(["KP25-3120"], "1"),  # both ends of the range left out
    "dev4-fetch-2": says("The 08:05, arriving 08:28."),  # 08:45 taken as too late
}


def test_the_ten_tasks_each_have_a_solution_and_a_slip():
    assert set(SOLUTIONS) == set(MISTAKES) == IDS
    assert set(SUITE.tasks) >= IDS
    assert set(VARIANTS) <= IDS and set(MORE_MISTAKES) <= IDS
    assert sum(len(SUITE.tasks[t].servers) > 1 for t in IDS) >= 5
    assert set(SUITE.selections["dev4"]) >= IDS


@pytest.mark.parametrize("task_id", sorted(IDS))
def test_a_dev4_tasks_check_tells_right_from_wrong(task_id, tmp_path):
    tells_right_from_wrong(SUITE, task_id, SOLUTIONS[task_id], MISTAKES[task_id], tmp_path)


@pytest.mark.parametrize("task_id", sorted(VARIANTS))
def test_a_dev4_task_accepts_another_way_of_writing_it(task_id, tmp_path):
    tells_right_from_wrong(SUITE, task_id, VARIANTS[task_id], MISTAKES[task_id], tmp_path)


@pytest.mark.parametrize("task_id", sorted(MORE_MISTAKES))
def test_a_dev4_task_rejects_another_slip(task_id, tmp_path):
    tells_right_from_wrong(SUITE, task_id, SOLUTIONS[task_id], MORE_MISTAKES[task_id],
                           tmp_path)


def _rows(task_id: str, rel: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(SUITE.tasks[task_id].files[rel])))


def test_the_big_folders_follow_from_du():
    gib = {"K": 1 / 1024**2, "M": 1 / 1024, "G": 1}
    sizes = {}
    for line in SUITE.tasks["dev4-fs-5"].files["du.txt"].splitlines():
        size, path = line.split("\t")
        sizes[path] = float(size[:-1]) * gib[size[-1]]
    assert sizes.pop("total") >= sum(sizes.values())  # du's grand total, no folder
    big = sorted((p for p, g in sizes.items() if g > 1), key=sizes.__getitem__, reverse=True)
    assert "".join(f"{p}\n" for p in big) == BIG
    assert round(sum(sizes[p] for p in big), 2) == 9.5


def test_one_contact_row_is_broken_and_one_is_quoted():
    text = SUITE.tasks["dev4-fs-6"].files["contacts.csv"]
    widths = {row[0]: len(row) for row in csv.reader(io.StringIO(text))}
    assert {name for name, width in widths.items() if width != 4} == {"Owen Price"}
    assert sum(line.count(",") > 3 for line in text.splitlines()) == 2


def test_the_old_variable_is_in_five_files_and_the_replica_in_one_more():
    files = SUITE.tasks["dev4-git-3"].files
    assert [rel for rel, text in files.items()
            if re.search(r"\bAPP_DB_URL\b(?!_)", text)] == RENAMED
    assert "APP_DB_URL_REPLICA" in files["deploy/reports.service"]


def test_three_python_files_under_src_lack_the_header():
    files = SUITE.tasks["dev4-git-4"].files
    lacking = [rel for rel, text in files.items() if rel.startswith("src/")
               and rel.endswith(".py") and HEADER not in text]
    assert lacking == ["src/weatherbox/cli.py", "src/weatherbox/station.py",
                       "src/weatherbox/units.py"]
    assert files["src/weatherbox/cli.py"].startswith("#!")


def test_the_car_consumption_follows_from_the_log():
    car = [row for row in _rows("dev4-fs-7", "fuel-log.csv") if row["vehicle"] == "car"]
    litres = sum(float(row["litres"]) for row in car[1:])
    distance = int(car[-1]["odometer_km"]) - int(car[0]["odometer_km"])
    assert round(100 * litres / distance, 1) == 6.2


def test_the_shirts_follow_from_the_lists():
    sizes = {}
    for row in _rows("dev4-fs-8", "registrations.csv"):
        if row["status"] == "confirmed":
            sizes[row["name"]] = row["shirt_size"]
    for row in _rows("dev4-fs-8", "speakers.csv"):
        sizes[row["name"]] = row["shirt_size"]
    form = SUITE.tasks["dev4-fs-8"].files["sizes.txt"].splitlines()[1:]
    assert {size: list(sizes.values()).count(size) for size in form} == SHIRTS


def test_the_people_for_the_call_follow_from_the_graph():
    items = [json.loads(line) for line in
             SUITE.tasks["dev4-mem-3"].files[".memory.jsonl"].splitlines()]
    notes = {i["name"]: " ".join(i["observations"]) for i in items if i["type"] == "entity"}
    day, free = date(2025, 7, 8), []
    for item in items:
        if item["type"] != "relation" or (item["relationType"], item["to"]) != (
                "speaks", "Portuguese"):
            continue
        note = notes[item["from"]]
        leave = re.search(r"on leave from (\S+) to (\S+)", note)
        away = leave and date.fromisoformat(leave[1]) <= day <= date.fromisoformat(leave[2])
        if not away and "left the company" not in note:
            free.append(item["from"])
    assert sorted(free) == CALL


@pytest.mark.parametrize("day", [date(2026, 1, 15), date(2026, 7, 15)])
def test_the_late_offices_are_the_same_in_summer_and_winter(day):
    late = {}
    for row in _rows("dev4-time-2", "submissions.csv"):
        hour, minute = map(int, row["submitted_local"].split(":"))
        local = datetime(day.year, day.month, day.day, hour, minute,
                         tzinfo=ZoneInfo(row["time_zone"]))
        utc = local.astimezone(ZoneInfo("UTC"))
        if (delay := utc.hour * 60 + utc.minute - 17 * 60) > 0:
            late[row["office"]] = delay
    assert late == {"Buenos Aires": 20, "Kathmandu": 5, "Nairobi": 12}


def test_the_new_pages_say_what_the_fetch_tasks_expect():
    recall = (LOCAL / "site" / "dev4-recall.html").read_text()
    bus = (LOCAL / "site" / "dev4-bus.html").read_text()
    assert "<td>KP-200</td><td>KP2-10400 to KP2-10899, both included</td>" in recall
    assert "<td>KP-250</td><td>KP25-3000 to KP25-3499, both included</td>" in recall
    assert "KP-150 and KP-300 are not affected" in recall and "green dot sticker" in recall
    for row in ("<td>08:08</td><td>08:20</td><td>08:29</td><td>08:45</td><td></td>",
                "<td>08:13</td><td>08:24</td><td>08:31</td><td>08:43</td><td>S</td>",
                "<td>08:00</td><td>—</td><td>—</td><td>08:23</td><td>X</td>"):
        assert row in bus
    assert "S: school days only; does not run in the school holidays." in bus


def test_the_recalled_kettles_follow_from_the_notice():
    ranges = {"KP-200": ("KP2", 10400, 10899), "KP-250": ("KP25", 3000, 3499)}
    recalled = []
    for row in _rows("dev4-fetch-1", "equipment.csv"):
        if row["item"] != "kettle" or row["model"] not in ranges or "green dot" in row["notes"]:
            continue
        prefix, low, high = ranges[row["model"]]
        series, number = row["serial"].split("-")
        if series == prefix and low <= int(number) <= high:
            recalled.append(row["serial"])
    assert sorted(recalled) == sorted(RECALLED)
