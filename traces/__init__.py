"""fairsim: traces."""
