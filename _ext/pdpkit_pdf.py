"""The whole-book PDF: a link to it from the landing page when it has been built."""

from __future__ import annotations


def setup(app):
    return {"parallel_read_safe": True, "parallel_write_safe": True}
