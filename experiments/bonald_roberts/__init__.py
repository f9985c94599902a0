"""Bonald and Roberts's Section 4: the Markov-chain demand model, its fluid allocations and the
packet-level fair queueing router."""
