"""Run a scenario twice (two pool sizes, same trace and seed), read it back, compare the runs."""

from pathlib import Path

import fairsim
from fairsim.scenario.compare import Comparison


def main(folder: Path) -> Comparison:
    scenario = {
        "name": "demo",
        "trace": {"format": "synthetic", "n_tasks": 400, "duration_s": 3600},
        "cluster": {"servers": 20},
        "schedulers": ["bf-drfh", "ff-drfh", "slots-16"],
    }
    fairsim.simulate(scenario, out=folder / "small")
    fairsim.simulate(scenario, out=folder / "large", overrides=["cluster.servers=40"])

    runs = fairsim.load(folder / "small")  # {"bf-drfh": RunResult, ...}, as simulate returned
    print(runs["bf-drfh"].summary["jct_s"])  # JCT mean and percentiles over completed jobs

    # every (run, scheduler) on the jobs completed under all of them; the rows on the first
    # row's pool (the small run's) are paired with it, the large run's are not
    c = fairsim.compare([folder / "small", folder / "large"], out=folder / "compare")
    print(c.headline())
    return c


if __name__ == "__main__":
    import tempfile

    main(Path(tempfile.mkdtemp()))
