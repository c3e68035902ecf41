"""`opbench tools`: the performance notes (transfers, overlap, hidden syncs, timing pitfalls, clocks) as tools."""
