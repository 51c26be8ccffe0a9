"""fcbo_dist.read: one result of fcbo-dist, checked before it is trusted.

The checks mirror `fcbo-dist info` (src/io/h5util.c, src/job/h5part.c):
a file must be complete, of a format version this reader knows, and its
attributes must agree with its datasets; a several-rank result's parts
(virtual datasets, which HDF5 reads as fill values when a part is
missing) must all be present, complete, of the same input and hold the
counts the master expects.  Anything else raises FormatError.
"""
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import h5py
import numpy as np
import scipy.sparse

WORKLOADS = ("lattice", "spearman", "dpc", "bcp")
FORMATS = WORKLOADS + ("rules",)  # rules.h5 sits beside a lattice.h5: read(DIR, "rules") picks it
FORMAT_VERSION = 2  # the newest this reader knows (src/common/version.h's FD_FORMAT_VERSION)


class FormatError(ValueError):
    """The file is not a whole, consistent fcbo-dist result."""


def _attr(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, np.ndarray) and v.shape == ():
        v = v[()]
    if isinstance(v, np.generic):
        return v.item()
    return v


def _strings(ds):
    return np.array([s.decode("utf-8", "replace") if isinstance(s, bytes) else str(s) for s in ds[:]], dtype=object)


@dataclass
class Result:
    path: str
    workload: str
    attrs: Dict[str, Any]


@dataclass
class Lattice(Result):
    intents: scipy.sparse.csr_matrix = None
    supports: np.ndarray = None
    extents: Optional[scipy.sparse.csr_matrix] = None
    edges: Optional[scipy.sparse.csr_matrix] = None  # --edges: concept i's upper covers in row i
    attribute_ids: np.ndarray = None
    attribute_names: np.ndarray = None
    object_names: Optional[np.ndarray] = None

    def intent(self, c):
        """Concept c's intent as the attributes' ids (ascending)."""
        lo, hi = self.intents.indptr[c], self.intents.indptr[c + 1]
        return self.attribute_ids[self.intents.indices[lo:hi]]


@dataclass
class Spearman(Result):
    pairs: Any = None  # pandas.DataFrame, or a numpy structured array without pandas
    histogram: Optional[np.ndarray] = None
    histogram_edges: Optional[np.ndarray] = None
    names: Optional[np.ndarray] = None
    y_names: Optional[np.ndarray] = None


@dataclass
class Dpc(Result):
    labels: np.ndarray = None
    rho: np.ndarray = None
    delta: np.ndarray = None
    parent: np.ndarray = None
    gamma: np.ndarray = None
    centers: np.ndarray = None
    core_labels: Optional[np.ndarray] = None
    predict: Dict[str, np.ndarray] = field(default_factory=dict)  # --predict NEW: labels, rho, parent, delta


@dataclass
class Bcp(Result):
    weights: np.ndarray = None
    factors: List[np.ndarray] = field(default_factory=list)
    ard_precisions: np.ndarray = None
    sigmas: List[np.ndarray] = field(default_factory=list)
    trace: Dict[str, np.ndarray] = field(default_factory=dict)
    starts: Dict[str, np.ndarray] = field(default_factory=dict)  # --starts S > 1: each start's end
    completed: Optional[np.ndarray] = None  # --completed: the model's tensor (missing entries predicted)
    # --predict-at FILE: the listed entries' 0-based indices (K x order) and the model there (K)
    predictions: Dict[str, np.ndarray] = field(default_factory=dict)


@dataclass
class Rules(Result):
    """`fcbo-dist rules`: the stem base and the Luxenburger basis.  Premises
    and conclusions are CSR rows over the attributes (columns in the order
    of attribute_ids, as a Lattice's intents)."""
    implication_premises: Optional[scipy.sparse.csr_matrix] = None
    implication_conclusions: Optional[scipy.sparse.csr_matrix] = None
    implication_support: Optional[np.ndarray] = None
    rule_premises: Optional[scipy.sparse.csr_matrix] = None
    rule_conclusions: Optional[scipy.sparse.csr_matrix] = None
    rules: Dict[str, np.ndarray] = field(default_factory=dict)  # support, confidence, lift, lower, upper
    attribute_ids: np.ndarray = None
    attribute_names: np.ndarray = None

    def ids(self, row):
        """A premise's or conclusion's row as the attributes' ids (ascending)."""
        return self.attribute_ids[row.indices]


def _fail(path, what):
    raise FormatError("%s: %s" % (path, what))


def _check_header(f, path, want):
    fmt = _attr(f.attrs.get("format", b""))
    if want is None:
        if not fmt.startswith("fcbo-dist ") or fmt[10:] not in FORMATS:
            _fail(path, "not an fcbo-dist result (format %r)" % fmt)
    elif fmt != "fcbo-dist " + want:
        _fail(path, "format %r, not 'fcbo-dist %s'" % (fmt, want))
    if _attr(f.attrs.get("complete", 0)) != 1:
        _fail(path, "incomplete (no complete = 1): the run that wrote it did not finish")
    version = _attr(f.attrs.get("format_version", 1))
    if not isinstance(version, int) or version > FORMAT_VERSION:
        _fail(path, "format_version %r, newer than this reader (%d)" % (version, FORMAT_VERSION))
    return fmt[10:]


def _count(f, path, name):
    if name not in f.attrs:
        _fail(path, "attribute %s missing" % name)
    v = _attr(f.attrs[name])
    if not isinstance(v, int) or v < 0:
        _fail(path, "attribute %s = %r is not a count" % (name, v))
    return v


def _dataset(f, path, name, length=None, shape=None):
    if name not in f or not isinstance(f[name], h5py.Dataset):
        _fail(path, "dataset /%s missing" % name)
    d = f[name]
    if length is not None and d.shape != (length,):
        _fail(path, "/%s has shape %s, the attributes say (%d,)" % (name, d.shape, length))
    if shape is not None and d.shape != shape:
        _fail(path, "/%s has shape %s, expected %s" % (name, d.shape, shape))
    try:
        return d[()]
    except OSError as e:  # a damaged chunk fails its Fletcher-32 checksum
        _fail(path, "/%s cannot be read: %s" % (name, e))


def _check_parts(f, path, workload, per_rank):
    """A master's parts: present, complete, of the same input, and holding
    what /ranks/<per_rank> says."""
    if "parts" not in f.attrs:
        return
    parts = _count(f, path, "parts")
    names = _strings(f["ranks/part"]) if "ranks/part" in f else None
    if names is None or len(names) != parts:
        _fail(path, "/ranks/part does not name %d parts" % parts)
    counts = _dataset(f, path, "ranks/" + per_rank, parts)
    sha = _attr(f.attrs.get("input_sha256", ""))
    base = os.path.dirname(os.path.abspath(path))
    for r, name in enumerate(names):
        if os.path.basename(name) != name:
            _fail(path, "part %d's name %r is not a file beside the master" % (r, name))
        p = os.path.join(base, name)
        if not os.path.isfile(p):
            _fail(path, "part %d (%s) is missing" % (r, name))
        try:
            with h5py.File(p, "r") as pf:
                if _attr(pf.attrs.get("format", b"")) != "fcbo-dist %s part" % workload:
                    _fail(p, "not a %s part" % workload)
                if _attr(pf.attrs.get("complete", 0)) != 1:
                    _fail(p, "incomplete part")
                if _attr(pf.attrs.get("input_sha256", "")) != sha:
                    _fail(p, "a part of another input (input_sha256 differs from the master's)")
                key = "n_concepts" if workload == "lattice" else "n_pairs"
                if _count(pf, p, key) != int(counts[r]):
                    _fail(p, "%s = %d, the master expects %d" % (key, _count(pf, p, key), int(counts[r])))
        except OSError as e:
            _fail(p, "cannot be read: %s" % e)


def _csr(f, path, group, rows, ncols, index_of=None):
    off = _dataset(f, path, group + "/offsets", rows + 1).astype(np.int64)
    ids = _dataset(f, path, group + "/ids")
    if ids.ndim != 1:
        _fail(path, "/%s/ids is not one-dimensional" % group)
    if off[0] != 0 or off[-1] != len(ids) or np.any(np.diff(off) < 0):
        _fail(path, "/%s/offsets are not a CSR index into %d ids" % (group, len(ids)))
    cols = index_of(ids) if index_of else ids.astype(np.int64)
    if len(cols) and (cols.min() < 0 or cols.max() >= ncols):
        _fail(path, "/%s/ids point outside the %d columns" % (group, ncols))
    return scipy.sparse.csr_matrix((np.ones(len(ids), dtype=np.uint8), cols, off), shape=(rows, ncols))


def _read_lattice(f, path, attrs):
    n = _count(f, path, "n_concepts")
    m = _count(f, path, "n_attributes")
    _check_parts(f, path, "lattice", "concepts")
    ids, index_of = _attribute_index(f, path, m, "/intents/ids")
    r = Lattice(path, "lattice", attrs)
    r.intents = _csr(f, path, "intents", n, m, index_of)
    r.supports = _dataset(f, path, "supports", n)
    r.attribute_ids = ids
    r.attribute_names = _strings(f["attributes/names"]) if "attributes/names" in f else None
    r.object_names = _strings(f["objects/names"]) if "objects/names" in f else None
    if "edges/offsets" in f:
        r.edges = _csr(f, path, "edges", n, n)
    if "extents/offsets" in f:
        r.extents = _csr(f, path, "extents", n, _count(f, path, "n_objects"))
        if not np.array_equal(np.diff(r.extents.indptr), r.supports):
            _fail(path, "/extents disagree with /supports")
    return r


def _attribute_index(f, path, m, where):
    ids = _dataset(f, path, "attributes/ids", m).astype(np.int64)
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    if len(sorted_ids) > 1 and np.any(np.diff(sorted_ids) == 0):
        _fail(path, "/attributes/ids repeats an id")

    def index_of(x):
        x = x.astype(np.int64)
        pos = np.searchsorted(sorted_ids, x)
        ok = (pos < m) & (sorted_ids[np.minimum(pos, max(m - 1, 0))] == x) if m else np.zeros(len(x), bool)
        if not np.all(ok):
            _fail(path, "%s holds an id that /attributes/ids does not list" % where)
        return order[pos]

    return ids, index_of


def _read_rules(f, path, attrs):
    m = _count(f, path, "n_attributes")
    ids, index_of = _attribute_index(f, path, m, "a premise or conclusion")
    r = Rules(path, "rules", attrs)
    r.attribute_ids = ids
    r.attribute_names = _strings(f["attributes/names"]) if "attributes/names" in f else None
    if "implications" in f:
        n = _count(f, path, "n_implications")
        r.implication_premises = _csr(f, path, "implications/premise", n, m, index_of)
        r.implication_conclusions = _csr(f, path, "implications/conclusion", n, m, index_of)
        r.implication_support = _dataset(f, path, "implications/support", n)
    if "rules" in f:
        n = _count(f, path, "n_rules")
        r.rule_premises = _csr(f, path, "rules/premise", n, m, index_of)
        r.rule_conclusions = _csr(f, path, "rules/conclusion", n, m, index_of)
        r.rules = {k: _dataset(f, path, "rules/" + k, n) for k in ("support", "confidence", "lift", "lower", "upper")}
        c = r.rules["confidence"]
        if n and (np.any(~(c > 0)) or np.any(c > 1)):
            _fail(path, "/rules/confidence leaves (0, 1]")
    return r


def _read_spearman(f, path, attrs):
    n = _count(f, path, "n_pairs")
    _check_parts(f, path, "spearman", "pairs")
    # i and j are input row numbers: dropped rows (--drop-nan-rows, of
    # either input: the attribute sums them) keep their numbers.
    kept = _count(f, path, "rows")
    jkept = _count(f, path, "y_rows") if "y_rows" in f.attrs else kept
    dropped = _count(f, path, "dropped_rows")
    rows, jrows = kept + dropped, jkept + dropped
    cols = {k: _dataset(f, path, "pairs/" + k, n) for k in ("i", "j", "rho", "p")}
    if n and (cols["i"].max() >= rows or cols["j"].max() >= jrows):
        _fail(path, "/pairs/i or /pairs/j name a row past the matrix's %d" % rows)
    r = Spearman(path, "spearman", attrs)

    def names(key, lo, hi):
        if key not in f:
            return None
        v = _strings(f[key])
        if not lo <= len(v) <= hi:
            _fail(path, "/%s holds %d names for %d rows" % (key, len(v), lo))
        return v

    r.names = names("names", kept, rows)
    r.y_names = names("y_names", jkept, jrows) if "y_rows" in f.attrs else r.names
    if "histogram" in f:
        r.histogram = _dataset(f, path, "histogram")
        r.histogram_edges = _dataset(f, path, "histogram_edges", len(r.histogram) + 1)
    try:
        import pandas as pd
    except ImportError:
        pd = None
    if pd is not None:
        r.pairs = pd.DataFrame(cols)
        if r.names is not None and n and cols["i"].max() < len(r.names):
            r.pairs["name_i"] = r.names[cols["i"]]
        if r.y_names is not None and n and cols["j"].max() < len(r.y_names):
            r.pairs["name_j"] = r.y_names[cols["j"]]
    else:
        a = np.empty(n, dtype=[("i", "u8"), ("j", "u8"), ("rho", "f4"), ("p", "f8")])
        for k, v in cols.items():
            a[k] = v
        r.pairs = a
    return r


def _read_dpc(f, path, attrs):
    n = _count(f, path, "n_points")
    r = Dpc(path, "dpc", attrs)
    for k in ("labels", "rho", "delta", "parent", "gamma"):
        setattr(r, k, _dataset(f, path, k, n))
    r.centers = _dataset(f, path, "centers")
    if r.centers.ndim != 1 or np.any((r.centers < 0) | (r.centers >= n)):
        _fail(path, "/centers name points outside the %d" % n)
    if np.any((r.parent < -1) | (r.parent >= n)):
        _fail(path, "/parent names points outside the %d" % n)
    if "core_labels" in f:
        r.core_labels = _dataset(f, path, "core_labels", n)
    if "predict" in f:
        m = _count(f["predict"], path + ":/predict", "n_points")
        r.predict = {k: _dataset(f, path, "predict/" + k, m) for k in ("labels", "rho", "parent", "delta")}
        if m and (r.predict["parent"].min() < 0 or r.predict["parent"].max() >= n):
            _fail(path, "/predict/parent names points outside the %d" % n)
    return r


def _read_bcp(f, path, attrs):
    order = _count(f, path, "order")
    rank = _count(f, path, "rank")
    dims = _dataset(f, path, "dims", order)
    r = Bcp(path, "bcp", attrs)
    r.factors = [_dataset(f, path, "factors/A%d" % (k + 1), shape=(int(dims[k]), rank)) for k in range(order)]
    r.sigmas = [_dataset(f, path, "factors/Sigma%d" % (k + 1), shape=(rank, rank))
                for k in range(order) if "factors/Sigma%d" % (k + 1) in f]
    # The file's /lambda are the ARD precisions of the components, not
    # TensorLy's weights: the model is sum_r A1[:, r] o ... o AN[:, r].
    r.ard_precisions = _dataset(f, path, "lambda", rank)
    r.weights = np.ones(rank)
    if "trace" in f:
        r.trace = {k: _dataset(f, path, "trace/" + k) for k in f["trace"]}
    if "starts" in f:
        r.starts = {k: _dataset(f, path, "starts/" + k) for k in f["starts"]}
    if "completed" in f:
        r.completed = _dataset(f, path, "completed", shape=tuple(int(d) for d in dims))
    if "predictions" in f:
        if "predictions/indices" not in f or len(f["predictions/indices"].shape) != 2:
            _fail(path, "/predictions/indices missing or not K x %d" % order)
        k = f["predictions/indices"].shape[0]
        idx = _dataset(f, path, "predictions/indices", shape=(k, order))
        if k and ((idx < 0).any() or (idx >= dims[None, :]).any()):
            _fail(path, "/predictions/indices name entries outside the tensor's dims")
        r.predictions = {"indices": idx, "values": _dataset(f, path, "predictions/values", k)}
    return r


_READERS = {"lattice": _read_lattice, "spearman": _read_spearman, "dpc": _read_dpc, "bcp": _read_bcp,
            "rules": _read_rules}


def _result_file(path, workload):
    if not os.path.isdir(path):
        return path
    names = [workload] if workload else WORKLOADS
    found = [os.path.join(path, w + ".h5") for w in names if os.path.isfile(os.path.join(path, w + ".h5"))]
    if len(found) != 1:
        _fail(path, "holds %s; name the file or pass workload=" % (
            "no result (%s)" % ", ".join(w + ".h5" for w in names) if not found else "several results"))
    return found[0]


def read(path, workload=None):
    """The result in PATH (a directory holding one W.h5, or the file) as a
    Lattice, Spearman, Dpc, Bcp or Rules.  workload= picks one of several in
    a directory ("rules" its rules.h5), and refuses a file of another
    workload."""
    path = _result_file(os.fspath(path), workload)
    if not os.path.isfile(path):
        _fail(path, "no such file")
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        _fail(path, "not a readable HDF5 file: %s" % e)
    with f:
        w = _check_header(f, path, workload)
        attrs = {k: _attr(v) for k, v in f.attrs.items()}
        return _READERS[w](f, path, attrs)
