"""Shared pytest configuration: reproducible hypothesis runs."""

from hypothesis import settings

# Derandomized: the same examples on every machine, so a red CI is reproducible.
settings.register_profile("pdpkit", derandomize=True, deadline=None, print_blob=True)
settings.load_profile("pdpkit")
