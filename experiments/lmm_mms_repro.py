"""``make reproduce-lmm-mms``: the LMM-MMS paper's Section 5 on the Alibaba batch tasks.

Li, Wang, Wang and Zhang, "LMM-MMS", *Mathematics* 2025, Section 5 (``../shared/papers``). Each
*user* is one Alibaba v2018 batch task drawn at random from the sample (``alibaba-2018-spar``
conversion of ``../shared/traces/alibaba-2018``): its per-task demand is ``(plan_cpu / 100`` cores,
``plan_mem`` GB of a 100 GB machine``)`` and its bounded number of tasks is ``instance_num``
(Section 5.1 (1)-(2)). The resources form one pool (the paper's "cloud server") of the given
capacity; LMM-MMS (median halving, :func:`schedulers.exact.lmm_mms.lmm_mms_pick`), DRF and AF
(:mod:`schedulers.exact.pool`) allocate divisible tasks up to each user's bound.

Settings (100 random samples each, Section 5.1 (6)); the seed makes every sample reproducible:

* user scale 50-300 on capacity (100, 100) (Figs. 2 and 5);
* 100 users on capacities (100, 100), (500, 500), (50, 500), (500, 50) (Fig. 3);
* 100 users with 0, 5, 10, 20, 50 % elephants on (100, 100) (Fig. 4). The paper does not define an
  elephant; here it is a task in the top 10 % of the sample by total dominant demand
  ``instance_num * max(cpu / 100, mem / 100)``, and the other users come from the other 90 %;
* sharing degree (Fig. 6): each user's tasks under a mechanism divided by its tasks under the equal
  split ("elementary allocation", each user 1/n of every resource), for 100 and 300 users; sharing
  incentive holds for a user when the ratio is >= 1.

Metrics: utilisation = allocated / capacity per resource; user completion rate = share of users
whose allocation reaches their bound (Section 5.5).

Outputs in ``OUT`` (default ``results/lmm-mms``): ``samples.parquet`` (one row per sample,
mechanism and setting), ``sharing.parquet``, ``fig2.png`` ... ``fig6.png`` and ``report.md``.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from matplotlib.figure import Figure
from tqdm import tqdm

from experiments.figures import save_figure
from schedulers.exact import solve_exact
from schedulers.exact.lmm_mms import lmm_mms_pick
from schedulers.instance import Instance
from simulator.atomic import write_text
from simulator.results import write_table

log = logging.getLogger(__name__)

MECHANISMS = ("lmm-mms", "drf", "af")
USER_SCALES = (50, 100, 150, 200, 250, 300)
CAPACITIES = ((100.0, 100.0), (500.0, 500.0), (50.0, 500.0), (500.0, 50.0))
ELEPHANT_SHARES = (0.0, 0.05, 0.10, 0.20, 0.50)
ELEPHANT_QUANTILE = 0.90
SAMPLES = 100
SEED = 1
CORES_PER_MACHINE = 96.0  # canonical cpu = plan_cpu / 100 / 96 (docs/traces-alibaba.md)
GB_PER_MACHINE = 100.0  # canonical mem = plan_mem / 100, machines have 100 (normalised) GB

#: What the paper reports (Section 5), for the report.
PAPER = {
    "fig2": "LMM-MMS keeps CPU utilisation near 100 % at every scale (50-300 users) and memory at "
    "80-85 %; above DRF and AF while resources are not saturated",
    "fig3": "LMM-MMS at least as good as DRF/AF on balanced capacities; 12.3-15.59 % better when "
    "the capacities differ a lot",
    "fig4": "LMM-MMS utilisation grows with the share of elephants and stays above DRF/AF",
    "fig5": "LMM-MMS user completion rate above DRF and AF unless resources are saturated",
    "fig6": "every user's sharing degree >= 1 under LMM-MMS (sharing incentive)",
}


def load_users(tasks_parquet: Path) -> pd.DataFrame:
    """The population of users: one row per batch task, demand in cores and GB, bound.

    Returns
    -------
    pandas.DataFrame
        Columns ``cpu`` (cores), ``mem`` (GB), ``n`` (instance_num), ``elephant`` (bool).
    """
    t = pd.read_parquet(tasks_parquet, columns=["cpu", "mem", "instances"])
    t = t[(t["cpu"] > 0) & (t["mem"] > 0) & (t["instances"] > 0)]
    users = pd.DataFrame(
        {
            "cpu": t["cpu"].to_numpy() * CORES_PER_MACHINE,
            "mem": t["mem"].to_numpy() * GB_PER_MACHINE,
            "n": t["instances"].to_numpy(dtype=np.float64),
        }
    )
    size = users["n"] * np.maximum(users["cpu"] / 100.0, users["mem"] / 100.0)
    users["elephant"] = size >= size.quantile(ELEPHANT_QUANTILE)
    return users.reset_index(drop=True)


def draw(
    users: pd.DataFrame, n: int, rng: np.random.Generator, elephants: float | None
) -> pd.DataFrame:
    """``n`` users drawn with replacement; with ``elephants``, that share from the elephants."""
    if elephants is None:
        return users.iloc[rng.integers(0, len(users), n)]
    big = users.index[users["elephant"]].to_numpy()
    small = users.index[~users["elephant"]].to_numpy()
    k = round(elephants * n)
    pick = np.concatenate([rng.choice(big, k), rng.choice(small, n - k)])
    return users.loc[pick]


def allocate(sample: pd.DataFrame, capacity: tuple[float, float]) -> dict[str, np.ndarray]:
    """Tasks per user of every mechanism on one pool; also the equal split (``"equal"``)."""
    n = len(sample)
    d = sample[["cpu", "mem"]].to_numpy()
    inst = Instance(
        resources=("cpu", "mem"),
        server_ids=("pool",),
        user_ids=tuple(f"u{i}" for i in range(n)),
        capacity=np.array([capacity], dtype=np.float64),
        demand=d,
        weight=np.ones(n),
        max_tasks=sample["n"].to_numpy(dtype=np.float64),
        eligible=np.ones((n, 1), dtype=bool),
    )
    out = {"lmm-mms": lmm_mms_pick(inst)[:, 0]}
    for name in ("drf", "af"):
        out[name] = solve_exact(name, inst)[:, 0]
    cap = np.asarray(capacity)
    out["equal"] = np.minimum(inst.max_tasks, ((cap / n) / d).min(axis=1))
    return out


def _metrics(
    x: np.ndarray, sample: pd.DataFrame, capacity: tuple[float, float]
) -> dict[str, float]:
    d = sample[["cpu", "mem"]].to_numpy()
    used = x @ d
    return {
        "util_cpu": float(used[0] / capacity[0]),
        "util_mem": float(used[1] / capacity[1]),
        "completion_rate": float(np.mean(x >= sample["n"].to_numpy() * (1 - 1e-9))),
    }


def settings(quick: bool) -> list[dict[str, Any]]:
    """Every (figure, users, capacity, elephant share) setting of Section 5."""
    scales = (50, 300) if quick else USER_SCALES
    out: list[dict[str, Any]] = [
        {"figure": "fig2", "users": u, "capacity": CAPACITIES[0], "elephants": None} for u in scales
    ]
    out += [{"figure": "fig3", "users": 100, "capacity": c, "elephants": None} for c in CAPACITIES]
    shares = (0.0, 0.5) if quick else ELEPHANT_SHARES
    out += [
        {"figure": "fig4", "users": 100, "capacity": CAPACITIES[0], "elephants": e} for e in shares
    ]
    return out


def run_experiment(
    tasks_parquet: Path, out: Path, *, samples: int = SAMPLES, seed: int = SEED, quick: bool = False
) -> Path:
    """Run every setting, write the tables, figures and ``report.md``; return the report path."""
    t0 = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    users = load_users(tasks_parquet)
    rows: list[dict[str, Any]] = []
    sharing: list[pd.DataFrame] = []
    specs = settings(quick)
    children = np.random.SeedSequence(seed).spawn(len(specs))
    for spec, child in tqdm(
        list(zip(specs, children, strict=True)), desc="lmm-mms settings", unit="setting"
    ):
        rng = np.random.default_rng(child)
        for s in range(samples):
            sample = draw(users, spec["users"], rng, spec["elephants"])
            alloc = allocate(sample, spec["capacity"])
            for mech in MECHANISMS:
                rows.append(
                    {
                        "figure": spec["figure"],
                        "users": spec["users"],
                        "capacity": "({:g}, {:g})".format(*spec["capacity"]),
                        "elephants": np.nan if spec["elephants"] is None else spec["elephants"],
                        "sample": s,
                        "mechanism": mech,
                        **_metrics(alloc[mech], sample, spec["capacity"]),
                    }
                )
            if spec["figure"] == "fig2" and spec["users"] in (100, 300, 50):
                eq = alloc["equal"]
                for mech in MECHANISMS:
                    sharing.append(
                        pd.DataFrame(
                            {
                                "users": spec["users"],
                                "mechanism": mech,
                                "sample": s,
                                "sharing_degree": alloc[mech] / np.maximum(eq, 1e-300),
                            }
                        )
                    )
    frame = pd.DataFrame(rows)
    share = pd.concat(sharing, ignore_index=True)
    write_table(pa.Table.from_pandas(frame, preserve_index=False), out / "samples.parquet")
    write_table(pa.Table.from_pandas(share, preserve_index=False), out / "sharing.parquet")
    _figures(frame, share, out)
    path = _report(frame, share, out, samples, time.perf_counter() - t0, quick)
    log.info("lmm-mms: report in %s", path)
    return path


def _mean(frame: pd.DataFrame, fig: str, by: str, metric: str) -> pd.DataFrame:
    f = frame[frame["figure"] == fig]
    return f.groupby([by, "mechanism"])[metric].mean().unstack("mechanism")[list(MECHANISMS)]


def _figures(frame: pd.DataFrame, share: pd.DataFrame, out: Path) -> None:
    for fig, by, xlabel in (
        ("fig2", "users", "number of users"),
        ("fig3", "capacity", "pool capacity (CPU cores, memory GB)"),
        ("fig4", "elephants", "share of elephant users"),
    ):
        f = Figure(figsize=(9, 3.6))
        axes = f.subplots(1, 2)
        for ax, metric, label in zip(
            axes,
            ("util_cpu", "util_mem"),
            ("CPU utilisation (%)", "memory utilisation (%)"),
            strict=True,
        ):
            m = _mean(frame, fig, by, metric)
            xs = np.arange(len(m))
            for i, mech in enumerate(MECHANISMS):
                ax.bar(xs + (i - 1) * 0.27, 100 * m[mech], width=0.27, label=mech)
            ax.set_xticks(
                xs, [str(v) if by != "elephants" else f"{100 * v:.0f} %" for v in m.index]
            )
            ax.set_xlabel(xlabel)
            ax.set_ylabel(label)
            ax.set_ylim(0, 105)
            ax.grid(alpha=0.3, axis="y")
        axes[0].legend(fontsize=8)
        f.suptitle(f"LMM-MMS paper {fig.replace('fig', 'Fig. ')}: mean utilisation over samples")
        save_figure(f, out / f"{fig}.png")
    f = Figure(figsize=(6, 4))
    ax = f.subplots()
    m = _mean(frame, "fig2", "users", "completion_rate")
    for mech in MECHANISMS:
        ax.plot(m.index, 100 * m[mech], marker="o", label=mech)
    ax.set_xlabel("number of users")
    ax.set_ylabel("users reaching their task bound (%)")
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title("User completion rate (Fig. 5)")
    save_figure(f, out / "fig5.png")
    scales = sorted(share["users"].unique())
    f = Figure(figsize=(4.5 * len(scales), 4))
    axes = np.atleast_1d(f.subplots(1, len(scales)))
    for ax, n in zip(axes, scales, strict=True):
        for mech in MECHANISMS:
            v = np.sort(
                share[(share["users"] == n) & (share["mechanism"] == mech)]["sharing_degree"]
            )
            ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", label=mech)
        ax.axvline(1.0, color="k", linewidth=0.8, linestyle=":")
        ax.set_xscale("log")
        ax.set_xlabel("tasks / tasks under the equal split")
        ax.set_ylabel("fraction of users")
        ax.set_title(f"{n} users")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    f.suptitle("Sharing degree CDF (Fig. 6)")
    save_figure(f, out / "fig6.png")


def _table(m: pd.DataFrame, fmt: str) -> list[str]:
    lines = ["| setting | " + " | ".join(MECHANISMS) + " |", "|---|" + "---|" * len(MECHANISMS)]
    for idx, row in m.iterrows():
        lines.append(
            f"| {idx} | " + " | ".join(fmt.format(100 * row[x]) for x in MECHANISMS) + " |"
        )
    return lines


def _report(
    frame: pd.DataFrame, share: pd.DataFrame, out: Path, samples: int, wall: float, quick: bool
) -> Path:
    lines = [
        "# LMM-MMS paper, Section 5, on the Alibaba v2018 batch tasks",
        "",
        f"{samples} samples per setting{' (quick run: fewer settings)' if quick else ''}; "
        f"wall time {wall:.0f} s. Users are Alibaba batch tasks: demand (plan_cpu/100 cores, "
        "plan_mem GB), bound instance_num. Numbers are means over samples (%).",
        "",
    ]
    checks: list[tuple[str, bool, str]] = []
    for fig, by, title in (
        ("fig2", "users", "Fig. 2: utilisation by number of users, capacity (100, 100)"),
        ("fig3", "capacity", "Fig. 3: utilisation by capacity, 100 users"),
        ("fig4", "elephants", "Fig. 4: utilisation by share of elephants, 100 users"),
    ):
        lines += [f"## {title}", "", f"Paper: {PAPER[fig]}.", ""]
        for metric in ("util_cpu", "util_mem"):
            lines += [f"{'CPU' if metric == 'util_cpu' else 'Memory'} utilisation:", ""]
            m = _mean(frame, fig, by, metric)
            lines += [*_table(m, "{:.1f}"), ""]
            ok = bool((m["lmm-mms"] >= m[["drf", "af"]].max(axis=1) - 1e-6).all())
            checks.append((f"{fig} {metric}: LMM-MMS >= max(DRF, AF) in every setting", ok, ""))
        lines.append(f"![{fig}]({fig}.png)")
        lines.append("")
    m = _mean(frame, "fig2", "users", "completion_rate")
    lines += ["## Fig. 5: user completion rate (%)", "", f"Paper: {PAPER['fig5']}.", ""]
    lines += [*_table(m, "{:.1f}"), "", "![fig5](fig5.png)", ""]
    checks.append(
        (
            "fig5: LMM-MMS completion rate >= max(DRF, AF)",
            bool((m["lmm-mms"] >= m[["drf", "af"]].max(axis=1) - 1e-9).all()),
            "",
        )
    )
    lines += ["## Fig. 6: sharing degree", "", f"Paper: {PAPER['fig6']}.", ""]
    lines += ["| users | mechanism | min sharing degree | users below 1 (%) |", "|---|---|---|---|"]
    for (n, mech), g in share.groupby(["users", "mechanism"]):
        below = 100 * float((g["sharing_degree"] < 1 - 1e-9).mean())
        lines.append(f"| {n} | {mech} | {g['sharing_degree'].min():.3f} | {below:.2f} |")
        if mech == "lmm-mms":
            checks.append((f"fig6: sharing incentive for every user ({n} users)", below == 0.0, ""))
    lines += ["", "![fig6](fig6.png)", "", "## Checks of the paper's statements", ""]
    lines += ["| statement | result |", "|---|---|"]
    lines += [f"| {s} | {'PASS' if ok else 'FAIL'} |" for s, ok, _ in checks]
    lines += [
        "",
        "Why LMM-MMS and DRF coincide here: on one pool a user's maximin share is "
        "mu_i = min_r (C_r / n) / d_ir, so its MMS ratio x_i / mu_i = n * max_r (x_i d_ir / C_r) "
        "is n times its dominant share; lexicographically max-minimising MMS ratios under task "
        "bounds is then exactly DRF's progressive filling with bounds. The paper's reported gains "
        "over DRF (e.g. 12.3-15.59 % utilisation with unbalanced capacities) cannot come from the "
        "mechanisms' definitions on a single pool; they must come from its DRF implementation, "
        "which the paper does not describe.",
        "",
        "Where we differ: the paper draws users from 'the actual probability distribution' of "
        "batch_task without giving it; we draw real rows of the one-hour v2018 sample, whose tasks "
        "are CPU-bound (median 1 core, 0.3 GB), so CPU saturates for every mechanism and memory is "
        "where they differ. Its elephant definition is not given either (ours: top 10 % by total "
        "dominant demand).",
        "",
    ]
    return write_text(out / "report.md", "\n".join(lines))


def run_from_shared(
    shared: Path, out: Path, *, quick: bool = False, cache_dir: str = "results/cache"
) -> Path:
    """Convert the v2018 sample of ``shared`` once (cached) and run the reproduction.

    ``quick``: fewer settings (user scales 50 and 300, elephant shares 0 and 50 %) and 10 samples
    each, for the test suite.
    """
    from experiments.run import converted_alibaba
    from simulator.config import TraceConfig

    trace = TraceConfig(
        format="alibaba-2018-spar",
        path=str(Path(shared) / "traces" / "alibaba-2018" / "spar-derived"),
        cache_dir=cache_dir,
    )
    folder = converted_alibaba(trace, None)
    return run_experiment(
        folder / "tasks.parquet", out, samples=10 if quick else SAMPLES, quick=quick
    )
