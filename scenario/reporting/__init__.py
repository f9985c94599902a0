"""Reports and figures shared by runs, sweeps and reproductions."""
