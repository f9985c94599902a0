"""First-Fit and Best-Fit DRFH: progressive filling by global dominant share (DRFH paper,
Section V-B).

The scheduler serves the user with the lowest (weighted) global dominant share (eqs. 2-3,
:class:`~fairsim.schedulers.user_selection.DominantShare`) and places its head task on the first
server that fits it (:class:`~fairsim.schedulers.placement.FirstFit`) or on the fitting server
with the least ``H(i, l)`` of eq. 9 (:class:`~fairsim.schedulers.placement.BestFit`). The
filling loop, blocking and wake-ups are those of
:class:`fairsim.schedulers.progressive_filling.ProgressiveFilling`.
"""

from __future__ import annotations

from fairsim.schedulers.placement import BestFit, FirstFit
from fairsim.schedulers.progressive_filling import ProgressiveFilling
from fairsim.schedulers.user_selection import DominantShare


class FirstFitDRFH(ProgressiveFilling):
    """First-Fit DRFH (DRFH paper, Section V-B).

    Serves the user with the lowest weighted global dominant share and places its head task on
    the lowest-indexed server that fits it.
    """

    name = "ff-drfh"
    mechanism = "drfh"
    order = DominantShare
    placement = FirstFit


class BestFitDRFH(ProgressiveFilling):
    """Best-Fit DRFH (DRFH paper, Section V-B, heuristic H(i, l) of eq. 9).

    Serves the user with the lowest weighted global dominant share and places its head task on
    the fitting server with the least ``H(i, l) = ||D_i/D_i1 - c̄_l/c̄_l1||_1``; ties go to the
    lowest server index (:class:`~fairsim.schedulers.placement.BestFit`, whose notes give the
    evaluation of eq. 9, its tie tolerance and the ratio index of large pools).
    """

    name = "bf-drfh"
    mechanism = "drfh"
    order = DominantShare
    placement = BestFit
