"""Benchmark of the exact allocators (not a test): ``python -m
benchmarks.bench_exact``.

50 users x 200 servers x 3 resources, half the users restricted to 20-150 random servers, 30 % with
a task bound, weights 1-3; prints the wall time of each mechanism (see ``docs/mechanisms.md``).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from fairsim.schedulers.exact import POOLED, solve_exact
from fairsim.schedulers.exact.pool import pooled
from fairsim.schedulers.instance import Instance, parse_instance


def random_instance(n_users: int, n_servers: int, n_res: int, seed: int) -> Instance:
    """A seeded heterogeneous instance with placement constraints and task bounds."""
    rng = np.random.default_rng(seed)
    servers = [
        {"id": f"s{k}", "capacity": rng.choice([0.25, 0.5, 0.75, 1.0], n_res).tolist()}
        for k in range(n_servers)
    ]
    users = []
    for i in range(n_users):
        u: dict = {
            "id": f"u{i}",
            "demand": rng.uniform(0.001, 0.05, n_res).tolist(),
            "weight": int(rng.integers(1, 4)),
        }
        if rng.random() < 0.5:
            low = min(20, max(1, n_servers // 2))
            k = int(rng.integers(low, max(low + 1, min(150, n_servers))))
            u["eligible"] = [f"s{j}" for j in rng.choice(n_servers, k, replace=False)]
        if rng.random() < 0.3:
            u["max_tasks"] = int(rng.integers(10, 500))
        users.append(u)
    res = [f"r{k}" for k in range(n_res)]
    return parse_instance({"resources": res, "servers": servers, "users": users})


def main() -> None:
    """Time each mechanism on one random instance."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--users", type=int, default=50)
    p.add_argument("--servers", type=int, default=200)
    p.add_argument("--resources", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--mechanisms", default="drfh,c-drfh,tsf,lmm-mms,drf,af")
    a = p.parse_args()
    inst = random_instance(a.users, a.servers, a.resources, a.seed)
    for name in a.mechanisms.split(","):
        t0 = time.perf_counter()
        # pooled mechanisms refuse placement constraints: they get the pooled instance
        x = solve_exact(name, pooled(inst) if name in POOLED else inst)
        sys.stdout.write(f"{name:8s} {time.perf_counter() - t0:7.2f} s   {x.sum():10.1f} tasks\n")


if __name__ == "__main__":
    main()
