"""fairsim: experiments."""
