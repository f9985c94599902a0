"""The conformance suite in a scheduler author's own pytest: one test per (scheduler, check).

docs/write-a-scheduler.md copies its ``check`` section (tests/unit/test_docs_snippets.py checks
the copy) and tests/unit/test_docs_tutorial.py runs it with
pytest: ``python -m pytest docs/examples/test_fifo_scheduler.py``.
"""

# [start:check]
import fifo_scheduler  # noqa: F401  (importing the tutorial's module registers "my-fifo")

from fairsim.testing import parametrize_with_checks


@parametrize_with_checks(["my-fifo"])
def test_conformance(scheduler, check):
    check(scheduler)


# [end:check]
