#!/usr/bin/env bash
# Wheel smoke test (`make wheel-check`, part of `.ci/run`).
#
# Builds the sdist and, from it, the wheel of the committed tree (HEAD, `git archive`: nothing
# untracked or uncommitted gets in) with `python -m build`, checks that the wheel holds exactly one
# import package, `fairsim`, with its data files and LICENSE, installs it NOT editable into a fresh
# venv, and from a folder outside the repository runs
#   * `fairsim --version` (`fairsim X.Y.Z`, fairsim/__init__.py's version; `python -m fairsim.cli`
#     says the same) and reads the installed metadata (version, licence expression and file,
#     authors, classifiers);
#   * `fairsim solve drf` on DRF's worked example (Ghodsi et al., Section 4: one server
#     <9 CPU, 18 GB>, users <1 CPU, 4 GB> and <3 CPU, 1 GB>): 3 and 2 tasks;
#   * a small `fairsim run` (synthetic workload, 10 Table I servers, two schedulers), twice:
#     every output file is written, every task is accounted for, and the two runs are
#     byte-identical;
#   * the Python API: `fairsim.simulate` on a dict with a parameterised entry
#     (`{name: slots, slots: 10}`) and `fairsim.solve` on DRF's example.
# PYTHON: an interpreter with `build` installed (default: the project's .venv).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-$REPO/.venv/bin/python}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fairsim-wheel.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
case "$WORK/" in "$REPO"/*) echo "wheel_smoke: $WORK is inside the repository" >&2; exit 1 ;; esac

step() { printf '== wheel_smoke: %s\n' "$*"; }

step "build sdist + wheel from HEAD ($(git -C "$REPO" rev-parse --short HEAD))"
mkdir -p "$WORK/src" "$WORK/dist" "$WORK/outside"
git -C "$REPO" archive --format=tar HEAD | tar -x -C "$WORK/src"
"$PYTHON" -m build --outdir "$WORK/dist" "$WORK/src" > "$WORK/build.log" 2>&1 \
    || { tail -30 "$WORK/build.log" >&2; echo "wheel_smoke: python -m build failed" >&2; exit 1; }
WHEEL=$(ls "$WORK"/dist/fairsim-*.whl)

step "wheel contents: $(basename "$WHEEL")"
"$PYTHON" - "$WHEEL" <<'EOF'
import sys
import zipfile

names = zipfile.ZipFile(sys.argv[1]).namelist()
top = {n.split("/")[0] for n in names}
dist_info = {t for t in top if t.endswith(".dist-info")}
assert top - dist_info == {"fairsim"}, f"top-level entries besides fairsim: {sorted(top)}"
need = [
    "fairsim/__init__.py", "fairsim/py.typed", "fairsim/atomic.py", "fairsim/errors.py",
    "fairsim/simulator/engine.py", "fairsim/schedulers/registry.py",
    "fairsim/schedulers/exact/__init__.py", "fairsim/traces/google2011.py",
    "fairsim/cli/__init__.py", "fairsim/cli/run.py", "fairsim/configs/drfh-google.yaml",
    "fairsim/configs/sweeps/tiny.yaml",
    *(f"fairsim/experiments/{p}/report_template.md"
      for p in ("drfh", "psdsf", "udrf", "lmm_mms", "bonald_roberts")),
]  # fmt: skip
assert len(dist_info) == 1, dist_info
need.append(f"{next(iter(dist_info))}/licenses/LICENSE")
missing = [n for n in need if n not in names]
assert not missing, f"missing from the wheel: {missing}"
py = [n for n in names if n.endswith(".py")]
print(f"   {len(names)} files, {len(py)} Python modules, one import package: fairsim")
EOF

step "install the wheel (not editable) into a fresh venv"
"$PYTHON" -m venv "$WORK/venv"
VPY="$WORK/venv/bin/python"
"$VPY" -m pip install -q "$WHEEL" > "$WORK/pip.log" 2>&1 \
    || { tail -30 "$WORK/pip.log" >&2; echo "wheel_smoke: pip install failed" >&2; exit 1; }

cd "$WORK/outside"
unset PYTHONPATH FAIRSIM_SHARED
step "imports come from the installed wheel, from $(pwd)"
"$VPY" - "$WORK/venv" <<'EOF'
import importlib.util
import sys
from pathlib import Path

import fairsim
import fairsim.cli
import fairsim.schedulers.exact
import fairsim.simulator.engine
from fairsim.experiments import config_path

venv = Path(sys.argv[1]).resolve()
for mod in (fairsim, fairsim.simulator.engine, fairsim.cli):
    where = Path(mod.__file__).resolve()
    assert venv in where.parents, f"{mod.__name__} imported from {where}, not the venv"
for name in ("simulator", "schedulers", "traces", "experiments", "cli", "configs"):
    assert importlib.util.find_spec(name) is None, f"generic top-level package {name!r} installed"
assert config_path("drfh-google.yaml").is_file()
assert fairsim.Scheduler.__module__ == "fairsim.simulator.scheduler"
print(f"   fairsim {fairsim.__version__} from {Path(fairsim.__file__).parent}")
EOF

step "fairsim --version (and python -m fairsim.cli --version) and the installed metadata"
VERSION=$("$WORK/venv/bin/fairsim" --version)
[ "$("$VPY" -m fairsim.cli --version)" = "$VERSION" ] \
    || { echo "wheel_smoke: python -m fairsim.cli --version differs from fairsim --version" >&2; exit 1; }
"$VPY" - "$VERSION" <<'EOF'
import sys
from importlib.metadata import metadata

import fairsim

assert sys.argv[1] == f"fairsim {fairsim.__version__}", (sys.argv[1], fairsim.__version__)
meta = metadata("fairsim")
assert meta["Version"] == fairsim.__version__, meta["Version"]
assert meta["License-Expression"] == "Apache-2.0", meta["License-Expression"]
assert meta.get_all("License-File") == ["LICENSE"], meta.get_all("License-File")
assert meta["Author"] == "the fairsim developers", meta["Author"]
classifiers = meta.get_all("Classifier") or []
assert "Programming Language :: Python :: 3.11" in classifiers, classifiers
assert "Topic :: Scientific/Engineering" in classifiers, classifiers
print(f"   {sys.argv[1]}; {meta['License-Expression']}; {len(classifiers)} classifiers")
EOF

step "fairsim solve drf: DRF's worked example gives 3 and 2 tasks"
cat > drf.json <<'EOF'
{"resources": ["cpu", "mem"],
 "servers": [{"id": "s", "capacity": [9, 18]}],
 "users": [{"id": "A", "demand": [1, 4]}, {"id": "B", "demand": [3, 1]}]}
EOF
"$WORK/venv/bin/fairsim" solve drf drf.json > drf.out.json
"$VPY" - <<'EOF'
import json
import math

out = json.load(open("drf.out.json"))
assert out["mechanism"] == "drf" and out["users"] == ["A", "B"], out
tasks = [sum(row) for row in out["tasks"]]
assert all(math.isclose(t, e, rel_tol=1e-9) for t, e in zip(tasks, (3, 2), strict=True)), out
print(f"   A: {tasks[0]:g} tasks, B: {tasks[1]:g} tasks")
EOF

step "fairsim run: a small synthetic scenario, twice"
cat > smoke.yaml <<'EOF'
name: wheel-smoke
seed: 1
trace: {format: synthetic, n_tasks: 400, duration_s: 3600}
cluster: {servers: 10, source: table-i}
schedulers: [ff-drfh, slots-14]
EOF
"$WORK/venv/bin/fairsim" run smoke.yaml --out run1 --no-progress
"$WORK/venv/bin/fairsim" run smoke.yaml --out run2 --no-progress > /dev/null
"$VPY" - <<'EOF'
import json
from pathlib import Path

import pandas as pd

run1, run2 = Path("run1"), Path("run2")
summary = json.loads((run1 / "summary.json").read_text())
assert set(summary) == {"ff-drfh", "slots-14"}, summary
for name in ("config.yaml", "servers.parquet", "report.md", "utilization.png"):
    assert (run1 / name).stat().st_size > 0, name
assert len(pd.read_parquet(run1 / "servers.parquet")) == 10
for sched, s in summary.items():
    tasks = pd.read_parquet(run1 / sched / "tasks.parquet")
    assert s["tasks"] == len(tasks) == 400, (sched, s["tasks"], len(tasks))
    done = int(tasks["finish_s"].notna().sum())
    assert s["tasks_completed"] == done and 0 < done <= 400, (sched, s["tasks_completed"], done)
    # every task is accounted for: how each one ended, as in the scheduler's own summary
    ended = json.loads((run1 / sched / "summary.json").read_text())["ended"]
    counts = tasks["ended"].value_counts().to_dict()
    assert sum(ended.values()) == 400 and counts == {k: n for k, n in ended.items() if n}, ended
    for table in ("tasks", "jobs", "users", "utilization"):
        a = (run1 / sched / f"{table}.parquet").read_bytes()
        assert a == (run2 / sched / f"{table}.parquet").read_bytes(), f"{sched}/{table} differs"
    assert sched in (run1 / "report.md").read_text()
print("   both schedulers: 400 tasks each, outputs complete, second run byte-identical")
EOF

step "the Python API: fairsim.simulate with a parameterised entry, fairsim.solve"
"$VPY" - <<'EOF'
import fairsim

cfg = {
    "name": "api-smoke",
    "trace": {"format": "synthetic", "n_tasks": 200, "duration_s": 3600},
    "cluster": {"servers": 5},
    "schedulers": ["bf-drfh", {"name": "slots", "slots": 10}],
}
results = fairsim.simulate(cfg)
assert list(results) == ["bf-drfh", "slots-10"], list(results)
for label, r in results.items():
    assert len(r.tasks) == 200 and r.summary["tasks"] == 200, (label, len(r.tasks))
    assert {"time_s", "cpu", "mem"} <= set(r.utilization.columns), r.utilization.columns
out = fairsim.solve(
    {"resources": ["cpu", "mem"], "servers": [{"id": "s", "capacity": [9, 18]}],
     "users": [{"id": "A", "demand": [1, 4]}, {"id": "B", "demand": [3, 1]}]},
    "drf",
)
assert [round(sum(row), 9) for row in out["tasks"]] == [3, 2], out["tasks"]
print("   simulate: bf-drfh and slots-10 on 200 tasks; solve drf: 3 and 2 tasks")
EOF
step "OK"
