"""Run LangGraph's copied tests (upstream/tests) against real LangGraph or, through the shim, agent_runtime.

    python tests/langgraph_suite/run_suite.py measure       # both targets, all copied files: writes
                                                            # expected_pass.txt and results.md
    python tests/langgraph_suite/run_suite.py measure agent_runtime   # the same, LangGraph's outcomes kept
    python tests/langgraph_suite/run_suite.py report        # the same two files again from outcomes.tsv
    python tests/langgraph_suite/run_suite.py ci            # agent_runtime, the tests in expected_pass.txt
    python tests/langgraph_suite/run_suite.py run TARGET [pytest args]   # TARGET: langgraph | agent_runtime

Each run is its own pytest process, with upstream/ as rootdir and cwd (its `tests` package is LangGraph's
tests folder) and, for agent_runtime, shim/ first on PYTHONPATH, so `import langgraph` is the shim.
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
UPSTREAM = HERE / "upstream"
SHIM = HERE / "shim"
EXPECTED = HERE / "expected_pass.txt"
RESULTS = HERE / "results.md"
OUTCOMES = HERE / "outcomes.tsv"
NOT_APPLICABLE = HERE / "not_applicable.md"
TARGETS = ("langgraph", "agent_runtime")


def pytest_command(target: str, args: list[str]) -> tuple[list[str], dict[str, str]]:
    env = dict(os.environ)
    paths = [str(REPO)]
    if target == "agent_runtime":
        paths.insert(0, str(SHIM))
    env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["LANGGRAPH_SUITE_TARGET"] = target
    env.setdefault("LANGGRAPH_SUITE_RUN", "1")
    cmd = [sys.executable, "-m", "pytest", "-c", str(UPSTREAM / "pytest.ini"), "--rootdir", str(UPSTREAM), *args]
    return cmd, env


def run(
    target: str, args: list[str], *, timeout: float | None = None, capture: bool = False
) -> subprocess.CompletedProcess[str]:
    cmd, env = pytest_command(target, args)
    return subprocess.run(cmd, cwd=UPSTREAM, env=env, timeout=timeout, text=True, capture_output=capture, check=False)


def not_applicable_ids() -> set[str]:
    """Test ids (or file prefixes) listed in not_applicable.md's table rows: `| tests/x.py::test | reason |`."""
    ids = set()
    if NOT_APPLICABLE.exists():
        for line in NOT_APPLICABLE.read_text().splitlines():
            m = re.match(r"\|\s*`(tests/[^`]+)`\s*\|", line)
            if m:
                ids.add(m.group(1))
    return ids


def copied_test_files() -> list[str]:
    return sorted(f"tests/{p.name}" for p in (UPSTREAM / "tests").glob("test_*.py"))


def parse_junit(path: Path) -> dict[str, tuple[str, str]]:
    """test id -> (outcome, message) with outcome passed | failed | error | skipped."""
    out: dict[str, tuple[str, str]] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name", "")
        if not classname and name.startswith("tests."):  # a collection error: name is the module
            classname, name = name, ""
        parts = classname.split(".")
        # tests.test_pregel[.Class] -> tests/test_pregel.py[::Class]
        mod_end = next((i for i, p in enumerate(parts) if p.startswith("test_")), len(parts) - 1)
        node = "/".join(parts[: mod_end + 1]) + ".py"
        if parts[mod_end + 1 :]:
            node += "::" + "::".join(parts[mod_end + 1 :])
        test_id = f"{node}::{name}" if name else node
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            el = case.find(tag)
            if el is not None:
                outcome = {"failure": "failed"}.get(tag, tag)
                message = (el.get("message") or "").strip()
                text_errors = [ln[1:].strip() for ln in (el.text or "").splitlines() if ln.startswith("E ")]
                if message == "collection failure" and text_errors:
                    message = text_errors[-1]
                if not message and (el.text or "").strip():
                    message = (el.text or "").strip().splitlines()[-1]
                break
        out[test_id] = (outcome, message)
    return out


def measure_target(target: str, files: list[str], timeout: float) -> dict[str, tuple[str, str]]:
    results: dict[str, tuple[str, str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for f in files:  # one process per file: a hang or crash costs one file, and the runs stay small
            xml = Path(tmp) / (Path(f).stem + ".xml")
            try:
                args = [f, "-q", f"--junitxml={xml}", "-o", "junit_family=xunit1"]
                proc = run(target, args, timeout=timeout, capture=True)
            except subprocess.TimeoutExpired:
                results[f] = ("error", f"timeout after {timeout:.0f} s")
                continue
            if xml.exists():
                file_results = parse_junit(xml)
                if not file_results:
                    tail = (proc.stdout or "").strip().splitlines()[-3:]
                    results[f] = ("error", " / ".join(tail))
                results.update(file_results)
            else:
                results[f] = ("error", (proc.stdout + proc.stderr)[-300:])
            counts = collections.Counter(o for k, (o, _) in results.items() if k.startswith(f))
            print(f"  {target:13s} {f}: {dict(counts)}", flush=True)
    return results


_NORMALIZERS = [
    (re.compile(r"0x[0-9a-f]+"), "0x…"),
    (re.compile(r"'[0-9a-f-]{36}'"), "'<uuid>'"),
    (re.compile(r"\d+"), "N"),
]


def failure_group(message: str) -> str:
    """A short key for a failure message: the missing LangGraph API, or the exception type + message start."""
    m = re.search(r"agent_runtime has no ([\w.\[\]]+)", message)
    if m:
        return f"missing API: {m.group(1)}"
    first = message.strip().splitlines()[0] if message.strip() else "(no message)"
    m = re.match(r"([\w.]+(?:Error|Exception|Interrupt|Exit|Warning|Missing|Failed))\b:?\s*(.*)", first)
    if m:
        kind, rest = m.group(1), m.group(2)
    else:
        kind, rest = "AssertionError" if first.startswith("assert") else "other", first
    for pattern, repl in _NORMALIZERS:
        rest = pattern.sub(repl, rest)
    return f"{kind}: {rest[:90]}"


def recorded_outcomes(column: int) -> dict[str, tuple[str, str]]:
    """One target's outcomes as outcomes.tsv holds them (column 1: LangGraph's)."""
    rows = (line.split("\t") for line in OUTCOMES.read_text().splitlines()[1:])
    return {row[0]: (row[column], "") for row in rows if row[column] != "missing"}


def measure(timeout: float, targets: tuple[str, ...] = TARGETS) -> int:
    """Run every copied file on `targets`; a target left out keeps its outcomes from outcomes.tsv (LangGraph's
    do not change with agent_runtime: `measure agent_runtime` takes half the time)."""
    files = copied_test_files()
    by_target = {}
    for column, target in enumerate(TARGETS, start=1):
        if target not in targets:
            by_target[target] = recorded_outcomes(column)
            continue
        print(f"== {target}", flush=True)
        by_target[target] = measure_target(target, files, timeout)
    real, ours = by_target["langgraph"], by_target["agent_runtime"]
    with OUTCOMES.open("w") as out:
        out.write("test\tlanggraph\tagent_runtime\tagent_runtime message\n")
        for t in sorted(real.keys() | ours.keys()):
            message = " ".join(ours.get(t, ("", ""))[1].split())[:300]
            out.write(f"{t}\t{real.get(t, ('missing', ''))[0]}\t{ours.get(t, ('missing', ''))[0]}\t{message}\n")
    return report()


def report() -> int:
    """expected_pass.txt and results.md from outcomes.tsv and not_applicable.md."""
    real: dict[str, tuple[str, str]] = {}
    ours: dict[str, tuple[str, str]] = {}
    for line in OUTCOMES.read_text().splitlines()[1:]:
        t, real_outcome, our_outcome, message = [*line.split("\t"), "", "", ""][:4]
        real[t] = (real_outcome, "")
        ours[t] = (our_outcome, message)
    na = not_applicable_ids()

    def applicable(test_id: str) -> bool:
        return not any(test_id == n or test_id.startswith(n + "::") or test_id.startswith(n + "[") for n in na)

    collected = sorted(real.keys() | ours.keys())
    base = sorted(t for t in collected if real.get(t, ("missing", ""))[0] == "passed" and applicable(t))
    passing = [t for t in base if ours.get(t, ("missing", ""))[0] == "passed"]
    failing = [t for t in base if t not in set(passing)]
    EXPECTED.write_text(
        "# LangGraph 1.2.24 tests that pass on LangGraph and through the shim on agent_runtime\n"
        "# (written by `python tests/langgraph_suite/run_suite.py measure`; run by test_langgraph_suite_selection.py)\n"
        + "".join(f"{t}\n" for t in passing)
    )
    groups: collections.Counter[str] = collections.Counter()
    examples: dict[str, str] = {}
    for t in failing:
        outcome, message = ours.get(t, ("missing", ""))
        if outcome == "missing":
            message = "id not collected on agent_runtime (parametrized by objects)"
        prefix = ""
        if outcome == "missing" and ours.get(t.split("::")[0], ("", ""))[0] == "error":  # its file did not import
            outcome, message = ours[t.split("::")[0]]
            prefix = "file fails to import: "
        key = prefix + (failure_group(message) if outcome in ("failed", "error") else f"{outcome}: {message[:80]}")
        groups[key] += 1
        examples.setdefault(key, t)
    per_file = collections.defaultdict(lambda: [0, 0, 0])
    for t in collected:
        f = t.split("::")[0]
        per_file[f][0] += 1
    for t in base:
        per_file[t.split("::")[0]][1] += 1
    for t in passing:
        per_file[t.split("::")[0]][2] += 1
    real_counts = collections.Counter(o for o, _ in real.values())
    ours_counts = collections.Counter(o for o, _ in ours.values())
    na_count = sum(1 for t in collected if not applicable(t))
    pct = 100.0 * len(passing) / len(base) if base else 0.0
    lines = [
        "# LangGraph 1.2.24's tests on agent_runtime: results",
        "",
        "Written by `python tests/langgraph_suite/run_suite.py measure` (do not edit by hand).",
        "",
        f"* test ids collected (union of both runs): **{len(collected)}**",
        f"* outcomes on LangGraph 1.2.24: {dict(real_counts)}",
        f"* outcomes through the shim on agent_runtime: {dict(ours_counts)}",
        f"* not applicable (not_applicable.md) among those: {na_count}",
        f"* **pass on LangGraph (applicable): {len(base)}**",
        f"* **of those, pass on agent_runtime: {len(passing)} = {pct:.1f} %**",
        "",
        "## Why the others fail on agent_runtime (grouped, most tests first)",
        "",
        "`missing API: X` = the test used a LangGraph name the shim has no agent_runtime counterpart for.",
        "",
        "| tests | group | example |",
        "|---:|---|---|",
    ]
    for key, n in groups.most_common():
        lines.append(f"| {n} | {key.replace('|', '/')} | `{examples[key]}` |")
    lines += ["", "## Per file", "", "| file | collected | pass on LangGraph | pass on agent_runtime |"]
    lines.append("|---|---:|---:|---:|")
    for f in sorted(per_file):
        c, b, p = per_file[f]
        lines.append(f"| `{f}` | {c} | {b} | {p} |")
    RESULTS.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[4:10]))
    return 0


def ci(timeout: float) -> int:
    ids = [line for line in EXPECTED.read_text().splitlines() if line and not line.startswith("#")]
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(ids) + "\n")
        argfile = f.name
    try:
        return run("agent_runtime", [f"@{argfile}", "-q"], timeout=timeout).returncode
    finally:
        os.unlink(argfile)


def main(argv: list[str]) -> int:
    if argv and argv[0] == "report":
        return report()
    if not argv or argv[0] not in ("measure", "ci", "run"):
        print(__doc__)
        return 2
    if argv[0] == "measure":
        targets = tuple(argv[1:]) or TARGETS
        return measure(float(os.environ.get("LANGGRAPH_SUITE_FILE_TIMEOUT", "900")), targets)
    if argv[0] == "ci":
        return ci(timeout=float(os.environ.get("LANGGRAPH_SUITE_TIMEOUT", "600")))
    target, args = argv[1], argv[2:]
    if target not in TARGETS:
        print(f"target: one of {TARGETS}")
        return 2
    return run(target, args).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
