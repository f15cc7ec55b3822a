"""The computations behind the book's figures and tables: one module per chapter.

Each module is named after its chapter's notebook (``chapters/<name>.ipynb``) and runs
that chapter's experiments at a size the caller chooses, returning small frozen
dataclasses of numpy arrays; the chapters only plot them. Nothing here is a mechanism
or a privacy analysis: those live in the chapter's own module (see ``ARCHITECTURE.md``).
"""
