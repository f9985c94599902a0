"""``python -m fairsim.cli``: the ``fairsim`` command (:func:`fairsim.cli.main`)."""

import sys

from fairsim.cli import main

sys.exit(main())
