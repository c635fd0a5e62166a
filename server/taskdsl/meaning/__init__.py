"""Rank 3, meaning: what one file means, computed once per text version (`model.model_of`) —
facts of elements, effective settings, scopes and visibility, every use of every name.
May import: support, language, project."""
