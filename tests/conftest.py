"""Shared pytest configuration: reproducible hypothesis runs, and labels that must not be read."""

import pytest
from hypothesis import settings

# Derandomized: the same examples on every machine, so a red CI is reproducible.
settings.register_profile("pdpkit", derandomize=True, deadline=None, print_blob=True)
settings.load_profile("pdpkit")


class _Unreadable:
    """Labels that fail the test when anything reads them (a class list must come from public input)."""

    def _read(self, *args, **kwargs):
        raise AssertionError("the labels were read")

    __array__ = __len__ = __iter__ = __getitem__ = _read


@pytest.fixture
def unreadable_labels() -> _Unreadable:
    """Labels whose reading fails the test."""
    return _Unreadable()
