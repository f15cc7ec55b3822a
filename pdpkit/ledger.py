r"""A ledger file: a privacy budget and its charges in SQLite, shared by processes and sessions.

A data set's budget outlives a Python session: ``PrivacyAccountant(eps, delta,
path="budget.sqlite")`` (:class:`pdpkit.accountant.PrivacyAccountant`) keeps its ledger here,
and so does the command line's ``--ledger FILE``. The file is an ordinary SQLite database
(the standard library's ``sqlite3``; no server):

* ``meta``: the format, the ledger's random id, the budget (ε, δ) and a MAC over them;
* ``entries``: one row per charge, in order — the entry as canonical JSON
  (:meth:`pdpkit.accountant.Charge.to_dict`) and a MAC chained over every entry before it;
* ``head``: the number of entries and a MAC over it and the last entry's MAC.

**Transactions.** A charge is one ``BEGIN IMMEDIATE`` transaction: it takes SQLite's write
lock, reads and checks the whole ledger, composes it with the new entry, refuses (rolling
back) above the budget, lets the caller draw its noise, writes the entry and commits. Two
processes never both pass the check on the same ledger, so together they never exceed the
budget. The lock is held while the charging mechanism draws its noise (for an estimator, its
fit): another process's charge waits for it, up to 10 minutes, then stops with
:class:`LedgerBusyError` (nothing charged). A process killed before the commit leaves the
file as it was (SQLite's journal) and has released nothing — a release leaves the charging block only after the commit; one killed
after the commit has its charge recorded. So the file never misses a charge whose noise left
the process, and records one only once its noise was drawn.

**Integrity.** Every MAC is HMAC-SHA-256 under a 32-byte key created with the file and kept
beside it in ``FILE.key`` (mode 0600). Opening or charging the ledger recomputes every MAC:
an edited budget, an edited, inserted, deleted or reordered entry, a truncated ledger, or a
key from another ledger is refused (:class:`LedgerIntegrityError`, naming what disagrees). This
detects edits by anything that does not hold the key — the ``sqlite3`` shell, a script, a
copied row. It cannot detect a curator who holds the key and re-signs the file with pdpkit's
code, or who restores an older copy of both files: keep the key where the budget's owner, not
the analyst, controls it if that matters.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import sqlite3
import time
from collections.abc import Iterator
from typing import Any

from ._json import canonical_json

__all__ = ["LEDGER_FORMAT", "LedgerIntegrityError", "LedgerBusyError", "LedgerFile", "Transaction"]

#: How long a charge waits for another process's charge to finish before it gives up (s).
_WAIT_SECONDS = 600.0

#: The format tag stored in a ledger file's ``meta`` table.
LEDGER_FORMAT = "pdpkit-ledger/1"

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS entries (position INTEGER PRIMARY KEY, entry TEXT NOT NULL, mac TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS head (id INTEGER PRIMARY KEY CHECK (id = 1), count INTEGER NOT NULL, "
    "mac TEXT NOT NULL)",
)


class LedgerIntegrityError(ValueError):
    """A ledger file whose budget, entries or key disagree with their MACs: refused, nothing charged."""


class LedgerBusyError(RuntimeError):
    """Another process's charge held the ledger file longer than the wait: nothing was charged or released."""


def _mac(key: bytes, *parts: str) -> str:
    return hmac.new(key, "\x1f".join(parts).encode("utf-8"), hashlib.sha256).hexdigest()


def _write_new_key(path: str) -> bytes:
    key = secrets.token_bytes(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(key.hex().encode("ascii") + b"\n")
    return key


def _read_key(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            text = f.read(200).strip()
    except FileNotFoundError:
        raise LedgerIntegrityError(f"ledger key file {path!r} is missing: the ledger's integrity cannot be "
                                   "checked, so it is refused") from None
    try:
        key = bytes.fromhex(text.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        key = b""
    if len(key) != 32:
        raise LedgerIntegrityError(f"ledger key file {path!r} does not hold a 32-byte key")
    return key


class Transaction:
    """One charge's transaction: the ledger as read inside it (``ledger``, canonical JSON texts), and the entries to add.

    Parameters
    ----------
    ledger : tuple of str
        The entries the file held when the transaction began (canonical JSON), checked.
    last_mac : str
        The MAC of the last of them (the chain's head).
    """

    def __init__(self, ledger: tuple, last_mac: str) -> None:
        self.ledger = ledger
        self.last_mac = last_mac
        self.added: tuple = ()

    def append(self, entries: tuple) -> None:
        """Entries (JSON dicts) to write when the transaction ends.

        Parameters
        ----------
        entries : tuple of dict
            The charges, as :meth:`pdpkit.accountant.Charge.to_dict` writes them.
        """
        self.added = tuple(self.added) + tuple(entries)


class LedgerFile:
    """A ledger file (see the module): its budget, its entries, and one transaction per charge.

    Use it through :class:`pdpkit.accountant.PrivacyAccountant` (``path=``); this class is
    the storage.

    Parameters
    ----------
    path : str
        The SQLite file.
    key : bytes
        The ledger's MAC key (from ``path + ".key"``).
    """

    def __init__(self, path: str, key: bytes) -> None:
        self.path = path
        self._key = key
        meta = self._read_meta()
        self.ledger_id = meta["ledger_id"]
        self.epsilon = float(meta["epsilon"])
        self.delta = float(meta["delta"])

    # ------------------------------------------------------------ opening
    @staticmethod
    def _connect(path: str) -> sqlite3.Connection:
        con = sqlite3.connect(path, timeout=_WAIT_SECONDS, isolation_level=None)
        con.execute("PRAGMA synchronous = FULL")
        return con

    @classmethod
    def open_existing(cls, path: Any) -> LedgerFile:
        """An existing ledger file, its budget and entries checked.

        Parameters
        ----------
        path : str or os.PathLike
            The file.
        """
        p = os.fspath(path)
        if not os.path.isfile(p):
            raise FileNotFoundError(f"no ledger file at {p!r}")
        store = cls(p, _read_key(p + ".key"))
        store.read()
        return store

    @classmethod
    def open_or_create(cls, path: Any, *, epsilon: float, delta: float) -> LedgerFile:
        """The ledger file at ``path``, created with this budget if absent; an existing one must have this budget.

        Parameters
        ----------
        path : str or os.PathLike
            The file.
        epsilon, delta : float
            The budget.
        """
        p = os.fspath(path)
        if not os.path.exists(p):
            try:
                cls._create(p, epsilon=epsilon, delta=delta)
            except FileExistsError:  # another process is creating it: wait for its file
                for _ in range(200):
                    if os.path.exists(p):
                        break
                    time.sleep(0.05)
                else:
                    raise LedgerIntegrityError(f"a key file {p + '.key'!r} exists without its ledger file: remove "
                                               "it (or restore the ledger) before creating a new ledger here") \
                        from None
        store = cls.open_existing(p)
        if store.epsilon != float(epsilon) or store.delta != float(delta):
            raise ValueError(f"the ledger file {p!r} has the budget (epsilon={store.epsilon!r}, "
                             f"delta={store.delta!r}), not ({epsilon!r}, {delta!r}): a budget is set when its file "
                             "is created (open it with PrivacyAccountant.open(path))")
        return store

    @classmethod
    def _create(cls, path: str, *, epsilon: float, delta: float) -> None:
        # the key first, exclusively: of two processes creating one ledger, one wins and the other opens it
        key = _write_new_key(path + ".key")
        ledger_id = secrets.token_hex(16)
        meta = {"format": LEDGER_FORMAT, "ledger_id": ledger_id, "epsilon": repr(float(epsilon)),
                "delta": repr(float(delta))}
        tmp = f"{path}.{secrets.token_hex(6)}.tmp"
        con = cls._connect(tmp)
        try:
            con.execute("BEGIN IMMEDIATE")
            for stmt in _SCHEMA:
                con.execute(stmt)
            for k, v in meta.items():
                con.execute("INSERT INTO meta (k, v) VALUES (?, ?)", (k, v))
            con.execute("INSERT INTO meta (k, v) VALUES ('mac', ?)", (_mac(key, "meta", canonical_json(meta).decode()),))
            con.execute("INSERT INTO head (id, count, mac) VALUES (1, 0, ?)", (_mac(key, "head", ledger_id, "0", ""),))
            con.execute("COMMIT")
        finally:
            con.close()
        try:
            os.link(tmp, path)  # never replaces a file that appeared meanwhile
        finally:
            os.unlink(tmp)

    # ------------------------------------------------------------ reading and checking
    def _read_meta(self, con: sqlite3.Connection | None = None) -> dict[str, str]:
        own = con is None
        con = con or self._connect(self.path)
        try:
            try:
                rows = dict(con.execute("SELECT k, v FROM meta").fetchall())
            except sqlite3.DatabaseError as exc:
                raise LedgerIntegrityError(f"{self.path!r} is not a pdpkit ledger file ({exc})") from None
        finally:
            if own:
                con.close()
        if set(rows) != {"format", "ledger_id", "epsilon", "delta", "mac"}:
            raise LedgerIntegrityError(f"ledger file {self.path!r}: its meta table was edited (fields {sorted(rows)})")
        meta = {k: rows[k] for k in ("format", "ledger_id", "epsilon", "delta")}
        if not hmac.compare_digest(rows["mac"], _mac(self._key, "meta", canonical_json(meta).decode())):
            raise LedgerIntegrityError(f"ledger file {self.path!r}: its budget or id was edited (or the key file "
                                       "belongs to another ledger): refused")
        if meta["format"] != LEDGER_FORMAT:
            raise LedgerIntegrityError(f"ledger file {self.path!r}: format {meta['format']!r} is not "
                                       f"{LEDGER_FORMAT!r}")
        return meta

    def _read_entries(self, con: sqlite3.Connection) -> tuple[tuple, str]:
        self._read_meta(con)
        rows = con.execute("SELECT position, entry, mac FROM entries ORDER BY position").fetchall()
        head = con.execute("SELECT count, mac FROM head WHERE id = 1").fetchall()
        prev = ""
        out = []
        for i, (position, text, mac) in enumerate(rows):
            want = _mac(self._key, "entry", self.ledger_id, str(i), prev, text)
            if position != i or not hmac.compare_digest(mac, want):
                raise LedgerIntegrityError(f"ledger file {self.path!r}: entry {i} was edited, inserted, removed or "
                                           "moved: refused")
            out.append(text)
            prev = mac
        if len(head) != 1 or head[0][0] != len(rows) or not hmac.compare_digest(
                head[0][1], _mac(self._key, "head", self.ledger_id, str(len(rows)), prev)):
            raise LedgerIntegrityError(f"ledger file {self.path!r}: its last entries were removed (or its head was "
                                       "edited): refused")
        return tuple(out), prev

    def read(self) -> tuple:
        """Every entry as its canonical JSON text (:meth:`pdpkit.accountant.Charge.to_dict`), in order, MACs checked."""
        con = self._connect(self.path)
        try:
            con.execute("BEGIN")
            try:
                return self._read_entries(con)[0]
            finally:
                con.execute("ROLLBACK")
        finally:
            con.close()

    # ------------------------------------------------------------ charging
    @contextlib.contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """One charge: ``BEGIN IMMEDIATE``, the ledger read and checked, the block, the new entries written, ``COMMIT``.

        An exception before the block's end of a refusal (raised by the caller before it
        yields) rolls back; entries appended by the block are written even when the block
        raises afterwards (the caller's noise may have been drawn).
        """
        con = self._connect(self.path)
        try:
            try:
                con.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:  # the write lock was not free within the timeout
                raise LedgerBusyError(
                    f"ledger file {self.path!r}: another charge has held it for more than {_WAIT_SECONDS:g} s ({exc}); "
                    "nothing was charged or released: try again when that fit has finished") from None
            committed = False
            try:
                ledger, last = self._read_entries(con)
                txn = Transaction(ledger, last)
                try:
                    yield txn
                finally:
                    if txn.added:
                        self._write(con, txn)
                        con.execute("COMMIT")
                        committed = True
            finally:
                if not committed:
                    con.execute("ROLLBACK")
        finally:
            con.close()

    def _write(self, con: sqlite3.Connection, txn: Transaction) -> None:
        prev = txn.last_mac
        n = len(txn.ledger)
        for i, c in enumerate(txn.added, start=n):
            text = canonical_json(c).decode("ascii")
            mac = _mac(self._key, "entry", self.ledger_id, str(i), prev, text)
            con.execute("INSERT INTO entries (position, entry, mac) VALUES (?, ?, ?)", (i, text, mac))
            prev = mac
        count = n + len(txn.added)
        con.execute("UPDATE head SET count = ?, mac = ? WHERE id = 1",
                    (count, _mac(self._key, "head", self.ledger_id, str(count), prev)))
