r"""Signed files: Ed25519 keys, their fingerprints, and signatures over canonical bytes.

A publisher makes one key pair (:func:`write_keypair`, ``pdpkit keygen``) and lists the
public key's fingerprint (:func:`key_fingerprint`) wherever readers can find it. Each file
pdpkit signs — a release (:meth:`pdpkit.release.Release.sign`), a privacy page's data
(:func:`pdpkit.page.privacy_page`) — carries a **signature block**::

    {"algorithm": "Ed25519",
     "public_key": "<32 bytes, base64>",
     "fingerprint": "<SHA-256 of those 32 bytes, 64 hex digits>",
     "value": "<64 bytes, base64>"}

over ``context + payload``: the payload is the file's canonical JSON without the block
(``pdpkit._json.canonical_json``), and the context (:data:`RELEASE_CONTEXT`,
:data:`PAGE_CONTEXT`) keeps a signature made for one kind of file from being accepted for
another. Ed25519 (RFC 8032) comes from the ``cryptography`` package: nothing here is
hand-written cryptography.

What a signature proves: the file is byte for byte what the holder of the private key
signed. It proves *who* only to a reader who compares the fingerprint with the one the
publisher lists (or passes the publisher's public key to ``verify``): a forger can sign an
edited file with a key of their own, and the block then names that key.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from pathlib import Path
from typing import Any

__all__ = [
    "ALGORITHM",
    "RELEASE_CONTEXT",
    "PAGE_CONTEXT",
    "SignatureError",
    "generate_private_key",
    "write_keypair",
    "load_private_key",
    "load_public_key",
    "public_key_bytes",
    "key_fingerprint",
    "sign_payload",
    "verify_payload",
    "check_signature_block",
]

#: The one signature algorithm pdpkit writes and accepts.
ALGORITHM = "Ed25519"
#: Prefixed to a release's canonical bytes before signing.
RELEASE_CONTEXT = b"pdpkit-release-signature/1\n"
#: Prefixed to a privacy page's embedded bytes before signing.
PAGE_CONTEXT = b"pdpkit-privacy-page-signature/1\n"
_BLOCK_KEYS = ("algorithm", "public_key", "fingerprint", "value")


class SignatureError(ValueError):
    """A signature that is missing, malformed, made by another key, or not over these bytes."""


def _ed25519() -> Any:
    from cryptography.hazmat.primitives.asymmetric import ed25519  # imported when a key is used

    return ed25519


def generate_private_key() -> Any:
    """A new Ed25519 private key (``cryptography``'s ``Ed25519PrivateKey``), from the OS's entropy."""
    return _ed25519().Ed25519PrivateKey.generate()


def write_keypair(path: str | os.PathLike[str], *, overwrite: bool = False) -> str:
    """Write a new private key to ``path`` (PEM, PKCS #8, mode 0600) and its public key to ``path.pub``.

    Each file is created anew (never written through a symbolic link or into another name of a
    hard link): with ``overwrite``, an existing name is removed first.

    Parameters
    ----------
    path : str or path-like
        Where the private key goes; the public key goes beside it with ``.pub`` appended.
    overwrite : bool
        Replace existing files (default: ``FileExistsError``, so no key is lost by mistake).

    Returns
    -------
    str
        The public key's fingerprint (:func:`key_fingerprint`).
    """
    from cryptography.hazmat.primitives import serialization

    path = Path(path)
    pub_path = Path(f"{path}.pub")
    for p in (path, pub_path):
        if os.path.lexists(p):  # a dangling symbolic link too
            if not overwrite:
                raise FileExistsError(f"{p} exists: a key is not replaced unless asked (overwrite=True, or --force)")
            if p.is_dir() and not p.is_symlink():
                raise IsADirectoryError(f"{p} is a directory")
    key = generate_private_key()
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo)
    for p, data, mode in ((path, private, 0o600), (pub_path, public, 0o644)):
        if overwrite and os.path.lexists(p):
            os.unlink(p)  # the name only: a symbolic link's target or a hard link's other names are never written
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
        try:
            if mode == 0o600:
                os.fchmod(fd, mode)  # the private key is 0600 whatever the umask; the public key follows it
            os.write(fd, data)
        finally:
            os.close(fd)
    return key_fingerprint(key.public_key())


def _read(source: Any, what: str) -> bytes:
    if isinstance(source, (bytes, bytearray)):
        return bytes(source)
    if isinstance(source, (str, os.PathLike)):
        try:
            return Path(source).read_bytes()
        except OSError as exc:
            raise ValueError(f"{what} {source}: cannot be read ({exc.strerror or exc})") from None
    raise TypeError(f"{what} must be a key, a path to a PEM file, or the file's bytes; got {type(source).__name__}")


def load_private_key(source: Any) -> Any:
    """An Ed25519 private key: the key itself, a path to its PEM file, or the PEM bytes.

    Parameters
    ----------
    source : Ed25519PrivateKey, str, path-like or bytes
    """
    ed = _ed25519()
    if isinstance(source, ed.Ed25519PrivateKey):
        return source
    from cryptography.hazmat.primitives import serialization

    data = _read(source, "private key")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise ValueError("private key: not an unencrypted PEM private key (write one with pdpkit keygen)") from None
    if not isinstance(key, ed.Ed25519PrivateKey):
        raise ValueError(f"private key: an Ed25519 key is needed; got {type(key).__name__}")
    return key


def load_public_key(source: Any) -> Any:
    """An Ed25519 public key: the key, a private key (its public half), a PEM path or bytes, or 32 raw bytes.

    Parameters
    ----------
    source : Ed25519PublicKey, Ed25519PrivateKey, str, path-like or bytes
    """
    ed = _ed25519()
    if isinstance(source, ed.Ed25519PublicKey):
        return source
    if isinstance(source, ed.Ed25519PrivateKey):
        return source.public_key()
    from cryptography.hazmat.primitives import serialization

    if isinstance(source, (bytes, bytearray)) and len(source) == 32:
        return ed.Ed25519PublicKey.from_public_bytes(bytes(source))
    data = _read(source, "public key")
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError):
        raise ValueError("public key: not a PEM public key (the KEY.pub that pdpkit keygen wrote)") from None
    if not isinstance(key, ed.Ed25519PublicKey):
        raise ValueError(f"public key: an Ed25519 key is needed; got {type(key).__name__}")
    return key


def public_key_bytes(key: Any) -> bytes:
    """The 32 raw bytes of an Ed25519 public key (RFC 8032).

    Parameters
    ----------
    key : Ed25519PublicKey or anything :func:`load_public_key` takes
    """
    from cryptography.hazmat.primitives import serialization

    return load_public_key(key).public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_fingerprint(key: Any) -> str:
    """The SHA-256 of the public key's 32 raw bytes, 64 lowercase hex digits: what a publisher lists.

    Parameters
    ----------
    key : Ed25519PublicKey or anything :func:`load_public_key` takes
    """
    return hashlib.sha256(public_key_bytes(key)).hexdigest()


def sign_payload(private_key: Any, payload: bytes, *, context: bytes) -> dict[str, str]:
    """The signature block of ``context + payload`` by ``private_key``.

    Parameters
    ----------
    private_key : Ed25519PrivateKey, str, path-like or bytes
        The key, or its PEM file.
    payload : bytes
        The canonical bytes signed.
    context : bytes
        :data:`RELEASE_CONTEXT` or :data:`PAGE_CONTEXT`.
    """
    key = load_private_key(private_key)
    raw = public_key_bytes(key.public_key())
    return {
        "algorithm": ALGORITHM,
        "public_key": base64.b64encode(raw).decode("ascii"),
        "fingerprint": hashlib.sha256(raw).hexdigest(),
        "value": base64.b64encode(key.sign(context + payload)).decode("ascii"),
    }


def _b64(text: Any, where: str, size: int) -> bytes:
    if not isinstance(text, str):
        raise SignatureError(f"{where} must be base64 text")
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise SignatureError(f"{where} is not base64") from None
    if len(raw) != size or base64.b64encode(raw).decode("ascii") != text:
        raise SignatureError(f"{where} must be {size} bytes in canonical base64")
    return raw


def check_signature_block(block: Any, where: str = "signature") -> dict[str, str]:
    """The block's shape: the four fields, Ed25519, a 32-byte key whose fingerprint matches, a 64-byte value.

    Parameters
    ----------
    block : dict
        A signature block as :func:`sign_payload` makes it.
    where : str
        Its name in messages.
    """
    if not isinstance(block, dict):
        raise SignatureError(f"{where} must be an object (or null for an unsigned file)")
    missing = [k for k in _BLOCK_KEYS if k not in block]
    extra = sorted(set(block) - set(_BLOCK_KEYS))
    if missing or extra:
        raise SignatureError(f"{where} must have exactly the fields {', '.join(_BLOCK_KEYS)}"
                             + (f"; missing {', '.join(missing)}" if missing else "")
                             + (f"; unknown {', '.join(extra)}" if extra else ""))
    if block["algorithm"] != ALGORITHM:
        raise SignatureError(f"{where}.algorithm must be {ALGORITHM!r}; got {block['algorithm']!r}")
    raw = _b64(block["public_key"], f"{where}.public_key", 32)
    _b64(block["value"], f"{where}.value", 64)
    if block["fingerprint"] != hashlib.sha256(raw).hexdigest():
        raise SignatureError(f"{where}.fingerprint is not the SHA-256 of {where}.public_key")
    return dict(block)


def verify_payload(block: Any, payload: bytes, *, context: bytes, public_key: Any = None,
                   where: str = "signature") -> str:
    """Check a signature block over ``context + payload``; return the signer's fingerprint.

    With ``public_key``, the block must name that key and verify with it; without, it must
    verify with the key it names (the file is intact since signing, by whoever holds that
    key: compare the returned fingerprint with the publisher's). :class:`SignatureError`
    otherwise — also for ``block=None`` (an unsigned file) when a key is given.

    Parameters
    ----------
    block : dict or None
        The file's signature block.
    payload : bytes
        The canonical bytes that were signed.
    context : bytes
        :data:`RELEASE_CONTEXT` or :data:`PAGE_CONTEXT`.
    public_key : optional
        The publisher's key (anything :func:`load_public_key` takes).
    where : str
        The block's name in messages.
    """
    want = None if public_key is None else key_fingerprint(public_key)
    if block is None:
        raise SignatureError(f"{where}: the file is unsigned"
                             + ("" if want is None else f", so it is not signed by the key {want}"))
    block = check_signature_block(block, where)
    if want is not None and block["fingerprint"] != want:
        raise SignatureError(f"{where}: signed by the key {block['fingerprint']}, not by the key given ({want})")
    from cryptography.exceptions import InvalidSignature

    key = _ed25519().Ed25519PublicKey.from_public_bytes(base64.b64decode(block["public_key"]))
    try:
        key.verify(base64.b64decode(block["value"]), context + payload)
    except InvalidSignature:
        raise SignatureError(f"{where}: does not match the file's contents (the file was changed after it was "
                             "signed)") from None
    return block["fingerprint"]
