"""Packet-level multi-resource SFQ router (Bonald and Roberts, Section 3): DRFQ, PF, BMF."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from fairsim.errors import ConfigError
from fairsim.schedulers.flows.packet_fq import (
    ALGORITHMS,
    estimate_service_rates,
    run_router,
)

BIG = 10**7  # packets: flows that never end within the horizon
T = 20_000.0


def _throughput(a: np.ndarray, classes: list[int], algorithm: str, window: int = 30) -> np.ndarray:
    n = len(classes)
    run = run_router(
        a,
        np.zeros(n),
        np.array(classes),
        np.full(n, BIG),
        algorithm=algorithm,
        window=window,
        t_stop=T,
    )
    return run.departed / T


@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
def test_single_flow_saturates_its_bottleneck(algorithm: str) -> None:
    a = np.array([[0.3, 1.0]])
    rate = _throughput(a, [0], algorithm)
    assert rate[0] == pytest.approx(1.0, abs=1e-3)  # resource 1 busy all the time


@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
def test_two_identical_flows_share_equally(algorithm: str) -> None:
    a = np.array([[1.0, 0.5]])
    rate = _throughput(a, [0, 0], algorithm)
    np.testing.assert_allclose(rate, [0.5, 0.5], atol=2e-3)


def test_drfq_equal_dominant_shares_pf_bmf_fluid_allocation() -> None:
    # a1 = (1, .2), a2 = (.5, 1): DRF (2/3, 2/3); PF = BMF (5/9, 8/9) (two flows, two resources)
    a = np.array([[1.0, 0.2], [0.5, 1.0]])
    np.testing.assert_allclose(_throughput(a, [0, 1], "drfq"), [2 / 3, 2 / 3], atol=2e-3)
    np.testing.assert_allclose(_throughput(a, [0, 1], "pf"), [5 / 9, 8 / 9], atol=3e-3)
    np.testing.assert_allclose(_throughput(a, [0, 1], "bmf"), [5 / 9, 8 / 9], atol=3e-3)


def test_window_one_single_flow_is_sequential() -> None:
    # W = 1: one packet at a time through both resources: rate 1 / (a_0 + a_1)
    a = np.array([[0.25, 1.0]])
    rate = _throughput(a, [0], "bmf", window=1)
    assert rate[0] == pytest.approx(1 / 1.25, rel=1e-3)


def test_finite_flow_finish_time() -> None:
    a = np.array([[1.0, 0.5]])
    run = run_router(a, np.array([0.0]), np.array([0]), np.array([100]), algorithm="pf", window=30)
    # pipelined: 100 packets at resource 0 back to back, the last one then 0.5 at resource 1
    assert run.finish[0] == pytest.approx(100.5)
    assert run.packets == 100


def test_service_rates_deterministic_and_plausible() -> None:
    a = np.array([[0.1, 1.0], [1.0, 0.1], [1.0, 1.0]])
    rho = np.array([1.0, 1.0, 1.0]) * 0.3 / 2.1
    kw = {"algorithm": "bmf", "mean_packets": 50, "flows": 3000, "warmup": 100, "batches": 10}
    e1 = estimate_service_rates(a, rho, seed=np.random.SeedSequence(5), **kw)
    e2 = estimate_service_rates(a, rho, seed=np.random.SeedSequence(5), **kw)
    np.testing.assert_array_equal(e1.gamma, e2.gamma)
    assert (e1.gamma > 0.5).all() and (e1.gamma < 1.0).all()
    assert (e1.gamma_lo <= e1.gamma).all() and (e1.gamma <= e1.gamma_hi).all()


def test_bad_input_one_line() -> None:
    a = np.array([[1.0, 0.5]])
    one = (np.zeros(1), np.zeros(1, dtype=int), np.ones(1, dtype=int))
    with pytest.raises(ConfigError, match=r"window: W = 0 \(expected an integer >= 1\)"):
        run_router(a, *one, algorithm="pf", window=0)
    with pytest.raises(ConfigError, match=r"vectors\[0\]: \[0\.5, 0\.5\] has no component equal"):
        run_router(np.array([[0.5, 0.5]]), *one, algorithm="pf")
    with pytest.raises(ConfigError, match=r"algorithm: unknown 'wfq'"):
        run_router(a, *one, algorithm="wfq")


def test_numba_cache_disabled_on_read_only_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fairsim.schedulers.flows import packet_fq as packet

    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        monkeypatch.setenv("NUMBA_CACHE_DIR", str(ro))
        assert packet._can_cache() is (os.geteuid() == 0)  # root may write anyway
        monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
        assert packet._can_cache()
    finally:
        ro.chmod(0o700)


def test_numba_cache_goes_to_the_user_cache_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fairsim.schedulers.flows import packet_fq as packet

    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert packet.cache_dir() == tmp_path / "cache" / "fairsim" / "numba"
    assert packet._can_cache() and packet.cache_dir().is_dir()
    # never next to the package, which may be installed read-only
    assert Path(packet.__file__).resolve().parent not in packet.cache_dir().parents
