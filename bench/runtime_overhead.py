"""Per-superstep overhead of agent_runtime vs LangGraph on the same graphs, in the same run.

Graphs (nodes do no work, so the time is the runtime's own overhead):
* loop: one node that increments a counter, with a conditional edge back to itself: 1,000 supersteps;
* parallel: 10 no-op nodes, each with a conditional edge back to itself: 100 supersteps of 10 tasks.
Each in sync (def nodes, invoke) and async (async def nodes, ainvoke) form, without and with an
in-memory checkpointer. Reported: wall time per superstep (median of the repeats) and the ratio.

    python -m bench.runtime_overhead [--repeats 5] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import os
import platform
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypedDict

RESULTS = Path(__file__).resolve().parent / "results"
LOOP_STEPS = 1_000
PARALLEL_NODES = 10
PARALLEL_STEPS = 100
PARALLEL_LIMIT = 1_000  # recursion limit of the parallel graph; RemainingSteps counts down from it
GOAL_RATIO = 10.0


@dataclass(frozen=True)
class Library:
    name: str
    state_graph: Any
    start: str
    end: str
    remaining_steps: Any
    saver: Callable[[], Any]


def libraries() -> list[Library]:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.managed import RemainingSteps

    import agent_runtime as ar

    return [
        Library("agent_runtime", ar.StateGraph, ar.START, ar.END, ar.RemainingSteps, ar.InMemoryCheckpointer),
        Library("langgraph", StateGraph, START, END, RemainingSteps, InMemorySaver),
    ]


class LoopState(TypedDict):
    n: int


def loop_graph(lib: Library, is_async: bool, checkpointer: Any) -> Any:
    def inc(state: LoopState) -> dict[str, int]:
        return {"n": state["n"] + 1}

    async def ainc(state: LoopState) -> dict[str, int]:
        return {"n": state["n"] + 1}

    g = lib.state_graph(LoopState)
    g.add_node("inc", ainc if is_async else inc)
    g.add_edge(lib.start, "inc")
    g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < LOOP_STEPS else lib.end, ["inc", lib.end])
    return g.compile(checkpointer=checkpointer)


def parallel_graph(lib: Library, is_async: bool, checkpointer: Any) -> Any:
    state = TypedDict("state", {"remaining": lib.remaining_steps})  # type: ignore[misc,name-defined]  # noqa: UP013

    def noop(state: Any) -> None:
        return None

    async def anoop(state: Any) -> None:
        return None

    g = lib.state_graph(state)
    for i in range(PARALLEL_NODES):
        name = f"p{i}"
        g.add_node(name, anoop if is_async else noop)
        g.add_edge(lib.start, name)
        # RemainingSteps = limit - step: every node loops for exactly PARALLEL_STEPS supersteps
        g.add_conditional_edges(
            name,
            lambda s, name=name: name if s["remaining"] > PARALLEL_LIMIT - PARALLEL_STEPS else lib.end,
            [name, lib.end],
        )
    return g.compile(checkpointer=checkpointer)


GRAPHS = {"loop": (loop_graph, LOOP_STEPS, {"n": 0}), "parallel": (parallel_graph, PARALLEL_STEPS, {})}


def run_once(lib: Library, graph: str, is_async: bool, with_checkpointer: bool) -> tuple[float, float]:
    """(wall, CPU) seconds per superstep for one invocation (graph built and compiled outside the
    timing). CPU time is the whole process's (all threads), so it stays meaningful on a busy machine."""
    build, steps, inp = GRAPHS[graph]
    app = build(lib, is_async, lib.saver() if with_checkpointer else None)
    config: dict[str, Any] = {
        "recursion_limit": PARALLEL_LIMIT * 2 if graph == "loop" else PARALLEL_LIMIT,
        "configurable": {"thread_id": uuid.uuid4().hex},
    }
    started, cpu_started = time.perf_counter(), time.process_time()
    out = asyncio.run(app.ainvoke(inp, config)) if is_async else app.invoke(inp, config)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    if graph == "loop" and out["n"] != LOOP_STEPS:
        raise AssertionError(f"{lib.name}: loop ran {out['n']} steps")
    return elapsed / steps, cpu / steps


@dataclass
class Row:
    graph: str
    mode: str
    checkpointer: bool
    supersteps: int
    ours_us: float
    langgraph_us: float
    ratio: float
    ours_min_us: float
    langgraph_min_us: float
    ours_cpu_us: float
    langgraph_cpu_us: float
    cpu_ratio: float


def measure(repeats: int, quick: bool) -> list[Row]:
    ours, theirs = libraries()
    rows = []
    variants = [(g, m, c) for g in GRAPHS for m in ("sync", "async") for c in (False, True)]
    for index, (graph, mode, ckpt) in enumerate(variants, 1):
        samples: dict[str, list[float]] = {ours.name: [], theirs.name: []}
        cpu: dict[str, list[float]] = {ours.name: [], theirs.name: []}
        run_once(ours, graph, mode == "async", ckpt)  # warm-up (imports, caches)
        run_once(theirs, graph, mode == "async", ckpt)
        for _ in range(repeats):
            for lib in (ours, theirs):  # interleaved, so load changes hit both
                wall_s, cpu_s = run_once(lib, graph, mode == "async", ckpt)
                samples[lib.name].append(wall_s * 1e6)
                cpu[lib.name].append(cpu_s * 1e6)
        med = {k: statistics.median(v) for k, v in samples.items()}
        med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
        row = Row(
            graph,
            mode,
            ckpt,
            GRAPHS[graph][1],
            round(med[ours.name], 2),
            round(med[theirs.name], 2),
            round(med[theirs.name] / med[ours.name], 1),
            round(min(samples[ours.name]), 2),
            round(min(samples[theirs.name]), 2),
            round(med_cpu[ours.name], 2),
            round(med_cpu[theirs.name], 2),
            round(med_cpu[theirs.name] / med_cpu[ours.name], 1),
        )
        rows.append(row)
        label = f"{graph}/{mode}/{'memory-checkpointer' if ckpt else 'no-checkpointer'}"
        print(
            f"[{index}/{len(variants)}] {label:40s} agent_runtime {row.ours_us:8.1f} us/step   "
            f"langgraph {row.langgraph_us:8.1f} us/step   ratio {row.ratio:5.1f}x   (CPU ratio {row.cpu_ratio:.1f}x)",
            flush=True,
        )
        if quick:
            break
    return rows


def plot(rows: list[Row], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r.graph}\n{r.mode}\n{'ckpt' if r.checkpointer else 'no ckpt'}" for r in rows]
    xs = range(len(rows))
    fig, ax = plt.subplots(figsize=(10, 4.8))
    ax.bar([x - 0.2 for x in xs], [r.langgraph_us for r in rows], width=0.4, label="LangGraph")
    ax.bar([x + 0.2 for x in xs], [r.ours_us for r in rows], width=0.4, label="agent_runtime")
    for x, r in zip(xs, rows, strict=True):
        ax.text(x, r.langgraph_us * 1.1, f"{r.ratio:.0f}x", ha="center", fontsize=9)
    ax.set_yscale("log")
    ax.set_ylabel("overhead per superstep (µs, log scale)")
    ax.set_xticks(list(xs), labels, fontsize=8)
    ax.set_title("Superstep overhead: agent_runtime vs LangGraph (same graphs, same run)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="first variant only, for a smoke test")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for runtime_overhead.{json,png}")
    args = parser.parse_args(argv)
    rows = measure(args.repeats, args.quick)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    result = {
        "benchmark": "runtime_overhead",
        "command": "python -m bench.runtime_overhead",
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "langgraph": importlib.metadata.version("langgraph"),
        "repeats": args.repeats,
        "goal_ratio": GOAL_RATIO,
        "goal_met": all(r.ratio >= GOAL_RATIO for r in rows),
        "load_average": list(os.getloadavg()),
        "rows": [asdict(r) for r in rows],
    }
    if not args.quick:
        (out / "runtime_overhead.json").write_text(json.dumps(result, indent=2) + "\n")
        plot(rows, out / "runtime_overhead.png")
        print(f"wrote {out / 'runtime_overhead.json'} and runtime_overhead.png")
    print("goal (>= 10x in every variant):", "met" if result["goal_met"] else "NOT met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
