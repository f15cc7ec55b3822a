"""Search: accent folding and ranking of chapters above API pages."""

from __future__ import annotations


def setup(app):
    return {"parallel_read_safe": True, "parallel_write_safe": True}
