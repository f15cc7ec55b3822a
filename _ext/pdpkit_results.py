"""The results page: links, anchors and layout of *Results at a glance*."""

from __future__ import annotations


def setup(app):
    return {"parallel_read_safe": True, "parallel_write_safe": True}
