"""Strict JSON for the files pdpkit reads (releases, schemas, keys' companions): hostile text is a clear error.

:func:`loads_strict` parses like :func:`json.loads` but refuses, with a ``ValueError`` that
names the field by its path (``report.rho``, ``theta[3]``, ``schema.columns[2].low``):

* a key that appears twice in one object (``json.loads`` keeps the last one silently);
* an integer with more than :data:`MAX_INT_DIGITS` digits (Python's own limit, 4,300 digits,
  would raise from deep inside the parser; a 400-digit integer overflows a float later);
* a number that is not finite as a float (``1e400``) and the constants ``NaN``,
  ``Infinity``, ``-Infinity``;
* nesting deeper than :data:`MAX_DEPTH` (the parser would raise ``RecursionError``);
* text that is not JSON, with the parser's line and column.

:func:`canonical_json` is the one byte string a JSON value is signed and fingerprinted as:
sorted keys, no spaces, ASCII only (every other character escaped), shortest round-trip
floats. Two files that parse to the same values have the same canonical bytes.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import numpy as np

__all__ = ["MAX_DEPTH", "MAX_INT_DIGITS", "loads_strict", "canonical_json", "json_path"]

#: Deepest nesting of arrays and objects accepted (a release nests 5 deep, a schema 4).
MAX_DEPTH = 64
#: Most digits an integer may have (a count, a label, a category); 2**63 has 19.
MAX_INT_DIGITS = 19

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


class _Bad:
    """A value the parser met and pdpkit refuses; reported with its path after the parse."""

    __slots__ = ("why",)

    def __init__(self, why: str) -> None:
        self.why = why


def _parse_int(text: str) -> Any:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        return _Bad(f"an integer of {digits} digits (at most {MAX_INT_DIGITS} are accepted)")
    return int(text)


def _parse_float(text: str) -> Any:
    value = float(text)
    if not math.isfinite(value):
        return _Bad(f"the number {text[:40]}{'…' if len(text) > 40 else ''} is beyond the range of a float")
    return value


def _parse_constant(name: str) -> Any:
    return _Bad(f"{name} is not a number JSON allows here")


class _Duplicates(dict):
    """An object with a repeated key (kept to report its path)."""

    def __init__(self, pairs: list[tuple[str, Any]], key: str) -> None:
        super().__init__(pairs)
        self.key = key


def _pairs(pairs: list[tuple[str, Any]]) -> dict:
    seen: set[str] = set()
    for k, _ in pairs:
        if k in seen:
            return _Duplicates(pairs, k)
        seen.add(k)
    return dict(pairs)


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def json_path(path: tuple[Any, ...], root: str = "") -> str:
    """``("report", "rho")`` → ``report.rho``; ``("theta", 3)`` → ``theta[3]``; any other key as a JSON string.

    A key that is not a plain name is written ``["…"]`` with JSON's escapes (ASCII only), so that
    no key from a file can put a control character (a terminal's escape sequence) into a message.
    """
    out = root
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
        elif _NAME.match(p):
            out += f".{p}" if out else p
        else:
            out += f"[{json.dumps(p)}]"
    return out or "the top level"


def _depth(text: str) -> int:
    """Deepest nesting of ``[``/``{`` outside strings (vectorized: no Python loop over the text)."""
    bare = _STRING.sub("", text).encode("utf-8", "surrogatepass")
    if not bare:
        return 0
    b = np.frombuffer(bare, dtype=np.uint8)
    step = ((b == ord("[")) | (b == ord("{"))).astype(np.int32) - ((b == ord("]")) | (b == ord("}")))
    return int(np.cumsum(step).max(initial=0))


def loads_strict(text: str | bytes, what: str = "the file") -> Any:
    """Parse JSON text strictly; ``ValueError`` naming the field (by path) for anything refused.

    Parameters
    ----------
    text : str or bytes
        The JSON text (bytes are decoded as UTF-8).
    what : str
        What the text is, for the messages (``"the release"``, ``"--schema S.json"``).

    Returns
    -------
    The parsed value (dicts, lists, str, int, float, bool, None).
    """
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{what} is not UTF-8 text (byte {exc.start})") from None
    if not isinstance(text, str):
        raise TypeError(f"{what} must be JSON text; got {type(text).__name__}")
    depth = _depth(text)
    if depth > MAX_DEPTH:
        raise ValueError(f"{what}: arrays and objects nest {depth} deep (at most {MAX_DEPTH} are accepted)")
    try:
        data = json.loads(text, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_parse_constant,
                          object_pairs_hook=_pairs)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what} is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise ValueError(f"{what}: arrays and objects nest too deep") from None
    _refuse_marks(data, what)
    return data


def _refuse_marks(data: Any, what: str) -> None:
    stack: list[tuple[Any, tuple[Any, ...]]] = [(data, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, _Bad):
            raise ValueError(f"{what}: {json_path(path)}: {value.why}")
        if isinstance(value, _Duplicates):
            raise ValueError(f"{what}: {json_path(path)}: the key {json.dumps(value.key)} appears twice (a file "
                             "must say each thing once)")
        if isinstance(value, dict):
            stack.extend((v, (*path, k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, (*path, i)) for i, v in enumerate(value))


def canonical_json(value: Any) -> bytes:
    """The canonical bytes of a JSON value: sorted keys, no spaces, ASCII, shortest round-trip floats.

    Parameters
    ----------
    value
        A JSON-ready value (dicts with string keys, lists, str, int, float, bool, None).

    Returns
    -------
    bytes
        ASCII bytes; equal for any two values that are equal as JSON (an integer ``1`` and a
        float ``1.0`` differ).
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False).encode("ascii")
