"""Rank 0, support: what every layer may use and that says nothing about templates — lazy imports,
files shipped with the package, GC tuning, masking secrets, the JUnit writer.
May import: nothing of taskdsl."""
