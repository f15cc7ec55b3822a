"""Reading aids: permalinks on theorem blocks and errata, figures at full size, wide equations."""

from __future__ import annotations


def setup(app):
    return {"parallel_read_safe": True, "parallel_write_safe": True}
