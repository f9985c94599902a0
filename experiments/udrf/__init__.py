"""The UDRF paper's Section V on the Google sample."""
