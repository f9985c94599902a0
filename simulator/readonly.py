"""Arrays that no one can make writable, for what the engine shares with schedulers
(:class:`fairsim.simulator.cluster.ClusterView`, the masks of
:class:`fairsim.simulator.constraints.ConstraintIndex`)."""

from __future__ import annotations

import numpy as np

__all__ = ["read_only"]


def read_only(array: np.ndarray) -> np.ndarray:
    """A view of ``array`` that no one can make writable: its ``flags.writeable`` stays False.

    ``array.flags.writeable = False`` alone can be undone (``flags.writeable = True``) on an
    array that owns its memory or views writable memory; numpy refuses that on this view, whose
    base is not an ndarray. No copy: the view follows every change the owner of ``array``
    makes, at the cost of reading ``array`` itself.

    Parameters
    ----------
    array : ndarray
        The array to expose.

    Returns
    -------
    ndarray
        Same shape, strides, dtype and memory as ``array``, read-only for good.

    Examples
    --------
    >>> a = np.zeros(2)
    >>> v = read_only(a)
    >>> a[0] = 1.0
    >>> float(v[0])
    1.0
    >>> v.flags.writeable = True
    Traceback (most recent call last):
    ...
    ValueError: cannot set WRITEABLE flag to True of this array
    """
    return np.lib.stride_tricks.as_strided(array, writeable=False)
