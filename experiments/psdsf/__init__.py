"""The PS-DSF paper's Section V (Tables III-IV, Fig. 6)."""
