"""The LMM-MMS paper's Section 5 on the Alibaba batch tasks."""
