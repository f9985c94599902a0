"""``make reproduce-lmm-mms``: the LMM-MMS paper's Section 5 on the Alibaba batch tasks.

Li, Wang, Wang and Zhang, "LMM-MMS", *Mathematics* 2025, Section 5. Each
*user* is one Alibaba v2018 batch task drawn at random from the sample (``alibaba-2018-spar``
conversion of ``../shared/traces/alibaba-2018``): its per-task demand is ``(plan_cpu / 100`` cores,
``plan_mem`` GB of a 100 GB machine``)`` and its bounded number of tasks is ``instance_num``
(Section 5.1 (1)-(2)). The resources form one pool (the paper's "cloud server") of the given
capacity; LMM-MMS (median halving, :func:`fairsim.schedulers.exact.lmm_mms.lmm_mms_pick`) allocates
divisible tasks up to each user's bound. The paper does not say how its baselines DRF and AF treat
the bounds, so both readings are run and reported (``docs/lmm-mms.md``):

* **bounded** (``drf``, ``af``; :mod:`fairsim.schedulers.exact.pool`): progressive filling with the
bounds,
  a user stops at its bound and the others keep rising. On one pool LMM-MMS *equals* bounded DRF
  (an MMS ratio is n times the dominant share), so these cannot show the paper's gains over DRF;
* **unbounded, capped** (``drf-unbounded``, ``af-unbounded``; :func:`unbounded_capped`): the
  allocation computed as if no user had a bound (equal dominant, resp. asset, shares until a
  resource saturates), then each user capped at its bound; what a capped user received beyond it is
  wasted, not redistributed. The paper's probable comparison: with it LMM-MMS is ahead unless a
  resource saturates, as the paper says.

Settings (100 random samples each, Section 5.1 (6)); the seed makes every sample reproducible:

* user scale 50-300 on capacity (100, 100) (Figs. 2 and 5);
* 100 users on capacities (100, 100), (500, 500), (50, 500), (500, 50) (Fig. 3);
* 100 users with 0, 5, 10, 20, 50 % elephants on (100, 100) (Fig. 4). The paper does not define an
  elephant; here it is a task in the top 10 % of the sample by total dominant demand
  ``instance_num * max(cpu / 100, mem / 100)``, and the other users come from the other 90 %;
* sharing degree (Fig. 6): each user's tasks under a mechanism divided by its tasks under the equal
  split ("elementary allocation", each user 1/n of every resource), for 100 and 300 users; sharing
  incentive holds for a user when the ratio is >= 1.

Metrics: utilisation = allocated / capacity per resource (for the capped baselines, the tasks a
user can run: the wasted excess is idle); user completion rate = share of users whose allocation
reaches their bound (Section 5.5). A resource is *saturated* in a sample when LMM-MMS uses all of
it (at least :data:`SATURATED` of the capacity). The paper qualifies its utilisation and
completion-rate claims ("when resources were not saturated", "unless the resource was
saturated"); the report checks the utilisation claim per resource, on the samples where LMM-MMS
leaves that resource unsaturated, and the completion-rate claim on the samples where it saturates
no resource ("not applicable" when there are none).

Outputs in ``OUT`` (default ``results/lmm-mms``): ``samples.parquet`` (one row per sample,
mechanism and setting: ``util_cpu``, ``util_mem``, ``completion_rate``, and the sample's
``saturated_cpu`` / ``saturated_mem`` under LMM-MMS), ``sharing.parquet``, ``fig2.png`` ...
``fig6.png`` and ``report.md`` (PASS / FAIL / not applicable per statement of the paper, against
each family of baselines).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd
import pyarrow as pa
from matplotlib.figure import Figure
from tqdm import tqdm

from fairsim.atomic import write_text
from fairsim.scenario.reporting.plotting import save_figure
from fairsim.schedulers.exact import solve_exact
from fairsim.schedulers.exact.lmm_mms import lmm_mms_pick
from fairsim.schedulers.instance import Instance
from fairsim.simulator.results import write_table

log = logging.getLogger(__name__)

#: Bounded baselines: progressive filling that respects every user's task bound.
BOUNDED = ("drf", "af")
#: Unbounded baselines: the allocation without bounds, each user then capped at its bound.
UNBOUNDED = ("drf-unbounded", "af-unbounded")
MECHANISMS = ("lmm-mms", *BOUNDED, *UNBOUNDED)
#: The two readings of the paper's baselines, as the report names them.
FAMILIES = {"bounded": BOUNDED, "unbounded, capped": UNBOUNDED}
LABELS = {
    "lmm-mms": "LMM-MMS",
    "drf": "DRF (bounded)",
    "af": "AF (bounded)",
    "drf-unbounded": "DRF (unbounded, capped)",
    "af-unbounded": "AF (unbounded, capped)",
}
#: A resource is saturated in a sample when LMM-MMS uses at least this share of it.
SATURATED = 1 - 1e-6
#: "Nearly 100 %" (Fig. 2a) and the tolerance around "80-85 %" (Fig. 2b).
NEAR_FULL = 0.95
BAND_TOLERANCE = 0.025
#: Fig. 3: the paper's advantage of LMM-MMS with very different capacities, lowest and highest.
PAPER_ADVANTAGE = (0.123, 0.1559)
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


def unbounded_capped(name: str, inst: Instance) -> np.ndarray:
    """DRF or AF ignoring the task bounds, then capped at them; the excess is wasted.

    The allocation of ``name`` (``"drf"`` or ``"af"``, :mod:`fairsim.schedulers.exact.pool`) is
    computed with every ``max_tasks`` set to infinity (equal weighted dominant, resp. asset, shares
    over the pool until a resource saturates); then each user keeps ``min(x_n, max_tasks_n)``. What
    a capped user received beyond its bound is not given to anyone else. This is the reading of the
    LMM-MMS paper's baselines under which its Section 5 gains are possible (``docs/lmm-mms.md``).

    Parameters
    ----------
    name : {"drf", "af"}
    inst : Instance
        One-pool instance with the users' bounds in ``max_tasks``.

    Returns
    -------
    ndarray, shape (n_users,)
        Tasks per user, at most ``max_tasks``.
    """
    free = dataclasses.replace(inst, max_tasks=np.full(inst.max_tasks.shape, np.inf))
    return np.minimum(solve_exact(name, free)[:, 0], inst.max_tasks)


def allocate(sample: pd.DataFrame, capacity: tuple[float, float]) -> dict[str, np.ndarray]:
    """Tasks per user of every mechanism of :data:`MECHANISMS` on one pool; also the equal split
    (``"equal"``: each user 1/n of every resource, up to its bound)."""
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
    for name in BOUNDED:
        out[name] = solve_exact(name, inst)[:, 0]
    for name, base in zip(UNBOUNDED, BOUNDED, strict=True):
        out[name] = unbounded_capped(base, inst)
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


def sample_metrics(
    alloc: dict[str, np.ndarray], sample: pd.DataFrame, capacity: tuple[float, float]
) -> list[dict[str, Any]]:
    """One row per mechanism of :data:`MECHANISMS` for one sample: ``mechanism``,
    ``util_cpu``, ``util_mem``, ``completion_rate``, and the sample's ``saturated_cpu`` /
    ``saturated_mem`` (the resource is used to at least :data:`SATURATED` of its capacity by
    LMM-MMS; the same in every row of the sample).

    Parameters
    ----------
    alloc : dict
        Tasks per user of every mechanism (:func:`allocate`).
    sample : pandas.DataFrame
        The users (``cpu``, ``mem``, ``n``).
    capacity : tuple of float
        Pool capacity (cores, GB).
    """
    lmm = _metrics(alloc["lmm-mms"], sample, capacity)
    return [
        {
            "mechanism": mech,
            **_metrics(alloc[mech], sample, capacity),
            "saturated_cpu": lmm["util_cpu"] >= SATURATED,
            "saturated_mem": lmm["util_mem"] >= SATURATED,
        }
        for mech in MECHANISMS
    ]


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
            setting = {
                "figure": spec["figure"],
                "users": spec["users"],
                "capacity": "({:g}, {:g})".format(*spec["capacity"]),
                "elephants": np.nan if spec["elephants"] is None else spec["elephants"],
                "sample": s,
            }
            rows += [{**setting, **r} for r in sample_metrics(alloc, sample, spec["capacity"])]
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
            width = 0.8 / len(MECHANISMS)
            for i, mech in enumerate(MECHANISMS):
                offset = (i - (len(MECHANISMS) - 1) / 2) * width
                ax.bar(xs + offset, 100 * m[mech], width=width, label=LABELS[mech])
            ax.set_xticks(
                xs, [str(v) if by != "elephants" else f"{100 * v:.0f} %" for v in m.index]
            )
            ax.set_xlabel(xlabel)
            ax.set_ylabel(label)
            ax.set_ylim(0, 105)
            ax.grid(alpha=0.3, axis="y")
        axes[0].legend(fontsize=7, loc="lower left")
        f.suptitle(f"LMM-MMS paper {fig.replace('fig', 'Fig. ')}: mean utilisation over samples")
        save_figure(f, out / f"{fig}.png")
    f = Figure(figsize=(6, 4))
    ax = f.subplots()
    m = _mean(frame, "fig2", "users", "completion_rate")
    for mech in MECHANISMS:
        ax.plot(m.index, 100 * m[mech], marker="o", label=LABELS[mech])
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
            ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", label=LABELS[mech])
        ax.axvline(1.0, color="k", linewidth=0.8, linestyle=":")
        ax.set_xscale("log")
        ax.set_xlabel("tasks / tasks under the equal split")
        ax.set_ylabel("fraction of users")
        ax.set_title(f"{n} users")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    f.suptitle("Sharing degree CDF (Fig. 6)")
    save_figure(f, out / "fig6.png")


#: One row of the report's statement table: statement, baselines it is judged against ("—" when
#: it concerns LMM-MMS alone), result (PASS / FAIL / not applicable), what we measured.
Check = tuple[str, str, str, str]

_TOL = 1e-9


def _table(m: pd.DataFrame, fmt: str) -> list[str]:
    lines = [
        "| setting | " + " | ".join(LABELS[x] for x in MECHANISMS) + " |",
        "|---|" + "---|" * len(MECHANISMS),
    ]
    for idx, row in m.iterrows():
        lines.append(
            f"| {idx} | " + " | ".join(fmt.format(100 * row[x]) for x in MECHANISMS) + " |"
        )
    return lines


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def _pcts(values: pd.Series, unit: str = "") -> str:
    return ", ".join(f"{k}{unit}: {100 * v:.1f} %" for k, v in values.items())


def _ahead(lmm: dict[str, float], base: dict[str, float]) -> bool:
    """LMM-MMS at least as high as ``base`` on every metric and higher on at least one."""
    return all(lmm[k] >= base[k] - _TOL for k in lmm) and any(lmm[k] > base[k] + _TOL for k in lmm)


def _lmm_samples(frame: pd.DataFrame, fig: str) -> pd.DataFrame:
    return frame[(frame["figure"] == fig) & (frame["mechanism"] == "lmm-mms")]


def _unsaturated(frame: pd.DataFrame, fig: str) -> tuple[pd.DataFrame, str]:
    """Rows of ``fig``'s samples where LMM-MMS saturates no resource, and a sentence counting
    them."""
    f = frame[frame["figure"] == fig]
    free = f[~(f["saturated_cpu"] | f["saturated_mem"])]
    lmm = _lmm_samples(frame, fig)
    note = (
        f"{int((free['mechanism'] == 'lmm-mms').sum())} of {len(lmm)} samples with no saturated "
        f"resource under LMM-MMS (CPU saturated in {int(lmm['saturated_cpu'].sum())}, memory in "
        f"{int(lmm['saturated_mem'].sum())})"
    )
    return free, note


def _utilisation_checks(frame: pd.DataFrame) -> list[Check]:
    out: list[Check] = []
    cpu = _mean(frame, "fig2", "users", "util_cpu")["lmm-mms"]
    mem = _mean(frame, "fig2", "users", "util_mem")["lmm-mms"]
    out.append(
        (
            "Fig. 2a: LMM-MMS keeps CPU utilisation near 100 % at every scale, 50-300 users "
            f"(>= {100 * NEAR_FULL:.0f} % here)",
            "—",
            _verdict(bool((cpu >= NEAR_FULL).all())),
            "LMM-MMS " + _pcts(cpu, " users"),
        )
    )
    lo, hi = 0.80 - BAND_TOLERANCE, 0.85 + BAND_TOLERANCE
    out.append(
        (
            "Fig. 2b: LMM-MMS memory utilisation around 80-85 % at every scale "
            f"(within {100 * BAND_TOLERANCE:.1f} points here)",
            "—",
            _verdict(bool(((mem >= lo) & (mem <= hi)).all())),
            "LMM-MMS " + _pcts(mem, " users"),
        )
    )
    # utilisation is per resource, so the qualifier is read per resource: on every resource,
    # the Fig. 2 samples where LMM-MMS does not saturate it
    f2 = frame[frame["figure"] == "fig2"]
    lmm2 = _lmm_samples(frame, "fig2")
    per: dict[str, dict[str, float]] = {}
    counts = []
    for name, col in (("CPU", "cpu"), ("memory", "mem")):
        sub = f2[~f2[f"saturated_{col}"]]
        counts.append(f"{name} in {int((~lmm2[f'saturated_{col}']).sum())}")
        if len(sub):
            g = sub.groupby("mechanism")[f"util_{col}"].mean()
            per[name] = {m: float(g[m]) for m in MECHANISMS}
    note = f"not saturated under LMM-MMS, of {len(lmm2)} Fig. 2 samples: " + ", ".join(counts)
    text = (
        "Fig. 2: when resources are not saturated, LMM-MMS's utilisation is above DRF's and AF's "
        "(per resource, mean over the samples where LMM-MMS leaves it unsaturated)"
    )
    for fam, mechs in FAMILIES.items():
        if not per:
            out.append((text, fam, "not applicable", f"no resource qualifies: {note}"))
            continue
        ok = all(u["lmm-mms"] > u[b] + _TOL for u in per.values() for b in mechs)
        out.append(
            (
                text,
                fam,
                _verdict(ok),
                f"{note}; there: "
                + "; ".join(
                    f"{name} "
                    + ", ".join(f"{LABELS[m]} {100 * u[m]:.1f} %" for m in ("lmm-mms", *mechs))
                    for name, u in per.items()
                ),
            )
        )
    both = {k: _mean(frame, "fig3", "capacity", k) for k in ("util_cpu", "util_mem")}
    caps = list(both["util_cpu"].index)
    balanced = [c for c in caps if c in ("(100, 100)", "(500, 500)")]
    unbalanced = [c for c in caps if c not in balanced]
    for fam, mechs in FAMILIES.items():
        best = {k: m[list(mechs)].max(axis=1) for k, m in both.items()}
        ok = all(both[k].loc[c, "lmm-mms"] >= best[k].loc[c] - _TOL for c in balanced for k in both)
        out.append(
            (
                "Fig. 3: with balanced capacities LMM-MMS is at least as good as DRF and AF "
                "(CPU and memory)",
                fam,
                _verdict(ok),
                "; ".join(
                    f"{c}: LMM-MMS {100 * both['util_cpu'].loc[c, 'lmm-mms']:.1f} / "
                    f"{100 * both['util_mem'].loc[c, 'lmm-mms']:.1f} %, best other "
                    f"{100 * best['util_cpu'].loc[c]:.1f} / {100 * best['util_mem'].loc[c]:.1f} %"
                    for c in balanced
                ),
            )
        )
        gains = {}
        for c in unbalanced:
            rel = {
                k: (both[k].loc[c, "lmm-mms"] - best[k].loc[c]) / best[k].loc[c]
                if best[k].loc[c] > 0
                else 0.0
                for k in both
            }
            gains[c] = max(rel.items(), key=lambda kv: kv[1])
        out.append(
            (
                "Fig. 3: with very different capacities LMM-MMS is 12.3-15.59 % ahead of the "
                "other mechanisms (relative gain over the best other, on the resource where it is "
                "largest; PASS if >= 12.3 % on every unbalanced capacity)",
                fam,
                _verdict(bool(gains) and all(g >= PAPER_ADVANTAGE[0] for _, g in gains.values())),
                "; ".join(
                    f"{c}: {100 * g:+.1f} % ({'CPU' if k == 'util_cpu' else 'memory'} "
                    f"{100 * both[k].loc[c, 'lmm-mms']:.1f} vs {100 * best[k].loc[c]:.1f} %)"
                    for c, (k, g) in gains.items()
                ),
            )
        )
    four = {k: _mean(frame, "fig4", "elephants", k) for k in ("util_cpu", "util_mem")}
    avg = (four["util_cpu"]["lmm-mms"] + four["util_mem"]["lmm-mms"]) / 2
    top = avg.index.max()
    out.append(
        (
            "Fig. 4: LMM-MMS's utilisation is higher with 50 % elephants than with fewer (mean of "
            "CPU and memory)",
            "—",
            _verdict(bool((avg.loc[top] > avg.drop(top) + _TOL).all())),
            "LMM-MMS "
            + ", ".join(
                f"{100 * e:.0f} %: {100 * v:.1f} %"
                for e, v in zip(avg.index.tolist(), avg.tolist(), strict=True)
            ),
        )
    )
    for fam, mechs in FAMILIES.items():
        ok = True
        gaps = []
        for e in avg.index:
            lmm = {k: float(four[k].loc[e, "lmm-mms"]) for k in four}
            for b in mechs:
                ok &= _ahead(lmm, {k: float(four[k].loc[e, b]) for k in four})
            gaps.append(
                f"{100 * e:.0f} %: "
                + " / ".join(
                    f"{100 * (four[k].loc[e, 'lmm-mms'] - four[k].loc[e, list(mechs)].max()):+.1f}"
                    for k in four
                )
            )
        out.append(
            (
                "Fig. 4: LMM-MMS's utilisation is above DRF's and AF's at every share of "
                "elephants (at least as high on CPU and memory, higher on one)",
                fam,
                _verdict(ok),
                "LMM-MMS minus the best other, CPU / memory points: " + "; ".join(gaps),
            )
        )
    for fam, mechs in FAMILIES.items():
        ok = True
        worst = math.inf
        for fig, by in (("fig2", "users"), ("fig3", "capacity"), ("fig4", "elephants")):
            m = {k: _mean(frame, fig, by, k) for k in ("util_cpu", "util_mem")}
            for idx in m["util_cpu"].index:
                lmm = {k: float(m[k].loc[idx, "lmm-mms"]) for k in m}
                for b in mechs:
                    base = {k: float(m[k].loc[idx, b]) for k in m}
                    ok &= _ahead(lmm, base)
                    worst = min(worst, max(lmm[k] - base[k] for k in m))
        out.append(
            (
                "Section 6: LMM-MMS achieves better resource utilisation than DRF and AF (every "
                "setting of Figs. 2-4: at least as high on CPU and memory, higher on one)",
                fam,
                _verdict(ok),
                f"smallest lead over a baseline on its better resource: {100 * worst:+.2f} points",
            )
        )
    return out


def _completion_checks(frame: pd.DataFrame) -> list[Check]:
    out: list[Check] = []
    free, note = _unsaturated(frame, "fig2")
    f2 = frame[frame["figure"] == "fig2"]
    rate = free.groupby("mechanism")["completion_rate"].mean()
    every = f2.groupby("mechanism")["completion_rate"].mean()
    for fam, mechs in FAMILIES.items():
        info = "; all samples, saturated included (for information): " + ", ".join(
            f"{LABELS[m]} {100 * every[m]:.1f} %" for m in ("lmm-mms", *mechs)
        )
        text = (
            "Fig. 5: LMM-MMS's user completion rate is above DRF's and AF's unless the resource "
            "was saturated (checked on the Fig. 2 samples where no resource saturates under "
            "LMM-MMS)"
        )
        if "lmm-mms" not in rate.index:
            out.append((text, fam, "not applicable", f"no sample qualifies: {note}{info}"))
            continue
        ok = all(rate["lmm-mms"] > rate[b] + _TOL for b in mechs)
        out.append(
            (
                text,
                fam,
                _verdict(ok),
                f"{note}; completion there: "
                + ", ".join(f"{LABELS[m]} {100 * rate[m]:.1f} %" for m in ("lmm-mms", *mechs))
                + info,
            )
        )
    return out


def _sharing_checks(share: pd.DataFrame) -> list[Check]:
    out: list[Check] = []
    below = share.assign(below=share["sharing_degree"] < 1 - _TOL)
    frac = below.groupby(["users", "mechanism"])["below"].mean()
    scales = sorted(share["users"].unique())
    lmm_ok = all(frac[(n, "lmm-mms")] == 0.0 for n in scales)
    out.append(
        (
            "Fig. 6: every user's sharing degree is >= 1 under LMM-MMS (sharing incentive; "
            + ", ".join(str(n) for n in scales)
            + " users)",
            "—",
            _verdict(lmm_ok),
            "users below 1: "
            + "; ".join(
                f"{n} users: "
                + ", ".join(f"{LABELS[m]} {100 * frac[(n, m)]:.1f} %" for m in MECHANISMS)
                for n in scales
            ),
        )
    )
    q = np.linspace(0.01, 0.99, 99)
    for fam, mechs in FAMILIES.items():
        ok = True
        ahead = []
        for n in scales:
            deg = {
                m: np.quantile(
                    share[(share["users"] == n) & (share["mechanism"] == m)]["sharing_degree"], q
                )
                for m in ("lmm-mms", *mechs)
            }
            for b in mechs:
                ge = bool(np.all(deg["lmm-mms"] >= deg[b] * (1 - 1e-9)))
                gt = int(np.sum(deg["lmm-mms"] > deg[b] * (1 + 1e-9)))
                ok &= ge and gt > 0
                ahead.append(
                    f"{n} users vs {LABELS[b]}: {'>=' if ge else 'below at some'}, "
                    f"higher at {gt} of 99"
                )
        out.append(
            (
                "Fig. 6: LMM-MMS's sharing-degree distribution is better than DRF's and AF's "
                "(every percentile at least as high, some higher)",
                fam,
                _verdict(ok),
                "; ".join(ahead),
            )
        )
    return out


def _saturation_table(frame: pd.DataFrame) -> list[str]:
    lmm = frame[frame["mechanism"] == "lmm-mms"]
    lines = [
        "| figure | setting | samples | CPU saturated | memory saturated | neither |",
        "|---|---|---|---|---|---|",
    ]
    for fig, by in (("fig2", "users"), ("fig3", "capacity"), ("fig4", "elephants")):
        f = lmm[lmm["figure"] == fig]
        for idx, g in f.groupby(by, sort=True):
            free = int((~(g["saturated_cpu"] | g["saturated_mem"])).sum())
            setting = f"{100 * cast(float, idx):.0f} % elephants" if by == "elephants" else str(idx)
            lines.append(
                f"| {fig} | {setting} | {len(g)} | {int(g['saturated_cpu'].sum())} | "
                f"{int(g['saturated_mem'].sum())} | {free} |"
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
        "Baselines, two readings (the paper does not say how its DRF and AF treat the task "
        "bounds): **bounded** (`drf`, `af`: progressive filling that stops each user at its "
        "bound, the others keep rising) and **unbounded, capped** (`drf-unbounded`, "
        "`af-unbounded`: the allocation as if no user had a bound, then each user capped at its "
        "bound; the excess is wasted). Every statement that compares LMM-MMS with DRF and AF is "
        "checked against both. A resource is *saturated* in a sample when LMM-MMS uses all of it "
        f"(>= {100 * SATURATED:g} %); the paper's 'when resources were not saturated' "
        "(utilisation) is checked per resource on the samples where LMM-MMS leaves it "
        "unsaturated, its 'unless the resource was saturated' (completion rate) on the samples "
        "where LMM-MMS saturates no resource.",
        "",
    ]
    for fig, by, title in (
        ("fig2", "users", "Fig. 2: utilisation by number of users, capacity (100, 100)"),
        ("fig3", "capacity", "Fig. 3: utilisation by capacity, 100 users"),
        ("fig4", "elephants", "Fig. 4: utilisation by share of elephants, 100 users"),
    ):
        lines += [f"## {title}", "", f"Paper: {PAPER[fig]}.", ""]
        for metric in ("util_cpu", "util_mem"):
            lines += [f"{'CPU' if metric == 'util_cpu' else 'Memory'} utilisation:", ""]
            lines += [*_table(_mean(frame, fig, by, metric), "{:.1f}"), ""]
        lines.append(f"![{fig}]({fig}.png)")
        lines.append("")
    lines += ["## Saturation under LMM-MMS (samples)", "", *_saturation_table(frame), ""]
    m = _mean(frame, "fig2", "users", "completion_rate")
    lines += ["## Fig. 5: user completion rate (%)", "", f"Paper: {PAPER['fig5']}.", ""]
    lines += ["All samples:", "", *_table(m, "{:.1f}"), ""]
    free, note = _unsaturated(frame, "fig2")
    if len(free):
        lines += [
            f"Samples with no saturated resource ({note}):",
            "",
            *_table(_mean(free, "fig2", "users", "completion_rate"), "{:.1f}"),
            "",
        ]
    else:
        lines += [f"No sample without a saturated resource ({note}).", ""]
    lines += ["![fig5](fig5.png)", ""]
    lines += ["## Fig. 6: sharing degree", "", f"Paper: {PAPER['fig6']}.", ""]
    lines += ["| users | mechanism | min sharing degree | users below 1 (%) |", "|---|---|---|---|"]
    for n in sorted(share["users"].unique()):
        for mech in MECHANISMS:
            g = share[(share["users"] == n) & (share["mechanism"] == mech)]["sharing_degree"]
            below = 100 * float((g < 1 - _TOL).mean())
            lines.append(f"| {n} | {LABELS[mech]} | {g.min():.3f} | {below:.2f} |")
    checks = [*_utilisation_checks(frame), *_completion_checks(frame), *_sharing_checks(share)]
    lines += ["", "![fig6](fig6.png)", "", "## Checks of the paper's statements", ""]
    lines += ["| statement | baselines | result | measured |", "|---|---|---|---|"]
    lines += [f"| {s} | {fam} | {res} | {measured} |" for s, fam, res, measured in checks]
    lines += [
        "",
        "Why LMM-MMS and bounded DRF coincide: on one pool a user's maximin share is "
        "mu_i = min_r (C_r / n) / d_ir, so its MMS ratio x_i / mu_i = n * max_r (x_i d_ir / C_r) "
        "is n times its dominant share; lexicographically max-minimising MMS ratios under task "
        "bounds is then exactly DRF's progressive filling with bounds. The paper's reported gains "
        "over DRF (e.g. 12.3-15.59 % utilisation with unbalanced capacities) cannot come from a "
        "bounded DRF; a DRF that ignores the bounds and caps afterwards (the excess wasted) "
        "gives them, so that is the paper's probable baseline.",
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
    shared: Path, out: Path, *, quick: bool = False, cache_dir: str | None = None
) -> Path:
    """Convert the v2018 sample of ``shared`` once (cached in ``cache_dir``, by default the trace
    cache, :func:`fairsim.scenario.trace_cache.default_cache_dir`) and run the reproduction.

    ``quick``: fewer settings (user scales 50 and 300, elephant shares 0 and 50 %) and 10 samples
    each, for the test suite.
    """
    from fairsim.scenario.config import AlibabaTrace
    from fairsim.scenario.trace_cache import converted_alibaba

    trace = AlibabaTrace(
        format="alibaba-2018-spar",
        path=str(Path(shared) / "traces" / "alibaba-2018" / "spar-derived"),
        cache_dir=cache_dir,
    )
    folder = converted_alibaba(trace, None)
    return run_experiment(
        folder / "tasks.parquet", out, samples=10 if quick else SAMPLES, quick=quick
    )
