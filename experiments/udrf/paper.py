"""What the UDRF paper states in its Section V, used by the claims and figures, and our thresholds.

Source: W. Tahir, S. Yang, A. Koliousis, J. McCann, "UDRF: Multi-resource Fairness for Complex
Jobs with Placement Constraints", Section V "Evaluation" (Figs. 6-10). The figures give no
numbers in the text; every statement below is quoted from the text beside them. Shares are
fractions in [0, 1]; times are in seconds.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Final

from fairsim.experiments.claims import Printed, load_statements
from fairsim.experiments.kit import Template

#: The blocks of ``statements.md`` (beside this module) by name; ``text.*``: prose (quotes,
#: our readings, the claims' reasons).
TEXT: Final = MappingProxyType(Template(Path(__file__).with_name("statements.md")).blocks)

#: Section V set-up: the trace and the workload rules (the scenario's comments map each to
#: ``configs/udrf-google.yaml``).
SETUP: Final = MappingProxyType(
    {
        "trace": "Google 2011 cluster trace, 24 hours: 580 users, 19K jobs",
        "machine_classes": 700,
        "queue_jobs": 100,
        "job_run_s": (10.0, 100.0),
        "decisions": "on a per-second basis",
        "repetitions": "each job is randomly assigned the number of times it has to run",
    }
)

#: Fig. 7: "Throughout the experiment, the system can have from one to eight RDUCs."
FIG7_RDUCS: Final = (1, 8)
#: Fig. 8: "around 65% of jobs required between one to two machine classes".
FIG8_ONE_OR_TWO: Final = Printed("65", True)


#: Fig. 10a is judged by the median JCT, the mean shown beside it: the paper's sentence is about
#: "the jobs" and shows it as CDFs, which show quantiles (the median is the CDF's middle), not a
#: mean, which the longest jobs dominate (``docs/udrf.md``).
FIG10A_READING: Final = TEXT["text.fig10a_reading"]

#: Why Figs. 10b-c's "completion time reduction" of a group of jobs is judged as the mean of the
#: jobs' own reductions ``1 - jct_udrf / jct_baseline``, with the reduction of the mean JCT beside
#: it (issue 44: one measure across papers).
REDUCTION_READING: Final = TEXT["text.reduction_reading"]

#: Why the last paragraph's "jobs with high requirements on the number of times to execute will
#: take longer time to finish" is judged against UDRF: under DRF alone a job that runs more
#: times takes longer almost by construction (each run adds its run time), so the sentence,
#: which explains what UDRF gains, is read as DRF's JCT minus UDRF's rising with the runs.
QUEUE_REPS_READING: Final = TEXT["text.queue_reps_reading"]

#: The deciles at which Fig. 10a's two CDFs are compared (the JCT quantiles, paired by seed).
FIG10A_DECILES: Final = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)

#: Fig. 8 holds by construction when the share of jobs needing one or two classes is within
#: this many points of what the constraint model leads one to expect (ours).
FIG8_MODEL_TOL: Final = 0.03

#: The statements of Section V, in the paper's order (``statements.md`` beside this module,
#: :func:`~fairsim.experiments.claims.load_statements`).
STATEMENTS: Final = load_statements(Path(__file__).with_name("statements.md"))

#: The statements by key.
BY_KEY: Final = MappingProxyType({s.key: s for s in STATEMENTS})
