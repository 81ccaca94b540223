#!/usr/bin/env python3
"""Compare a gold episode of the full-size τ-bench retail task here with τ-bench's own Python
episode, on this machine, in one run (docs/benchmarks.md, issue 24).

    python3 internal/taubench/compare.py                          # this engine only
    python3 internal/taubench/compare.py --tau-bench ~/tau-bench  # and τ-bench, side by side

This engine: `go test ./runtime/episode/ -run XXX -bench TauRetail`, the gold episode of
internal/taubench's task (500 users, 1,000 orders, 50 products; a ws.diff(ws.reference)
verifier), "prepared" (setup and the reference's end state made once) and "cold" (both per
episode); the least time per episode of --runs runs.

τ-bench (only with --tau-bench, a checkout of github.com/sierra-research/tau-bench with its
Python requirements installed; nothing of it is copied here): the retail environment of its
test split, task 0, whose gold actions are the ones the task here mirrors. One episode is what
its Env does around an agent's actions: reset (it loads the database), step for each gold tool
action, and calculate_reward (it hashes the database, loads it again, replays the gold actions
and hashes again). The user simulator is replaced by one that says nothing (no model is called),
and litellm, which its module imports, is not needed. The least time of --runs episodes.
"""

import argparse
import os
import re
import subprocess
import sys
import time
import types

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def go_episode(runs):
    """The least ns per episode of each sub-benchmark of BenchmarkTauRetail over runs runs."""
    out = subprocess.run(
        ["go", "test", "./runtime/episode/", "-run", "XXX", "-bench", "TauRetail", "-benchtime", "2s", "-count", str(runs)],
        cwd=ROOT, check=True, capture_output=True, text=True).stdout
    best = {}
    for name, ns in re.findall(r"BenchmarkTauRetail/([\w-]+?)-\d+\s+\d+\s+([\d.]+) ns/op", out):
        best[name] = min(best.get(name, float("inf")), float(ns))
    if set(best) != set(KINDS):
        sys.exit("unexpected benchmark output:\n" + out)
    return best


# The sub-benchmarks of BenchmarkTauRetail: the gold actions from the prepared state, the same
# through the task's Starlark solution, and the gold actions with setup and the reference per
# episode.
KINDS = {"prepared": "gold actions, prepared", "prepared-oracle": "Starlark solution, prepared", "cold": "gold actions, cold"}


class SilentUser:
    """A user simulator that calls no model: τ-bench's Env needs one to reset and to reply."""

    def reset(self, instruction=None):
        return "Hi."

    def step(self, content):
        return "###STOP###"

    def get_total_cost(self):
        return 0.0


def python_episode(checkout, runs):
    """The least seconds per τ-bench retail episode (test task 0, gold actions) over runs."""
    sys.modules.setdefault("litellm", types.SimpleNamespace(completion=None))
    sys.path.insert(0, os.path.abspath(checkout))
    from tau_bench.envs.retail.env import MockRetailDomainEnv

    env = MockRetailDomainEnv(user_strategy="human", user_model="none", task_split="test", task_index=0)
    env.user = SilentUser()
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        env.reset(task_index=0)
        for action in env.task.actions:
            env.step(action)
        reward = env.calculate_reward().reward
        best = min(best, time.perf_counter() - t0)
        if reward != 1.0:
            sys.exit("τ-bench's gold episode did not get reward 1.0")
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tau-bench", metavar="PATH", help="a τ-bench checkout: measure its Python episode too")
    ap.add_argument("--runs", type=int, default=5, help="runs of each side (default 5)")
    args = ap.parse_args()

    go = go_episode(args.runs)
    for kind, what in KINDS.items():
        print(f"coworkenv, {what + ':':29} {go[kind] / 1e3:10.1f} µs")
    if not args.tau_bench:
        print("(give --tau-bench PATH, a τ-bench checkout, to measure its Python episode side by side)")
        return
    py = python_episode(args.tau_bench, args.runs) * 1e9
    print(f"τ-bench, gold actions:                  {py / 1e3:10.1f} µs")
    for kind, what in KINDS.items():
        print(f"τ-bench / coworkenv, {what + ':':29} {py / go[kind]:8.1f}×")


if __name__ == "__main__":
    main()
