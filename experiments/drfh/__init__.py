"""The DRFH paper's Section VI on the real Google sample."""
