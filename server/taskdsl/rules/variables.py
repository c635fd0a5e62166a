"""Rule family module (being written)."""
