"""fairsim: simulator."""
