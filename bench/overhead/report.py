"""The overhead results as a Markdown table and a PNG bar chart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

HEADER = (
    "| workload | target | p50 ms | p99 ms | added p50 ms | added p99 ms | req/s @32 | p50 ms @32 "
    "| server CPU ms/req |\n|---|---|---:|---:|---:|---:|---:|---:|---:|"
)


def _cpu(row: dict[str, Any]) -> str:
    value = row.get("server_cpu_ms_per_request", row.get("upstream_cpu_ms_per_request"))
    return f"{value:.2f}" if value is not None else "-"


def markdown_table(rows: list[dict[str, Any]]) -> str:
    lines = [HEADER]
    for row in rows:
        seq, conc = row["sequential"], row["concurrent"]
        direct = row["target"] == "direct"
        added = ("-", "-") if direct else (f"{row['added_p50_ms']:+.2f}", f"{row['added_p99_ms']:+.2f}")
        lines.append(
            f"| {row['workload']} | {row['target']} | {seq['p50_ms']:.2f} | {seq['p99_ms']:.2f} | "
            f"{added[0]} | {added[1]} | {conc['rps']:.0f} | {conc['p50_ms']:.1f} | {_cpu(row)} |"
        )
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    # Single-stage variants are left to the table: ten bars a group would not read.
    names = [name for name in dict.fromkeys(r["target"] for r in rows) if " + " not in name]
    cell = {(r["workload"], r["target"]): r for r in rows}
    width = 0.8 / len(names)
    fig, (added, rps) = plt.subplots(1, 2, figsize=(14, 5))
    for i, name in enumerate(names):
        xs = [w + (i - (len(names) - 1) / 2) * width for w in range(len(workloads))]
        found = [cell.get((w, name)) for w in workloads]
        if name != "direct":
            added.bar(xs, [r["added_p50_ms"] if r else 0 for r in found], width, label=name, color=f"C{i}")
        rps.bar(xs, [r["concurrent"]["rps"] if r else 0 for r in found], width, label=name, color=f"C{i}")
    added.axhline(2.0, color="black", linestyle="--", linewidth=1, label="goal: 2 ms")
    added.set_title("added p50 latency vs direct (sequential), ms")
    rps.set_title("requests/s, 32 concurrent (client, server and upstream on 2 cores)")
    for axis in (added, rps):
        axis.set_xticks(range(len(workloads)), workloads)
        axis.grid(axis="y", alpha=0.3)
    added.legend(fontsize=8)
    rps.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
