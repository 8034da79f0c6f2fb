"""Ten tasks of the `dev3` split (dev3-fs-1..4, dev3-git-1..2, dev3-mem-1..2, dev3-time-1,
dev3-every-1): each verifier scores a correct outcome 1.0, a plausible slip below 1.0, an
untouched workspace below 1.0."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import commits, git_out, says, suite_helpers, tells_right_from_wrong, writes

from deskmate.finetune.eval.suite import load_suite

LOCAL = Path(__file__).resolve().parent.parent / "assets" / "eval" / "local"
SUITE = load_suite(LOCAL)
IDS = {"dev3-fs-1", "dev3-fs-2", "dev3-fs-3", "dev3-fs-4", "dev3-git-1", "dev3-git-2",
       "dev3-mem-1", "dev3-mem-2", "dev3-time-1", "dev3-every-1"}

BALANCES = "name,balance\nAna,116.75\nBen,-18.55\nCleo,7.85\nDev,-106.05\n"
# split three ways among those who paid: Dev left out
THREE_WAYS = "name,balance\nAna,81.40\nBen,-53.90\nCleo,-27.50\n"

PHOTOS = ["IMG_20240117_101512.jpg", "IMG_20240603_184400.jpg", "IMG_20240809_134502.jpg",
          "PXL_20241224_090101.jpg"]
PINS = ("certifi==2024.7.4\nflask==3.0.3\njinja2==3.1.5\npyyaml==6.0.1\nrequests==2.32.3\n"
        "urllib3==1.26.19\n")
# every advisory's fixed version written in, flask lowered and requests too
ALL_PINS = ("certifi==2024.7.4\nflask==2.2.5\njinja2==3.1.5\npyyaml==6.0.1\n"
            "requests==2.32.0\nurllib3==1.26.19\n")


def _port(host: str, answer: str) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        path = workspace / "docker-compose.yml"
        path.write_text(path.read_text().replace('"8080:3000"', f'"{host}:3000"'))
        return answer
    return solve


def _move(names: list[str], answer: str) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        (workspace / "photos" / "2024").mkdir(parents=True)
        for name in names:
            (workspace / "inbox" / name).rename(workspace / "photos" / "2024" / name)
        return answer
    return solve


def _release(version: str) -> Callable[[Path], str]:
    def solve(workspace: Path) -> str:
        path = workspace / "CHANGELOG.md"
        path.write_text(path.read_text().replace(
            "## Unreleased\n", f"## Unreleased\n\n## {version} - 2026-03-02\n"))
        (workspace / "VERSION").write_text(version + "\n")
        git_out(workspace, "add", "-A")
        git_out(workspace, "commit", "-q", "-m", f"Release {version}")
        return ""
    return solve


def _memory(workspace: Path, change: Callable[[list[dict]], list[dict]]) -> None:
    """Rewrite the memory file the way the memory server does, after ``change``."""
    path = workspace / ".memory.jsonl"
    items = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    path.write_text("".join(json.dumps(item) + "\n" for item in change(items)))


SUPPLIERS = [("Alto Roasters", "Italy", "Espresso beans"), ("Nordic Oats", "Sweden", "Oat milk"),
             ("Alto Roasters", "Italy", "Decaf beans"),
             ("GreenPack", "Netherlands", "Paper cups"),
             ("Maison Beurre", "France", "Croissants")]
INACTIVE = [("CupCo", "Germany", "Paper cups"), ("Bean Bros", "Colombia", "Espresso beans")]


def _suppliers(rows: list[tuple[str, str, str]]) -> Callable[[Path], str]:
    def change(items: list[dict]) -> list[dict]:
        for name, country, product in rows:
            if not any(item.get("name") == name for item in items):
                items.append({"type": "entity", "name": name, "entityType": "supplier",
                              "observations": [f"country: {country}"]})
            items.append({"type": "relation", "from": name, "to": product,
                          "relationType": "supplies"})
        return items
    return lambda workspace: _memory(workspace, change) or ""


def _kathmandu(shift: int) -> Callable[[Path], str]:
    """Today's 14:00 in St. John's in Kathmandu, ``shift`` minutes off."""
    def solve(workspace: Path) -> str:
        hour, minute = map(int, suite_helpers().convert(
            "14:00", "America/St_Johns", "Asia/Kathmandu").split(":"))
        total = (hour * 60 + minute + shift) % 1440
        return f"The deploy is at {total // 60:02d}:{total % 60:02d} in Kathmandu."
    return solve


# task id -> a correct outcome (changes the workspace, returns the answer)
SOLUTIONS: dict[str, Callable[[Path], str]] = {
    "dev3-fs-1": says("November 2025 was the heaviest month: 517 kWh "
                      "(22634 - 22117), ahead of December's 503."),
    "dev3-fs-2": writes("balances.csv", BALANCES,
                        "Dev owes the most: 106.05 euros, since he paid for nothing shared."),
    "dev3-fs-3": _port("8083", "web and admin both published host port 8080; admin now "
                               "uses 8083."),
    "dev3-fs-4": _move(PHOTOS, "I moved 4 photos:\n1. IMG_20240117_101512.jpg\n"
                               "2. IMG_20240603_184400.jpg\n3. IMG_20240809_134502.jpg\n"
                               "4. PXL_20241224_090101.jpg"),
    "dev3-git-1": commits({"requirements.txt": PINS}, "Fix vulnerable pins",
                          "I changed certifi, jinja2 and urllib3."),
    "dev3-git-2": _release("1.10.0"),
    "dev3-mem-1": _suppliers(SUPPLIERS),
    "dev3-mem-2": says("Imran Shah: he has been at Helix Labs since January 2017 "
                       "(Ruth Alvarez started earlier but left in 2022)."),
    "dev3-time-1": _kathmandu(0),
    "dev3-every-1": says("Los Angeles is the warmest at 73 °F. New York is the coldest at "
                         "33 °F, so Los Angeles is 40 °F = 22.2 °C warmer."),
}

# task id -> a plausible wrong outcome (a slip a small model makes)
MISTAKES: dict[str, Callable[[Path], str]] = {
    "dev3-fs-1": says("December 2025: the meter read 23137 kWh."),  # the highest reading
    "dev3-fs-2": writes("balances.csv", THREE_WAYS, "Ben owes the most."),
    "dev3-fs-3": _port("8081", "web and admin clashed on 8080."),  # 8081 is api's
    "dev3-fs-4": _move([*PHOTOS, "IMG_20230520_202405.jpg"], "I moved 5 photos."),
    "dev3-git-1": commits({"requirements.txt": ALL_PINS}, "Fix vulnerable pins",
                          "I changed certifi, flask, jinja2, requests and urllib3."),
    "dev3-git-2": _release("2.0.0"),  # a major release for an Added section
    "dev3-mem-1": _suppliers(SUPPLIERS + INACTIVE),  # the inactive ones too
    "dev3-mem-2": says("Ruth Alvarez, since March 2015."),  # she left in 2022
    "dev3-time-1": _kathmandu(-15),  # Nepal taken as UTC+5:30
    "dev3-every-1": says("Los Angeles; it is 4.4 °C warmer than New York."),
}


def test_the_ids_are_ten_dev3_tasks_and_each_has_a_solution_and_a_slip():
    assert set(SOLUTIONS) == set(MISTAKES) == IDS
    assert set(SUITE.tasks) >= IDS
    if "dev3" in SUITE.selections:
        assert set(SUITE.selections["dev3"]) >= IDS


@pytest.mark.parametrize("task_id", sorted(SOLUTIONS))
def test_a_dev3_tasks_check_tells_right_from_wrong(task_id, tmp_path):
    tells_right_from_wrong(SUITE, task_id, SOLUTIONS[task_id], MISTAKES[task_id], tmp_path)
