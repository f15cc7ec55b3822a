r"""The real data sets the sources use, shipped inside the package, and synthetic ones.

The UCI files (CC BY 4.0) are vendored in ``pdpkit/data/`` as ``.xz`` archives of the
original bytes; see ``pdpkit/data/README.md`` for attribution and provenance. Every
load reads the archive through ``importlib.resources``, checks the SHA-256 of the
archive *and* of the decompressed bytes against the values recorded here (which are
the checksums of the original files), and raises :class:`DataIntegrityError` on any
mismatch. Nothing is downloaded.

Preprocessing
-------------
The first source (Redberg & Wang 2021, App. B) names its data sets but not its
preprocessing (that is in its main text, which is not among our sources). The
loaders therefore follow the convention the other sources state explicitly:

* each row is scaled to unit Euclidean norm, :math:`x_i \leftarrow x_i/\|x_i\|_2`
  (Redberg, Koskela & Wang 2023, §5; Wang 2019, Fig. 1). This is a per-record map
  and costs no privacy. ``row_norm="clip"`` instead scales down only rows with
  :math:`\|x_i\|_2 > 1`; ``row_norm="none"`` keeps the column-scaled features;
* binary classification labels are :math:`\pm 1` (the logistic loss's domain);
* regression targets are mapped into :math:`[-1, 1]` (Wang 2019, Fig. 1 clips
  :math:`y` to :math:`[-1, 1]`); for wine quality we use the documented score range
  :math:`0..10`, :math:`y = (q - 5)/5`, a data-independent map.

Before row normalisation, the columns are put on a common scale: numerical columns
are standardised (mean 0, standard deviation 1 over the observed values), binary
columns are coded :math:`\pm 1`, multi-category columns are one-hot coded, and
missing values (kidney only) are set to 0, i.e. the column mean for numerical
columns and "neither" for binary ones. Column statistics are computed from the whole
data set and are **not privatised** — the same (standard) simplification the
sources make; only the per-row normalisation is privacy-free. Adult follows the
recipe of Iyengar et al. (2019) instead (one-hot coding, continuous columns divided
by their maximum, rows with a missing value dropped).
"""

from __future__ import annotations

import hashlib
import lzma
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from ._validation import as_finite_array, as_generator, check_int_at_least, check_nonnegative

__all__ = [
    "Dataset",
    "DataIntegrityError",
    "VendoredFile",
    "VENDORED_FILES",
    "read_vendored",
    "verify_vendored_data",
    "normalize_rows",
    "clip_rows_to_unit_norm",
    "load_kidney",
    "load_wine_quality",
    "load_credit_default",
    "load_adult",
    "load_adult_frame",
    "ADULT_NUMERIC_BOUNDS",
    "adult_documented_domains",
    "adult_schema",
    "load_credit_default_frame",
    "make_synthetic_logistic",
    "make_synthetic_regression",
    "make_iyengar_synthetic",
]

RowNorm = Literal["normalize", "clip", "none"]


class DataIntegrityError(OSError):
    """A vendored data file is missing, truncated, corrupted or altered."""


@dataclass(frozen=True)
class VendoredFile:
    """Checksums of one vendored file: the ``.xz`` archive and the original bytes.

    Attributes
    ----------
    original_name : str
        File name of the original download.
    original_sha256 : str
        SHA-256 of the original bytes.
    original_size : int
        Size of the original file in bytes.
    archive_sha256 : str
        SHA-256 of the vendored ``.xz`` archive.
    """

    original_name: str
    original_sha256: str
    original_size: int
    archive_sha256: str

    @property
    def archive_name(self) -> str:
        """File name of the archive inside ``pdpkit/data/``."""
        return self.original_name + ".xz"


def _vf(name: str, sha: str, size: int, xz_sha: str) -> VendoredFile:
    return VendoredFile(name, sha, size, xz_sha)


#: Every vendored file, keyed by its original file name. ``original_sha256`` is the
#: checksum of the UCI-derived file as distributed (see ``pdpkit/data/README.md``).
VENDORED_FILES: dict[str, VendoredFile] = {
    v.original_name: v
    for v in [
        _vf("chronic_kidney_disease_full.arff",
            "b507d01f24a273f9d54dfab0af63afcb7d2a02769385635cfd358c651a77c24e", 47258,
            "0c2f77b4a84fe76a9c8024a785b98a8ebacbbf8af78ce98d03e915716a1e870b"),
        _vf("chronic_kidney_disease.info.txt",
            "271a0ebb15515543f46545139df634dc1c8e3c761fd8e2590540fcbf586154a6", 2803,
            "f3e033b152f4a091a39c56de198a91b5eb00d26e26866e8ac5ec1dd34df4c8e5"),
        _vf("winequality-red.csv",
            "4a402cf041b025d4566d954c3b9ba8635a3a8a01e039005d97d6a710278cf05e", 84199,
            "bf9af3087ae02ad9759f98e4e619aeb1af2a8ca6d5121b9a3bebfe6f392fce05"),
        _vf("winequality-white.csv",
            "76c3f809815c17c07212622f776311faeb31e87610d52c26d87d6e361b169836", 264426,
            "c017981db12ed7023dd7c34770633b6d865e239ca5503defde8af0c0054b9ca3"),
        _vf("winequality.names",
            "766c4fdc45be087c7efe720b7d8e0d4949baefb4cd620901bd36a3aaa83246ca", 3234,
            "79f32bca56fe828465eb9d554d833b81384209bde508a22728b98d728ade15dd"),
        _vf("default_of_credit_card_clients.tsv",
            "8c14eb1667cea74d666a1251a3048824cec9bd3c10e400fa964609104332b839", 2867209,
            "1f860b62d327430e5d48fd3c0acc1a15026cd42fff96e82a15c2c58d0f5b25b5"),
        _vf("adult.data",
            "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d", 3974305,
            "03c5722d4eaeaa2962f81284344def3c5150dadc6ddf841fcbb57f233371445c"),
        _vf("adult.test",
            "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05", 2003153,
            "45248f451a46bace9a234ece542aeadb66ea52e3c078f136d4b2c069cb38b1cd"),
        _vf("adult.names",
            "c248284c0b5de30c9e1958d6cdd168a34a654758b620e68f46aefa83fc0a576a", 5229,
            "562b69f3e5be5e2483d4e6c54c7e50d2948d8cae7778b8c8ece1434073a5d630"),
    ]
}


@dataclass(frozen=True)
class Dataset:
    r"""A preprocessed data set.

    Attributes
    ----------
    X : ndarray, shape (n, d)
        Features (float64), rows scaled as requested (unit norm by default).
    y : ndarray, shape (n,)
        Labels in :math:`\{-1, +1\}` (classification) or targets in :math:`[-1, 1]`
        (regression), float64.
    feature_names : tuple of str
        One name per column of ``X``.
    description : str
        Source, size and the preprocessing applied.
    name : str
        Short identifier, e.g. ``"kidney"``.
    task : str
        ``"classification"`` (use with the logistic loss) or ``"regression"``.
    theta_true : ndarray or None
        The generating parameter, for synthetic data only.
    """

    X: np.ndarray
    y: np.ndarray
    feature_names: tuple[str, ...]
    description: str
    name: str = ""
    task: str = "classification"
    theta_true: np.ndarray | None = field(default=None, repr=False)

    @property
    def n(self) -> int:
        """Number of records."""
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        """Number of features."""
        return int(self.X.shape[1])


# --------------------------------------------------------------------------- files


def _data_root():
    """The ``pdpkit/data`` directory as an ``importlib.resources`` traversable."""
    return resources.files("pdpkit").joinpath("data")


def read_vendored(name: str) -> bytes:
    """Return the original bytes of the vendored file ``name``, after verifying them.

    Parameters
    ----------
    name : str
        The original file name, a key of :data:`VENDORED_FILES`
        (e.g. ``"winequality-red.csv"``).

    Returns
    -------
    bytes
        The decompressed file, byte-identical to the source file recorded in
        ``pdpkit/data/README.md``.

    Raises
    ------
    ValueError
        If ``name`` is not a vendored file.
    DataIntegrityError
        If the archive is missing, is not a valid ``.xz`` stream, or either the
        archive's or the decompressed content's SHA-256 differs from the recorded one.
    """
    if name not in VENDORED_FILES:
        raise ValueError(f"name must be one of {sorted(VENDORED_FILES)}; got {name!r}")
    entry = VENDORED_FILES[name]
    resource = _data_root().joinpath(entry.archive_name)
    try:
        blob = resource.read_bytes()
    except (FileNotFoundError, OSError) as exc:
        raise DataIntegrityError(
            f"vendored data file pdpkit/data/{entry.archive_name} is missing or unreadable "
            f"({exc}); reinstall pdpkit"
        ) from exc
    got = hashlib.sha256(blob).hexdigest()
    if got != entry.archive_sha256:
        raise DataIntegrityError(
            f"checksum mismatch for pdpkit/data/{entry.archive_name}: expected SHA-256 "
            f"{entry.archive_sha256}, got {got}; the file is corrupted or was modified"
        )
    try:
        raw = lzma.decompress(blob, format=lzma.FORMAT_XZ)
    except lzma.LZMAError as exc:  # pragma: no cover - only reachable with a forged checksum
        raise DataIntegrityError(f"pdpkit/data/{entry.archive_name} is not a valid .xz archive: {exc}") from exc
    got = hashlib.sha256(raw).hexdigest()
    if got != entry.original_sha256 or len(raw) != entry.original_size:
        raise DataIntegrityError(  # pragma: no cover - archive checksum already matched
            f"checksum mismatch for the content of {entry.archive_name}: expected SHA-256 "
            f"{entry.original_sha256} ({entry.original_size} B), got {got} ({len(raw)} B)"
        )
    return raw


def verify_vendored_data() -> dict[str, str]:
    """Verify every vendored file; return ``{original name: SHA-256 of its content}``.

    Raises :class:`DataIntegrityError` on the first file that fails.
    """
    return {name: hashlib.sha256(read_vendored(name)).hexdigest() for name in VENDORED_FILES}


# ------------------------------------------------------------------- row scaling


def normalize_rows(X: ArrayLike) -> np.ndarray:
    r"""Scale every row to unit Euclidean norm, :math:`x_i \leftarrow x_i/\|x_i\|_2`.

    A per-record transformation, so it costs no privacy (Redberg, Koskela & Wang
    2023, §5). Rows that are exactly zero are left at zero.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Finite features.

    Returns
    -------
    ndarray, shape (n, d)
        A new float64 array whose nonzero rows have norm 1.
    """
    X = as_finite_array(X, "X", ndim=2)
    _big, Y = _max_scaled(X)
    norms = np.linalg.norm(Y, axis=1, keepdims=True)
    out = np.divide(Y, norms, out=np.zeros_like(Y), where=norms > 0)
    return _shrink_into_ball(out, 1.0)


def _max_scaled(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows divided by their largest absolute entry (so that squaring can neither
    underflow, for rows of size 1e-160, nor overflow, for 1e200), and that entry."""
    big = np.max(np.abs(X), axis=1, keepdims=True) if X.shape[1] else np.zeros((X.shape[0], 1))
    return big, np.divide(X, big, out=np.zeros_like(X), where=big > 0)


def _shrink_into_ball(out: np.ndarray, bound: float) -> np.ndarray:
    """Shrink, by an ulp at a time, the rows whose computed norm exceeds ``bound``.

    Division by the norm can leave a row at norm ``bound * (1 + 2**-52)``; privacy
    analyses assume ``||x|| <= bound`` exactly, so remove that last rounding error.
    """
    shrink = np.nextafter(1.0, 0.0)
    for _ in range(64):
        over = np.linalg.norm(out, axis=1) > bound
        if not np.any(over):
            return out
        out[over] *= shrink
    raise AssertionError("row scaling did not converge")  # pragma: no cover


def clip_rows_to_unit_norm(X: ArrayLike, *, bound: float = 1.0) -> np.ndarray:
    r"""Scale down the rows whose norm exceeds ``bound``: :math:`x_i \leftarrow x_i/\max(1, \|x_i\|_2/B)`.

    Rows already inside the ball of radius ``bound`` are unchanged. Per-record, so
    privacy-free.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Finite features.
    bound : float, default 1.0
        Radius :math:`B > 0` of the ball.

    Returns
    -------
    ndarray, shape (n, d)
        A new float64 array with :math:`\|x_i\|_2 \le B` for every row.
    """
    X = as_finite_array(X, "X", ndim=2)
    bound_arr = check_nonnegative(bound, "bound")
    if bound_arr.ndim != 0 or float(bound_arr) <= 0:
        raise ValueError(f"bound must be a scalar > 0; got {bound!r}")
    B = float(bound_arr)
    big, Y = _max_scaled(X)
    # ||x|| > B  <=>  ||x / big|| > B / big, computed without overflow.
    with np.errstate(divide="ignore", over="ignore"):  # B/big = inf means "inside"
        over = np.linalg.norm(Y, axis=1) > np.divide(B, big[:, 0])
    out = X.copy()
    if np.any(over):
        out[over] = B * normalize_rows(X[over])
    return _shrink_into_ball(out, B)


def _finish_rows(X: np.ndarray, feature_names, row_norm: str, intercept: bool) -> tuple[np.ndarray, tuple[str, ...]]:
    """Append the intercept column (and its name) if asked, then scale the rows as ``row_norm`` says."""
    feature_names = tuple(feature_names)
    if row_norm not in ("normalize", "clip", "none"):
        raise ValueError(f"row_norm must be 'normalize', 'clip' or 'none'; got {row_norm!r}")
    if not isinstance(intercept, (bool, np.bool_)):
        raise TypeError(f"intercept must be a bool; got {intercept!r}")
    if intercept:
        X = np.hstack([X, np.ones((X.shape[0], 1))])
        feature_names = (*feature_names, "intercept")
    if row_norm == "normalize":
        return normalize_rows(X), feature_names
    if row_norm == "clip":
        return clip_rows_to_unit_norm(X), feature_names
    return np.ascontiguousarray(X, dtype=np.float64), feature_names


def _standardize(columns: np.ndarray) -> np.ndarray:
    """Column-standardise, ignoring NaN; NaN (missing) becomes 0 (= the column mean)."""
    mean = np.nanmean(columns, axis=0)
    std = np.nanstd(columns, axis=0)
    std = np.where(std > 0, std, 1.0)
    z = (columns - mean) / std
    return np.where(np.isnan(z), 0.0, z)


def _row_norm_text(row_norm: str, intercept: bool) -> str:
    parts = []
    if intercept:
        parts.append("a constant intercept column appended")
    parts.append({
        "normalize": "rows scaled to unit Euclidean norm",
        "clip": "rows with norm > 1 scaled down to norm 1",
        "none": "rows not rescaled",
    }[row_norm])
    return "; ".join(parts)


# ------------------------------------------------------------------------ kidney

_KIDNEY_NUMERIC = ("age", "bp", "sg", "al", "su", "bgr", "bu", "sc", "sod", "pot", "hemo", "pcv", "wbcc", "rbcc")
_KIDNEY_BINARY = {  # attribute -> value coded +1 (the other is -1)
    "rbc": "abnormal", "pc": "abnormal", "pcc": "present", "ba": "present", "htn": "yes",
    "dm": "yes", "cad": "yes", "appet": "poor", "pe": "yes", "ane": "yes",
}


@lru_cache(maxsize=1)
def _kidney_table() -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    text = read_vendored("chronic_kidney_disease_full.arff").decode("ascii")
    names: list[str] = []
    rows: list[tuple[str, ...]] = []
    in_data = False
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("%"):
            continue
        low = s.lower()
        if not in_data:
            if low.startswith("@attribute"):
                names.append(s.split()[1].strip("'\""))
            elif low.startswith("@data"):
                in_data = True
            continue
        # Strip the stray tabs/spaces of the UCI file ('\tno', ' yes', 'ckd\t').
        fields = tuple(v.strip() for v in s.split(","))
        while len(fields) > len(names) and fields[-1] == "":
            fields = fields[:-1]
        if len(fields) != len(names):
            raise DataIntegrityError(f"kidney: a data row has {len(fields)} fields, expected {len(names)}")
        rows.append(fields)
    return tuple(names), tuple(rows)


def load_kidney(*, row_norm: RowNorm = "normalize", intercept: bool = False) -> Dataset:
    r"""UCI Chronic Kidney Disease (Rubini, Soundarapandian & Eswaran 2015): 400 patients, 24 features.

    The data set of the first source's Figs 7 and 9 (Redberg & Wang 2021, App. B.3),
    used there for private logistic regression.

    Preprocessing: the 14 numerical/ordinal attributes (``age, bp, sg, al, su, bgr,
    bu, sc, sod, pot, hemo, pcv, wbcc, rbcc``) are standardised over their observed
    values and a missing value ('?') becomes 0 (the mean); the 10 binary attributes
    are coded :math:`+1` (abnormal / present / yes / poor appetite), :math:`-1`
    (the other value) and 0 when missing. Then rows are scaled as ``row_norm`` says.
    Label :math:`y = +1` for ``ckd`` (250 rows), :math:`-1` for ``notckd`` (150).

    Parameters
    ----------
    row_norm : {"normalize", "clip", "none"}, default "normalize"
        Unit-norm rows (default), rows clipped into the unit ball, or no row scaling.
    intercept : bool, default False
        Append a constant column of ones before the row scaling.

    Returns
    -------
    Dataset
        ``X`` of shape (400, 24) (25 with ``intercept``), ``y`` in :math:`\{-1, +1\}`.
    """
    names, rows = _kidney_table()
    col = {nm: i for i, nm in enumerate(names)}
    table = np.array(rows, dtype=object)
    numeric = np.array(
        [[np.nan if v == "?" else float(v) for v in table[:, col[nm]]] for nm in _KIDNEY_NUMERIC]
    ).T
    parts = [_standardize(numeric)]
    for nm, positive in _KIDNEY_BINARY.items():
        v = table[:, col[nm]]
        parts.append(np.where(v == "?", 0.0, np.where(v == positive, 1.0, -1.0))[:, None])
    X = np.hstack(parts)
    label = table[:, col["class"]]
    if not set(label) <= {"ckd", "notckd"}:
        raise DataIntegrityError("kidney: unexpected class values")
    y = np.where(label == "ckd", 1.0, -1.0)
    feature_names = _KIDNEY_NUMERIC + tuple(f"{nm}={pos}" for nm, pos in _KIDNEY_BINARY.items())
    X, feature_names = _finish_rows(X, feature_names, row_norm, intercept)
    desc = (
        "UCI Chronic Kidney Disease (Rubini, Soundarapandian & Eswaran 2015), 400 rows: "
        "14 numerical/ordinal attributes standardised (missing -> 0), 10 binary attributes "
        "coded +1/-1 (missing -> 0); " + _row_norm_text(row_norm, intercept)
        + "; y = +1 for ckd (250), -1 for notckd (150)."
    )
    return Dataset(X, y, feature_names, desc, name="kidney", task="classification")


# -------------------------------------------------------------------------- wine


@lru_cache(maxsize=2)
def _wine_table(color: str) -> tuple[tuple[str, ...], np.ndarray]:
    text = read_vendored(f"winequality-{color}.csv").decode("ascii")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    header = tuple(h.strip().strip('"') for h in lines[0].split(";"))
    data = np.array([[float(v) for v in ln.split(";")] for ln in lines[1:]])
    return header, data


def load_wine_quality(
    color: Literal["red", "white", "both"] = "red",
    *,
    row_norm: RowNorm = "normalize",
    intercept: bool = False,
) -> Dataset:
    r"""UCI Wine Quality (Cortez and coauthors 2009): red (1,599) and/or white (4,898) wines.

    The data set of the first source's Figs 8 and 10 (Redberg & Wang 2021, App. B.3),
    used there for private linear regression.

    Preprocessing: the 11 physicochemical features are standardised (over the rows
    loaded); with ``color="both"`` a 12th feature ``is_red`` (:math:`\pm 1`) is
    added. The target is the quality score :math:`q \in \{0, \dots, 10\}` mapped to
    :math:`y = (q - 5)/5 \in [-1, 1]` (a data-independent map: the documented score
    range). Then rows are scaled as ``row_norm`` says.

    Parameters
    ----------
    color : {"red", "white", "both"}, default "red"
        Which wines; ``"both"`` stacks red then white.
    row_norm : {"normalize", "clip", "none"}, default "normalize"
        Unit-norm rows (default), rows clipped into the unit ball, or no row scaling.
    intercept : bool, default False
        Append a constant column of ones before the row scaling.

    Returns
    -------
    Dataset
        ``X`` of shape (1599, 11), (4898, 11) or (6497, 12) (one more column with
        ``intercept``); ``y`` in :math:`[-1, 1]`.
    """
    if color not in ("red", "white", "both"):
        raise ValueError(f"color must be 'red', 'white' or 'both'; got {color!r}")
    colors = ("red", "white") if color == "both" else (color,)
    blocks = [_wine_table(c) for c in colors]
    header = blocks[0][0]
    data = np.vstack([b[1] for b in blocks])
    features = _standardize(data[:, :-1])
    feature_names = header[:-1]
    if color == "both":
        is_red = np.concatenate([np.ones(len(blocks[0][1])), -np.ones(len(blocks[1][1]))])
        features = np.hstack([features, is_red[:, None]])
        feature_names = feature_names + ("is_red",)
    quality = data[:, -1]
    y = (quality - 5.0) / 5.0
    X, feature_names = _finish_rows(features, feature_names, row_norm, intercept)
    counts = {"red": 1599, "white": 4898, "both": 6497}
    desc = (
        f"UCI Wine Quality (Cortez et al. 2009), {color}, {counts[color]} rows: 11 physicochemical "
        "features standardised" + (" plus is_red = +1/-1" if color == "both" else "")
        + "; " + _row_norm_text(row_norm, intercept)
        + "; y = (quality - 5)/5 in [-1, 1] (quality scores 0..10)."
    )
    return Dataset(X, y, feature_names, desc, name=f"wine-{color}", task="regression")


# ---------------------------------------------------------------- credit default


@lru_cache(maxsize=1)
def _credit_table() -> tuple[tuple[str, ...], np.ndarray]:
    text = read_vendored("default_of_credit_card_clients.tsv").decode("ascii")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    header = tuple(h.strip() for h in lines[0].split("\t"))
    data = np.array([[float(v) for v in ln.split("\t")] for ln in lines[1:]])
    return header, data


def load_credit_default(*, row_norm: RowNorm = "normalize", intercept: bool = False) -> Dataset:
    r"""UCI default of credit card clients (Yeh & Lien 2009): 30,000 clients.

    The data set of the first source's §4.2 and App. B.2 (Redberg & Wang 2021).

    Preprocessing: the 23 attributes become 28 features. ``SEX`` is coded
    :math:`\pm 1` (female :math:`+1`); ``EDUCATION`` is one-hot coded as graduate
    school / university / high school / other (codes 0, 4, 5, 6 are "other");
    ``MARRIAGE`` as married / single / other (codes 0 and 3 are "other"); the 20
    numerical columns (``LIMIT_BAL, AGE, PAY_0, PAY_2..PAY_6, BILL_AMT1..6,
    PAY_AMT1..6``) are standardised. Then rows are scaled as ``row_norm`` says. Label
    :math:`y = +1` for default next month (6,636 rows), :math:`-1` otherwise.

    Parameters
    ----------
    row_norm : {"normalize", "clip", "none"}, default "normalize"
        Unit-norm rows (default), rows clipped into the unit ball, or no row scaling.
    intercept : bool, default False
        Append a constant column of ones before the row scaling.

    Returns
    -------
    Dataset
        ``X`` of shape (30000, 28) (29 with ``intercept``), ``y`` in :math:`\{-1, +1\}`.
    """
    header, data = _credit_table()
    col = {nm: i for i, nm in enumerate(header)}
    numeric_names = ("LIMIT_BAL", "AGE", "PAY_0", "PAY_2", "PAY_3", "PAY_4", "PAY_5", "PAY_6") + tuple(
        f"BILL_AMT{k}" for k in range(1, 7)
    ) + tuple(f"PAY_AMT{k}" for k in range(1, 7))
    numeric = _standardize(data[:, [col[nm] for nm in numeric_names]])
    sex = np.where(data[:, col["SEX"]] == 2, 1.0, -1.0)[:, None]
    edu = data[:, col["EDUCATION"]]
    edu_onehot = np.column_stack([edu == 1, edu == 2, edu == 3, ~np.isin(edu, (1, 2, 3))]).astype(float)
    mar = data[:, col["MARRIAGE"]]
    mar_onehot = np.column_stack([mar == 1, mar == 2, ~np.isin(mar, (1, 2))]).astype(float)
    X = np.hstack([numeric, sex, edu_onehot, mar_onehot])
    feature_names = numeric_names + (
        "SEX=female", "EDUCATION=graduate", "EDUCATION=university", "EDUCATION=high_school",
        "EDUCATION=other", "MARRIAGE=married", "MARRIAGE=single", "MARRIAGE=other",
    )
    y = np.where(data[:, col["default payment next month"]] == 1, 1.0, -1.0)
    X, feature_names = _finish_rows(X, feature_names, row_norm, intercept)
    desc = (
        "UCI default of credit card clients (Yeh & Lien 2009), 30000 rows: 20 numerical columns "
        "standardised, SEX +1/-1, EDUCATION and MARRIAGE one-hot; " + _row_norm_text(row_norm, intercept)
        + "; y = +1 for default next month (6636), -1 otherwise."
    )
    return Dataset(X, y, feature_names, desc, name="credit-default", task="classification")


# ------------------------------------------------------------------------- adult

_ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
    "income",
)
_ADULT_CONTINUOUS = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")
_ADULT_CATEGORICAL = (
    "workclass", "education", "marital-status", "occupation", "relationship", "race", "sex", "native-country",
)


@lru_cache(maxsize=1)
def _adult_table() -> tuple[np.ndarray, np.ndarray]:
    """Rows without missing values of adult.data then adult.test, and a test-row mask."""
    rows: list[list[str]] = []
    is_test: list[bool] = []
    for fname, test in (("adult.data", False), ("adult.test", True)):
        for line in read_vendored(fname).decode("ascii").splitlines():
            if not line.strip() or line.startswith("|"):
                continue
            fields = [v.strip() for v in line.split(",")]
            if len(fields) != len(_ADULT_COLUMNS):
                raise DataIntegrityError(f"adult: a row of {fname} has {len(fields)} fields")
            if "?" in fields:
                continue
            fields[-1] = fields[-1].rstrip(".")
            rows.append(fields)
            is_test.append(test)
    return np.array(rows, dtype=object), np.array(is_test)


def load_adult(
    split: Literal["all", "train", "test"] = "all",
    *,
    row_norm: RowNorm = "normalize",
    intercept: bool = False,
) -> Dataset:
    r"""UCI Adult (census income): 45,222 complete rows, 104 features.

    Used by the third source (Redberg, Koskela & Wang 2023, §5, Table 2) with the
    preprocessing of Iyengar et al. (2019): rows with a missing value ('?') are
    dropped; the 8 categorical columns are one-hot coded (the categories are those
    present in the complete rows of both files, 98 columns) and the 6 continuous
    columns are divided by their maximum; then rows are scaled as ``row_norm`` says
    (the third source normalises rows to unit norm). Label :math:`y = +1` for
    income >50K, :math:`-1` otherwise. Iyengar et al.'s script additionally loses the
    last complete row of each file through its slicing (45,220 rows); we keep them.

    Parameters
    ----------
    split : {"all", "train", "test"}, default "all"
        ``adult.data`` (30,162 complete rows), ``adult.test`` (15,060) or both.
        Column scaling uses the statistics of all 45,222 rows in every case, so the
        features of a row do not depend on ``split``.
    row_norm : {"normalize", "clip", "none"}, default "normalize"
        Unit-norm rows (default), rows clipped into the unit ball, or no row scaling.
    intercept : bool, default False
        Append a constant column of ones before the row scaling.

    Returns
    -------
    Dataset
        ``X`` of shape (n, 104) (105 with ``intercept``), ``y`` in :math:`\{-1, +1\}`.
    """
    if split not in ("all", "train", "test"):
        raise ValueError(f"split must be 'all', 'train' or 'test'; got {split!r}")
    table, is_test = _adult_table()
    col = {nm: i for i, nm in enumerate(_ADULT_COLUMNS)}
    cont = table[:, [col[c] for c in _ADULT_CONTINUOUS]].astype(float)
    parts = [cont / cont.max(axis=0)]
    feature_names: list[str] = list(_ADULT_CONTINUOUS)
    for c in _ADULT_CATEGORICAL:
        values = table[:, col[c]].astype(str)
        cats, index = np.unique(values, return_inverse=True)
        onehot = np.zeros((values.size, cats.size))
        onehot[np.arange(values.size), index] = 1.0  # values == cats[j] exactly where index == j
        parts.append(onehot)
        feature_names.extend(f"{c}={v}" for v in cats)
    X = np.hstack(parts)
    y = np.where(table[:, col["income"]] == ">50K", 1.0, -1.0)
    keep = {"all": np.ones(len(y), bool), "train": ~is_test, "test": is_test}[split]
    X, y = X[keep], y[keep]
    X, feature_names = _finish_rows(X, feature_names, row_norm, intercept)
    desc = (
        f"UCI Adult ({split}), {len(y)} complete rows (Iyengar et al. 2019 recipe): 6 continuous "
        "columns divided by their maximum, 8 categorical columns one-hot; "
        + _row_norm_text(row_norm, intercept) + "; y = +1 for income >50K, -1 otherwise."
    )
    return Dataset(X, y, feature_names, desc, name=f"adult-{split}", task="classification")


# ------------------------------------------------------------------ raw tables


def _pandas():
    try:
        import pandas
    except ImportError as exc:  # pragma: no cover - pandas ships with the test and book extras
        raise ImportError("the *_frame loaders return a pandas.DataFrame: pip install pandas") from exc
    return pandas


#: Public bounds of Adult's continuous columns, from the extract's documentation (``adult.names``:
#: ages 17 to 90, education-num 1 to 16, hours-per-week 1 to 99, capital-gain top-coded at 99999)
#: and generous round numbers where it gives none (fnlwgt, capital-loss). Not read from the rows.
ADULT_NUMERIC_BOUNDS: dict[str, tuple[float, float]] = {
    "age": (17.0, 90.0), "fnlwgt": (0.0, 1.5e6), "education-num": (1.0, 16.0), "capital-gain": (0.0, 99999.0),
    "capital-loss": (0.0, 5000.0), "hours-per-week": (1.0, 99.0),
}


def adult_documented_domains() -> dict[str, tuple[str, ...]]:
    """The values of each categorical column of Adult, as its documentation ``adult.names`` lists them.

    Read from the documentation (the lines ``column: value, value, ... .``), not from the
    records: the domains a schema may use without spending privacy. The order is the
    documentation's.

    Returns
    -------
    dict of str to tuple of str
        Column name to its documented values (the eight categorical columns).
    """
    out: dict[str, tuple[str, ...]] = {}
    for line in read_vendored("adult.names").decode("ascii").splitlines():
        name, sep, rest = line.partition(":")
        if not sep or name.startswith("|") or name.strip() not in _ADULT_COLUMNS:
            continue
        rest = rest.strip().rstrip(".")
        if rest != "continuous":
            out[name.strip()] = tuple(v.strip() for v in rest.split(","))
    return out


def adult_schema():
    r"""A public schema (:class:`pdpkit.schema.Schema`) for :func:`load_adult_frame`'s raw records.

    Continuous columns: :data:`ADULT_NUMERIC_BOUNDS`; categorical columns: their domains as
    ``adult.names`` lists them (:func:`adult_documented_domains`); the label ``income`` with the
    classes ``"<=50K"`` and ``">50K"``. Nothing in it is read from the records, so a model
    fitted through it (``schema=adult_schema()``) is encoded by public knowledge alone —
    unlike :func:`load_adult`, whose columns are divided by their maxima over the rows.
    """
    from .schema import Column, Schema

    domains = adult_documented_domains()
    if set(domains) != set(_ADULT_CATEGORICAL):
        raise DataIntegrityError("adult.names does not list every categorical column's domain")
    cols = [Column(c, kind="numeric", low=ADULT_NUMERIC_BOUNDS[c][0], high=ADULT_NUMERIC_BOUNDS[c][1])
            if c in ADULT_NUMERIC_BOUNDS else Column(c, kind="categorical", categories=domains[c])
            for c in _ADULT_COLUMNS[:-1]]
    cols.append(Column("income", role="label", kind="categorical", categories=("<=50K", ">50K")))
    return Schema(columns=tuple(cols))


def load_adult_frame(split: Literal["all", "train", "test"] = "all"):
    r"""UCI Adult as the original table: 15 raw columns, the complete rows, no preprocessing.

    The rows of :func:`load_adult` (rows with a missing value ``'?'`` dropped: 30,162 in
    ``adult.data``, 15,060 in ``adult.test``) with their original values: the 6 continuous
    columns as float64, the 8 categorical columns and the label ``income`` (``">50K"`` or
    ``"<=50K"``; the test file's trailing period removed) as str. No statistic of the data
    is applied, so the table is the input of a public schema (:mod:`pdpkit.schema`), whose
    categorical domains may be taken from the documentation (``read_vendored("adult.names")``).

    Parameters
    ----------
    split : {"all", "train", "test"}, default "all"
        ``adult.data``, ``adult.test`` or both (in that order).

    Returns
    -------
    pandas.DataFrame
        Shape (45222, 15), (30162, 15) or (15060, 15); the column names of ``adult.names``.
    """
    if split not in ("all", "train", "test"):
        raise ValueError(f"split must be 'all', 'train' or 'test'; got {split!r}")
    pd = _pandas()
    table, is_test = _adult_table()
    keep = {"all": np.ones(len(is_test), bool), "train": ~is_test, "test": is_test}[split]
    frame = pd.DataFrame(table[keep], columns=list(_ADULT_COLUMNS))
    for c in _ADULT_COLUMNS:
        frame[c] = frame[c].astype(float) if c in _ADULT_CONTINUOUS else frame[c].astype(str)
    return frame


def load_credit_default_frame():
    r"""UCI default of credit card clients as the original table: 25 raw columns, 30,000 rows.

    The columns of the distributed file, unchanged, all int64: ``ID`` (a record identifier,
    not a feature), ``LIMIT_BAL``, ``SEX`` (1 male, 2 female), ``EDUCATION`` (documented
    codes 1 graduate school, 2 university, 3 high school, 4 others; the file also holds 0, 5
    and 6), ``MARRIAGE`` (1 married, 2 single, 3 others; the file also holds 0), ``AGE``,
    ``PAY_0, PAY_2..PAY_6`` (repayment status, -2..8), ``BILL_AMT1..6``, ``PAY_AMT1..6`` and
    the label ``default payment next month`` (1 for default: 6,636 rows). No statistic of the
    data is applied, so the table is the input of a public schema (:mod:`pdpkit.schema`).

    Returns
    -------
    pandas.DataFrame
        Shape (30000, 25).
    """
    pd = _pandas()
    header, data = _credit_table()
    return pd.DataFrame(data.astype(np.int64), columns=list(header))


# --------------------------------------------------------------------- synthetic


def _unit_rows(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """n points uniform on the unit sphere of R^d (normalised standard Gaussians)."""
    Z = rng.standard_normal((n, d))
    norms = np.linalg.norm(Z, axis=1, keepdims=True)
    # A Gaussian vector is 0 with probability 0; guard anyway (d = 1 and Z = 0.0).
    out = np.divide(Z, norms, out=np.ones_like(Z) / np.sqrt(d), where=norms > 0)
    return _shrink_into_ball(out, 1.0)


def make_synthetic_logistic(
    n: int, *, d: int, theta_scale: float = 1.0, rng: np.random.Generator | None = None
) -> Dataset:
    r"""Synthetic logistic-regression data with unit-norm rows.

    The first source's Figs 4-5 (Redberg & Wang 2021, App. B.1) use "a synthetic
    data set for logistic regression as described in the main paper", which is not
    among our sources. We assume the standard well-specified model:

    * :math:`x_i` uniform on the unit sphere of :math:`\mathbb{R}^d` (so
      :math:`\|x_i\|_2 = 1`, the scaling every source assumes);
    * :math:`\theta^\star \sim \mathcal{N}(0, s^2 I_d)` with :math:`s` =
      ``theta_scale``, so that :math:`x_i^\top\theta^\star` has variance
      :math:`s^2` whatever :math:`d` (the signal does not fade as :math:`d` grows);
    * :math:`y_i = +1` with probability :math:`1/(1 + e^{-x_i^\top\theta^\star})`,
      else :math:`-1`.

    Parameters
    ----------
    n, d : int
        Number of records (:math:`\ge 1`) and dimension (:math:`\ge 1`).
    theta_scale : float, default 1.0
        :math:`s \ge 0`.
    rng : numpy.random.Generator, optional
        Source of randomness (a fresh ``default_rng()`` if None).

    Returns
    -------
    Dataset
        ``X`` (n, d) with unit rows, ``y`` in :math:`\{-1, +1\}`, ``theta_true``.
    """
    n = check_int_at_least(n, "n", 1)
    d = check_int_at_least(d, "d", 1)
    s = float(check_nonnegative(theta_scale, "theta_scale"))
    rng = as_generator(rng)
    X = _unit_rows(n, d, rng)
    theta = s * rng.standard_normal(d)
    t = X @ theta
    p = 0.5 * (1.0 + np.tanh(0.5 * t))  # expit(t) without overflow
    y = np.where(rng.random(n) < p, 1.0, -1.0)
    names = tuple(f"x{j}" for j in range(d))
    desc = (
        f"Synthetic logistic regression: n = {n}, d = {d}, x uniform on the unit sphere, "
        f"theta* ~ N(0, {s:g}^2 I), P(y = +1 | x) = expit(x' theta*)."
    )
    return Dataset(X, y, names, desc, name="synthetic-logistic", task="classification", theta_true=theta)


def make_synthetic_regression(
    n: int,
    *, d: int,
    noise: float = 0.1,
    theta_scale: float = 1.0,
    rng: np.random.Generator | None = None,
) -> Dataset:
    r"""Synthetic linear-regression data: unit-norm rows, targets clipped to :math:`[-1, 1]`.

    The linear Gaussian model of Wang (2019), Fig. 1: rows normalised to norm 1 and
    :math:`y` clipped to :math:`[-1, 1]`. Concretely (our choice where the source is
    silent): :math:`x_i` uniform on the unit sphere,
    :math:`\theta^\star \sim \mathcal{N}(0, s^2 I_d)` with :math:`s` =
    ``theta_scale``, and
    :math:`y_i = \operatorname{clip}(x_i^\top\theta^\star + \text{noise}\cdot
    \xi_i, -1, 1)` with :math:`\xi_i \sim \mathcal{N}(0, 1)`.

    Parameters
    ----------
    n, d : int
        Number of records (:math:`\ge 1`) and dimension (:math:`\ge 1`).
    noise : float, default 0.1
        Standard deviation of the additive Gaussian noise (:math:`\ge 0`).
    theta_scale : float, default 1.0
        :math:`s \ge 0`.
    rng : numpy.random.Generator, optional
        Source of randomness (a fresh ``default_rng()`` if None).

    Returns
    -------
    Dataset
        ``X`` (n, d) with unit rows, ``y`` in :math:`[-1, 1]`, ``theta_true``.
    """
    n = check_int_at_least(n, "n", 1)
    d = check_int_at_least(d, "d", 1)
    noise_f = float(check_nonnegative(noise, "noise"))
    s = float(check_nonnegative(theta_scale, "theta_scale"))
    rng = as_generator(rng)
    X = _unit_rows(n, d, rng)
    theta = s * rng.standard_normal(d)
    y = np.clip(X @ theta + noise_f * rng.standard_normal(n), -1.0, 1.0)
    names = tuple(f"x{j}" for j in range(d))
    desc = (
        f"Synthetic linear regression: n = {n}, d = {d}, x uniform on the unit sphere, "
        f"theta* ~ N(0, {s:g}^2 I), y = clip(x' theta* + {noise_f:g} N(0, 1), -1, 1)."
    )
    return Dataset(X, y, names, desc, name="synthetic-regression", task="regression", theta_true=theta)


# Shapes and generator settings of the two synthetic sets of Iyengar et al. (2019).
_IYENGAR_SYNTHETIC = {
    "L": dict(n_samples=10_000, n_features=40, n_informative=30, n_redundant=2, class_sep=2.0, seed=1000),
    "H": dict(n_samples=2_000, n_features=2_000, n_informative=10, n_redundant=0, class_sep=2.0, seed=1),
}


def make_iyengar_synthetic(kind: Literal["L", "H"], *, rng: int | np.random.Generator | None = None) -> Dataset:
    r"""Synthetic-L or Synthetic-H, the synthetic classification sets of Iyengar and coauthors (2019).

    Redberg, Koskela & Wang (2023, §5, Fig 2, Table 1) use "the Adult, Synthetic-L,
    Synthetic-H and Gisette datasets provided by Iyengar et al. (2019)" and do not describe
    them further. Iyengar et al.'s public benchmark (``sunblaze-ucb/dpml-benchmark``,
    ``common/datasets.py``) draws them with scikit-learn's ``make_classification``
    (Guyon's Madelon design: Gaussian clusters on the vertices of a hypercube, class
    separation 2, 1% of labels flipped):

    * **Synthetic-L** (low-dimensional): 10,000 rows, 40 features, 30 informative (and
      scikit-learn's default 2 redundant), random state 1000;
    * **Synthetic-H** (high-dimensional): 2,000 rows, 2,000 features, 10 informative, no
      redundant ones, random state 1.

    Iyengar et al. split every set 80 / 20 in row order into training and test rows; the
    rows are returned unscaled (the source scales them to unit norm and appends a bias,
    :func:`pdpkit.experiments.amp.with_bias`). The generator's stream may differ between
    scikit-learn versions, so the rows are the same *design*, not necessarily the same bytes,
    as the benchmark's.

    Parameters
    ----------
    kind : {"L", "H"}
        Synthetic-L or Synthetic-H.
    rng : int, numpy.random.Generator or None, optional
        Random state passed to ``make_classification``; ``None`` uses the benchmark's
        (1000 for L, 1 for H).

    Returns
    -------
    Dataset
        ``X`` of shape (10,000, 40) or (2,000, 2,000), ``y`` in :math:`\{-1, +1\}`.
    """
    from sklearn.datasets import make_classification

    if kind not in _IYENGAR_SYNTHETIC:
        raise ValueError(f"kind must be 'L' or 'H'; got {kind!r}")
    prm = dict(_IYENGAR_SYNTHETIC[kind])
    seed = prm.pop("seed")
    if rng is None:
        state = seed
    elif isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        state = int(rng)
    else:
        state = int(as_generator(rng).integers(2**31 - 1))
    X, y01 = make_classification(n_classes=2, random_state=state, **prm)
    y = np.where(y01 == 1, 1.0, -1.0)
    names = tuple(f"x{j}" for j in range(X.shape[1]))
    desc = (f"Synthetic-{kind} of Iyengar et al. (2019): scikit-learn make_classification with "
            f"{prm['n_samples']} rows, {prm['n_features']} features ({prm['n_informative']} informative), "
            f"class_sep {prm['class_sep']:g}, random state {state}; y in {{-1, +1}}.")
    return Dataset(X, y, names, desc, name=f"synthetic-{kind}", task="classification")
