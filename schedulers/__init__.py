"""fairsim: schedulers."""
