"""Ten tasks of the `dev4` split (dev4-fs-1..4, dev4-git-1..2, dev4-mem-1..2, dev4-time-1,
dev4-every-1): each verifier scores a correct outcome 1.0, a plausible slip below 1.0, an
untouched workspace below 1.0; and each expected answer follows from the task's data."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from conftest import commits, says, tells_right_from_wrong, writes

from deskmate.finetune.eval.suite import load_suite

LOCAL = Path(__file__).resolve().parent.parent / "assets" / "eval" / "local"
SUITE = load_suite(LOCAL)
IDS = {"dev4-fs-1", "dev4-fs-2", "dev4-fs-3", "dev4-fs-4", "dev4-git-1", "dev4-git-2",
       "dev4-mem-1", "dev4-mem-2", "dev4-time-1", "dev4-every-1"}


def _constants(task_id: str) -> dict:
    """The module globals of a task's verify.py (its expected values)."""
    verify = SUITE.tasks[task_id].verify
    assert verify is not None
    return verify.__globals__


# dev4-fs-2: the loans with their due dates recomputed, or (slips) with no leap day or
# the renewals missed.
def _loans(due: Callable[[date, str], date], answer: str,
           quote: bool = False) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        path = workspace / "loans.csv"
        rows = list(csv.reader(io.StringIO(path.read_text())))
        out = io.StringIO()
        writer = csv.writer(out, quoting=csv.QUOTE_ALL if quote else csv.QUOTE_MINIMAL,
                            lineterminator="\r\n" if quote else "\n")
        writer.writerow(rows[0])
        for member, title, lent, old, renewed in rows[1:]:
            new = due(date.fromisoformat(lent), renewed).isoformat()
            writer.writerow([member, title, lent, new if new != old else old, renewed])
        path.write_text(out.getvalue())
        return answer
    return solve


def _due(lent: date, renewed: str) -> date:
    return lent + timedelta(days=42 if renewed == "yes" else 21)


def _due_no_leap_day(lent: date, renewed: str) -> date:
    """Counted as if February had 28 days: a day late across 29 February 2024."""
    due = _due(lent, renewed)
    return due + timedelta(days=1) if lent <= date(2024, 2, 29) < due else due


def _due_not_renewed(lent: date, renewed: str) -> date:
    return lent + timedelta(days=21)


# dev4-fs-3: the league table from results.csv.
def _table(results: str, postponed_as_draw: bool = False) -> list[tuple[str, int, int, int]]:
    teams: dict[str, list[int]] = {}
    for row in list(csv.DictReader(io.StringIO(results.strip()))):
        for team in (row["home"], row["away"]):
            teams.setdefault(team, [0, 0, 0, 0])  # played, points, for, against
        if row["score"] == "postponed":
            if not postponed_as_draw:
                continue
            home_goals = away_goals = 0
        else:
            home_goals, away_goals = map(int, row["score"].split("-"))
        for team, scored, conceded in ((row["home"], home_goals, away_goals),
                                       (row["away"], away_goals, home_goals)):
            stats = teams[team]
            stats[0] += 1
            stats[1] += 3 if scored > conceded else scored == conceded
            stats[2] += scored
            stats[3] += conceded
    rows = [(team, s[0], s[1], s[2] - s[3]) for team, s in teams.items()]
    return sorted(rows, key=lambda r: (-r[2], -r[3]))


RESULTS = SUITE.tasks["dev4-fs-3"].files["results.csv"]


def _table_csv(rows: list[tuple[str, int, int, int]], signed: bool = False) -> str:
    lines = ["team,played,points,goal_difference"]
    lines += [f"{team},{played},{points},{diff:+d}" if signed and diff
              else f"{team},{played},{points},{diff}" for team, played, points, diff in rows]
    return "\n".join(lines) + "\n"


# dev4-fs-4: the subtitles shifted by ``ms`` milliseconds.
def _shift(ms: int, answer: str, newline: str = "\n") -> Callable[[Path], str]:
    def stamp(text: str) -> str:
        h, m, rest = text.split(":")
        s, milli = rest.split(",")
        total = ((int(h) * 60 + int(m)) * 60 + int(s)) * 1000 + int(milli) + ms
        s, milli = divmod(total, 1000)
        m, s = divmod(s, 60)
        h, m = divmod(m, 60)
        return f"{h:02d}:{m:02d}:{s:02d},{milli:03d}"

    def solve(workspace: Path) -> str:
        path = workspace / "harbour-lights.srt"
        lines = []
        for line in path.read_text().splitlines():
            if "-->" in line:
                start, end = line.split(" --> ")
                line = f"{stamp(start)} --> {stamp(end)}"
            lines.append(line)
        path.write_bytes((newline.join(lines) + newline).encode())
        return answer
    return solve


CODEOWNERS = """# Who reviews what. The last matching pattern takes precedence.
*                   @lena
/docs/              @jonas @tom
/src/billing/       @jonas
/src/search/        @jonas
/src/auth/          @priya
/src/reports/       @mayank
/infra/             @jonas @priya
/tests/billing/     @jonas
"""
# "@maya" replaced everywhere as text: @mayank hit, Jonas twice on /src/search/
REPLACED = SUITE.tasks["dev4-git-1"].files[".github/CODEOWNERS"].replace("@maya", "@jonas")
REALIGNED = """# Who reviews what. The last matching pattern takes precedence.
* @lena
/docs/ @tom @jonas
/src/billing/ @jonas
/src/search/ @jonas
/src/auth/ @priya
/src/reports/ @mayank
/infra/ @priya @jonas
/tests/billing/ @jonas
"""

SHIPPING = SUITE.tasks["dev4-git-2"].files["shipping.py"]
BANDS_FIXED = SHIPPING.replace("weight_kg < limit", "weight_kg <= limit")
BOTH_FIXED = BANDS_FIXED.replace("math.floor(", "math.ceil(")


def _fix_uncommitted(answer: str) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        (workspace / "shipping.py").write_text(BOTH_FIXED)
        return answer
    return solve


PLANTS = "Basil\nFiddle-leaf fig\nMonstera\nMoth orchid\nSnake plant\n"
GO_AHEAD = "Harbour 5K fun run\nRooftop cinema\nStreet food market\nFarmers' market\n"

# task id -> a correct outcome (changes the workspace, returns the answer)
SOLUTIONS: dict[str, Callable[[Path], str]] = {
    "dev4-fs-1": says("Your fastest run of 10 km or more was on 2025-09-06: 4:53 per km."),
    "dev4-fs-2": _loans(_due, "Middlemarch, Beloved and Circe had wrong due dates."),
    "dev4-fs-3": writes("table.csv", _table_csv(_table(RESULTS)),
                        "Blue Herons are top of the table, ahead of Red Lions on goal "
                        "difference."),
    "dev4-fs-4": _shift(-2500, "The last subtitle now starts at 00:59:56,400."),
    "dev4-git-1": commits({".github/CODEOWNERS": CODEOWNERS}, "Hand Maya's code over to Jonas",
                          "Jonas becomes an owner of 4 paths."),
    "dev4-git-2": commits({"shipping.py": BOTH_FIXED}, "Fix shipping rates",
                          "A 12.5 kg parcel now costs 15.50 euros to ship."),
    "dev4-mem-1": writes("for-ines.txt", PLANTS),
    "dev4-mem-2": says("Six of you at the table: you, Amara, Lukas, Hiro, Ben and Ola. Cook "
                       "without peanuts, sesame and kiwi."),
    "dev4-time-1": says("The API in Bangalore logged an ERROR first: 17:42:15 there is "
                        "12:12:15 UTC, the gateway's 09:20:15 is 12:20:15 UTC, so 8 minutes "
                        "earlier."),
    "dev4-every-1": writes("go-ahead.txt", GO_AHEAD, "4 events can go ahead."),
}

# task id -> a plausible wrong outcome (a slip a small model makes)
MISTAKES: dict[str, Callable[[Path], str]] = {
    "dev4-fs-1": says("On 2025-10-04, at 4:57 per km."),  # the 10.0 km run left out
    "dev4-fs-2": _loans(_due_no_leap_day, "Middlemarch, Kindred and Circe."),  # no 29 Feb
    "dev4-fs-3": writes("table.csv", _table_csv(_table(RESULTS, postponed_as_draw=True)),
                        "Red Lions are top."),  # the postponed matches counted as draws
    "dev4-fs-4": _shift(2500, "It starts at 01:00:01,400."),  # shifted later
    "dev4-git-1": commits({".github/CODEOWNERS": REPLACED}, "Hand Maya's code over to Jonas",
                          "5 paths."),  # a plain text replace
    "dev4-git-2": commits({"shipping.py": BANDS_FIXED}, "Fix shipping rates",
                          "It costs 14.30 euros."),  # only the complaint's bug fixed
    "dev4-mem-1": writes("for-ines.txt",  # "every 2 weeks" read as every 2 days
                         "Basil\nFiddle-leaf fig\nMonstera\nMoth orchid\n"),
    "dev4-mem-2": says("7 people; avoid peanuts, sesame, kiwi and shellfish."),  # Sofia too
    "dev4-time-1": says("The payment gateway, at 09:20:15, long before the API's first ERROR "
                        "at 17:42:15."),  # the clock times compared as they are
    "dev4-every-1": writes("go-ahead.txt",  # °F compared with the °C limits
                           "Harbour 5K fun run\nRooftop cinema\nStreet food market\n"
                           "Sculpture park tour\nBeach volleyball\nFarmers' market\n",
                           "6 events can go ahead."),
}

# task id -> another right outcome, written the way a user would also accept
VARIANTS: dict[str, Callable[[Path], str]] = {
    "dev4-fs-1": says("6 September 2025: 10.0 km in 48:50, an average of 4'53\" per km."),
    "dev4-fs-2": _loans(_due, "Three: “Middlemarch” (now due 2024-02-15), “Beloved” "
                              "(2024-03-18) and “Circe” (2024-04-01).", quote=True),
    "dev4-fs-3": writes("table.csv", _table_csv(_table(RESULTS), signed=True),
                        "Top: Blue Herons (6 pts, GD +4), ahead of Red Lions (6 pts, +1)."),
    "dev4-fs-4": _shift(-2500, "00:59:56.400", newline="\r\n"),
    "dev4-git-1": commits({".github/CODEOWNERS": REALIGNED}, "Hand Maya's code over to Jonas.",
                          "Four: /docs/, /src/billing/, /infra/ and /tests/billing/ (he "
                          "already owned /src/search/)."),
    "dev4-git-2": commits({"shipping.py": BOTH_FIXED}, "Fix shipping rates",
                          "15,50 € now; it was 14.30 before the fix, since started "
                          "kilograms were rounded down."),
    "dev4-mem-1": writes("for-ines.txt", "- Basil\n- Fiddle leaf fig\n- Monstera\n"
                                         "- Moth orchid\n- Snake plant\n"),
    "dev4-mem-2": says("6 (you and 5 guests). Allergies: peanut (Amara), sesame (Hiro), "
                       "kiwi (Ola)."),
    "dev4-time-1": says("api.log had the first error, eight minutes ahead of gateway.log."),
    "dev4-every-1": writes("go-ahead.txt", "1. Harbour 5K fun run (0.6 °C, cloudy)\n"
                                           "2. Rooftop cinema\n3. Street food market\n"
                                           "4. Farmers market\n",
                           "Four of the eight events; New York is at 33 °F."),
}

# task id -> more wrong outcomes a loose check would take for right
MORE_MISTAKES: dict[str, Callable[[Path], str]] = {
    "dev4-fs-1": says("2025-09-27, 4:48 per km."),  # the 9.5 km run counted
    "dev4-fs-2": _loans(_due_not_renewed,  # the renewals missed
                        "Middlemarch, Piranesi, Beloved, Dune and Circe."),
    "dev4-fs-3": writes("table.csv", _table_csv(_table(RESULTS)[:4]),  # Night Owls left out
                        "Blue Herons."),
    "dev4-fs-4": _shift(-250, "00:59:58,650"),  # 2,5 read as 250 ms
    "dev4-git-1": commits({".github/CODEOWNERS": CODEOWNERS}, "Hand Maya's code over to Jonas",
                          "Jonas now owns 5 paths."),  # the one he owned already counted
    "dev4-git-2": _fix_uncommitted("15.50 euros."),  # fixed, not committed
    "dev4-mem-1": writes("for-ines.txt", "Basil\nCalathea\nFiddle-leaf fig\nMonstera\n"
                                         "Moth orchid\nPothos\nSnake plant\n"),  # a day off
    "dev4-mem-2": says("5 people; peanuts, sesame and kiwi."),  # the host left out
    "dev4-time-1": says("The gateway was first, by 22 minutes."),  # India taken as UTC+5
    "dev4-every-1": writes("go-ahead.txt",  # the drizzle not taken for rain
                           "Harbour 5K fun run\nRooftop cinema\nStreet food market\n"
                           "Jazz on the lawn\nFarmers' market\n", "5 events."),
}


def test_the_ids_are_ten_dev4_tasks_and_each_has_a_solution_and_a_slip():
    assert set(SOLUTIONS) == set(MISTAKES) == IDS
    assert set(SUITE.tasks) >= IDS
    assert set(VARIANTS) <= IDS and set(MORE_MISTAKES) <= IDS
    assert sum(len(SUITE.tasks[t].servers) > 1 for t in IDS) >= 5
    for task_id in IDS:
        assert set(SUITE.tasks[task_id].servers) <= set(SUITE.servers), task_id
        assert SUITE.tasks[task_id].verify is not None, task_id
    assert set(SUITE.selections["dev4"]) >= IDS


@pytest.mark.parametrize("task_id", sorted(SOLUTIONS))
def test_a_dev4_tasks_check_tells_right_from_wrong(task_id, tmp_path):
    tells_right_from_wrong(SUITE, task_id, SOLUTIONS[task_id], MISTAKES[task_id], tmp_path)


@pytest.mark.parametrize("task_id", sorted(VARIANTS))
def test_a_dev4_task_accepts_another_way_of_writing_it(task_id, tmp_path):
    tells_right_from_wrong(SUITE, task_id, VARIANTS[task_id], MISTAKES[task_id], tmp_path)


@pytest.mark.parametrize("task_id", sorted(MORE_MISTAKES))
def test_a_dev4_task_rejects_another_slip(task_id, tmp_path):
    tells_right_from_wrong(SUITE, task_id, SOLUTIONS[task_id], MORE_MISTAKES[task_id],
                           tmp_path)


# The expected answers, recomputed from each task's own data.

def test_the_fastest_pace_follows_from_the_activities():
    rows = csv.DictReader(io.StringIO(SUITE.tasks["dev4-fs-1"].files["activities.csv"].strip()))
    paces = {}
    for row in rows:
        parts = [int(p) for p in row["duration"].split(":")]
        seconds = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
        if row["activity"] == "run" and float(row["distance_km"]) >= 10:
            paces[row["date"]] = seconds / float(row["distance_km"])
    best = min(paces, key=paces.__getitem__)
    assert best == "2025-09-06"
    assert divmod(round(paces[best]), 60) == _constants("dev4-fs-1")["PACE"]
    assert sorted(paces.values())[1] - paces[best] > 3  # no near tie


def test_the_wrong_due_dates_follow_from_the_loans():
    rows = list(csv.DictReader(io.StringIO(SUITE.tasks["dev4-fs-2"].files["loans.csv"])))
    wrong = {row["title"].lower() for row in rows
             if _due(date.fromisoformat(row["lent_on"]), row["renewed"]).isoformat()
             != row["due_on"]}
    assert wrong == set(_constants("dev4-fs-2")["WRONG_BOOKS"])
    right = {row["title"].lower() for row in rows} - wrong
    assert right == set(_constants("dev4-fs-2")["RIGHT_BOOKS"])


def test_the_league_table_follows_from_the_results():
    table = [(team.lower(), *rest) for team, *rest in _table(RESULTS)]
    assert table == _constants("dev4-fs-3")["TABLE"]
    assert table[0][2] == table[1][2] and table[0][3] != table[1][3]  # a tie GD breaks
    slip = _table(RESULTS, postponed_as_draw=True)
    assert slip[0][0] != "Blue Herons"


def test_the_last_subtitle_follows_from_the_file():
    expected = _constants("dev4-fs-4")["expected_lines"]()
    assert expected[-2].startswith(_constants("dev4-fs-4")["LAST"] + " --> ")
    assert "00:40" in "".join(expected)  # the text left alone


def test_the_codeowners_count_follows_from_the_file():
    rules = [line.split() for line in SUITE.tasks["dev4-git-1"].files[".github/CODEOWNERS"]
             .splitlines() if line.strip() and not line.startswith("#")]
    gained = [r[0] for r in rules if "@maya" in r[1:] and "@jonas" not in r[1:]]
    assert len(gained) == 4
    owners = {r[0]: set(r[1:]) for r in rules}
    for pattern, names in owners.items():
        if "@maya" in names:
            names = (names - {"@maya"}) | {"@jonas"}
        assert names == _constants("dev4-git-1")["OWNERS"][pattern]


def test_the_shipping_price_follows_from_the_docstring():
    namespace: dict = {}
    exec(BOTH_FIXED, namespace)
    cost = namespace["shipping_cost"]
    assert cost(2) == 4.90 and cost(5) == 7.90 and cost(10) == 11.90
    assert cost(12.5) == _constants("dev4-git-2")["PRICE"] == round(11.90 + 3 * 1.20, 2)
    exec(BANDS_FIXED, namespace)
    assert namespace["shipping_cost"](12.5) in _constants("dev4-git-2")["WRONG"]


def test_the_plants_due_follow_from_the_graph():
    due = []
    for line in SUITE.tasks["dev4-mem-1"].files[".memory.jsonl"].splitlines():
        item = json.loads(line) if line.strip() else {}
        if item.get("entityType") != "plant":
            continue
        notes = " ".join(item["observations"])
        if "given to" in notes:
            continue
        every = notes.split("water every ")[1].split()
        days = int(every[0]) * (7 if every[1].startswith("week") else 1)
        last = date.fromisoformat(notes.split("last watered on ")[1][:10])
        if date(2026, 3, 14) <= last + timedelta(days=days) <= date(2026, 3, 16):
            due.append(item["name"])
    assert sorted(due) == _constants("dev4-mem-1")["DUE"]


def test_the_dinner_guests_follow_from_the_graph():
    items = [json.loads(line) for line in SUITE.tasks["dev4-mem-2"].files[".memory.jsonl"]
             .splitlines() if line.strip()]
    invited = {i["from"] for i in items if i.get("relationType") == "invited_to"}
    declined = {i["from"] for i in items if i.get("relationType") == "declined"}
    coming = invited - declined
    assert len(coming) + 1 == _constants("dev4-mem-2")["COUNT"]
    allergies = {note.removeprefix("allergic to ") for i in items
                 if i.get("name") in coming for note in i["observations"]
                 if note.startswith("allergic to ")}
    assert allergies == {"peanuts", "sesame", "kiwi"}


def test_the_first_error_follows_from_the_logs():
    task = SUITE.tasks["dev4-time-1"]
    today = date(2026, 6, 1)  # neither zone has summer time: any day gives the same
    firsts = {}
    for name, zone in (("api.log", "Asia/Kolkata"), ("gateway.log", "America/Sao_Paulo")):
        line = next(line for line in task.files[name].splitlines() if line[9:14] == "ERROR")
        hour, minute, second = map(int, line[:8].split(":"))
        firsts[name] = datetime(today.year, today.month, today.day, hour, minute, second,
                                tzinfo=ZoneInfo(zone))
    gap = firsts["gateway.log"] - firsts["api.log"]
    assert gap == timedelta(minutes=_constants("dev4-time-1")["MINUTES"])
    for month in range(1, 13):
        moment = datetime(2026, month, 15)
        assert moment.replace(tzinfo=ZoneInfo("Asia/Kolkata")).utcoffset() == \
            timedelta(hours=5, minutes=30)
        assert moment.replace(tzinfo=ZoneInfo("America/Sao_Paulo")).utcoffset() == \
            timedelta(hours=-3)


def test_the_events_that_go_ahead_follow_from_the_weather():
    # the everything server's get-structured-content: °F and conditions
    weather = {"New York": (33, "Cloudy"), "Chicago": (36, "Light rain / drizzle"),
               "Los Angeles": (73, "Sunny / Clear")}
    rows = csv.DictReader(io.StringIO(SUITE.tasks["dev4-every-1"].files["events.csv"].strip()))
    go = []
    for row in rows:
        fahrenheit, conditions = weather[row["city"]]
        celsius = (fahrenheit - 32) * 5 / 9
        rain = "rain" in conditions.lower()
        # no limit so near the temperature that rounding decides
        assert not math.isclose(celsius, float(row["min_temp_c"]), abs_tol=0.15)
        if celsius >= float(row["min_temp_c"]) and (row["rain_ok"] == "yes" or not rain):
            go.append(row["event"].lower().replace("'", ""))
    assert go == _constants("dev4-every-1")["GO"]
