"""fcbo_dist against `fcbo-dist info --text` (the C reader) and against
independent oracles (closures by brute force, scipy.stats.spearmanr, the
CP model's fit), single- and several-rank results, and damaged files.
Run with FCBO_DIST=path/to/fcbo-dist and a scratch dir in FD_PY_WORK."""
import os
import shutil
import subprocess
import unittest

import h5py
import numpy as np
import scipy.stats

import fcbo_dist

BIN = os.environ["FCBO_DIST"]
WORK = os.environ.get("FD_PY_WORK", "/tmp/fd_py_work")
ENV = dict(os.environ, FD_BACKEND="cpu", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")


def sh(*argv, mpirun=0):
    argv = [str(a) for a in argv]
    if mpirun:
        argv = ["mpirun", "-np", str(mpirun)] + argv
    return subprocess.run(argv, check=True, stdout=subprocess.PIPE, text=True, env=ENV).stdout


def info_text(path):
    return [l for l in sh(BIN, "info", "--text", path).splitlines() if not l.startswith("#")]


def w(*parts):
    return os.path.join(WORK, *parts)


def setUpModule():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    sh(BIN, "gen", "context", "--objects", 60, "--attributes", 14, "--density", 0.3, "--seed", 7, "-o", w("c.cxt"))
    sh(BIN, "lattice", w("c.cxt"), "--extents", "--edges", "-q", "-o", w("lat1"))
    sh(BIN, "lattice", w("c.cxt"), "--extents", "--edges", "-q", "-o", w("lat3"), mpirun=3)
    sh(BIN, "gen", "context", "--objects", 50, "--attributes", 30, "--density", 0.2, "--seed", 3, "-o", w("c.dat"))
    sh(BIN, "lattice", w("c.dat"), "-q", "-o", w("latd"))
    sh(BIN, "gen", "counts", "--rows", 40, "--cols", 12, "--groups", 4, "--seed", 5, "-o", w("m.txt"))
    sh(BIN, "spearman", w("m.txt"), "--pvalue", 0.01, "-q", "-o", w("sp1"))
    sh(BIN, "spearman", w("m.txt"), "--pvalue", 0.01, "-q", "-o", w("sp2"), mpirun=2)
    with open(w("m.txt")) as f, open(w("named.txt"), "w") as g:
        for k, line in enumerate(f):
            g.write("row%d %s" % (k, line))
    sh(BIN, "spearman", w("named.txt"), "--row-names", "--pvalue", 0.01, "-q", "-o", w("spn"))
    sh(BIN, "gen", "blobs", "--n", 300, "--dims", 2, "--clusters", 3, "--seed", 2, "-o", w("b.txt"))
    sh(BIN, "dpc", w("b.txt"), "--columns", "1,2", "--centers", 3, "-q", "-o", w("dp"))
    sh(BIN, "gen", "tensor", "--shape", "12x10x9", "--rank", 3, "--seed", 4, "-o", w("t.h5"))
    sh(BIN, "bcp", w("t.h5") + ":/tensor", "-q", "-o", w("bc"))
    with h5py.File(w("t.h5")) as f:
        y = f["tensor"][:]
    y[np.random.default_rng(1).random(y.shape) < 0.3] = np.nan
    np.save(w("gaps.npy"), y)
    np.savetxt(w("at.txt"), np.argwhere(np.isnan(y))[:50], fmt="%d")
    sh(BIN, "bcp", w("gaps.npy"), "--missing", "--completed", "--predict-at", w("at.txt"), "-q", "-o", w("bcm"))


def read_cxt(path):
    with open(path) as f:
        lines = f.read().split("\n")
    g, m = int(lines[2]), int(lines[3])
    rows = [l for l in lines[4:] if l and set(l) <= set("Xx.")][:g]
    return np.array([[ch in "Xx" for ch in r] for r in rows], dtype=bool)


class LatticeTest(unittest.TestCase):
    def check(self, d):
        r = fcbo_dist.read(w(d))
        self.assertEqual(r.workload, "lattice")
        mine = sorted(" ".join(map(str, r.intent(c))) for c in range(r.intents.shape[0]))
        self.assertEqual(mine, sorted(info_text(w(d, "lattice.h5"))))
        self.assertEqual(r.intents.shape, (r.attrs["n_concepts"], r.attrs["n_attributes"]))
        return r

    def test_single_and_parts_agree_and_are_closed(self):
        one, three = self.check("lat1"), self.check("lat3")
        self.assertEqual(three.attrs["parts"], 3)
        ctx = read_cxt(w("c.cxt"))
        seen = set()
        for c in range(one.intents.shape[0]):
            intent = one.intents[c].toarray()[0].astype(bool)
            extent = one.extents[c].toarray()[0].astype(bool)
            # The extent is the objects having the intent, and the intent
            # the attributes all of them share: a closed pair (a concept).
            self.assertTrue(np.array_equal(extent, ctx[:, intent].all(axis=1)))
            self.assertTrue(np.array_equal(intent, ctx[extent].all(axis=0)))
            self.assertEqual(one.supports[c], extent.sum())
            seen.add(intent.tobytes())
        self.assertEqual(len(seen), one.intents.shape[0])
        self.assertEqual(sorted(map(tuple, three.intents.toarray().tolist())),
                         sorted(map(tuple, one.intents.toarray().tolist())))
        self.assertEqual(list(one.attribute_names), list(three.attribute_names))

    def test_edges_of_parts_match_one_rank(self):
        # The covering pairs as pairs of intents: the concepts' order
        # differs between runs; every upper cover's intent is inside.
        def pairs(r):
            keys = [tuple(sorted(r.intent(c))) for c in range(r.intents.shape[0])]
            return {(keys[c], keys[u]) for c in range(len(keys)) for u in r.edges[c].indices}
        one, three = pairs(self.check("lat1")), pairs(self.check("lat3"))
        self.assertEqual(one, three)
        self.assertGreater(len(one), 0)
        self.assertTrue(all(set(u) < set(c) for c, u in one))

    def test_fimi_ids_are_the_files_numbers(self):
        r = self.check("latd")
        self.assertTrue(set(r.attribute_ids) <= set(range(30)))


class RulesTest(unittest.TestCase):
    def test_rules_match_text_and_hold(self):
        sh(BIN, "rules", w("lat3"), "-q", "--min-confidence", 0.6)
        r = fcbo_dist.read(w("lat3"), "rules")
        self.assertEqual(r.workload, "rules")
        text = sh(BIN, "rules", w("lat3"), "--text", "-q", "--min-confidence", 0.6).splitlines()
        mine = []
        for k in range(r.implication_premises.shape[0]):
            mine.append("%s => %s\t%d" % (" ".join(map(str, r.ids(r.implication_premises[k]))),
                                          " ".join(map(str, r.ids(r.implication_conclusions[k]))),
                                          r.implication_support[k]))
        self.assertEqual(mine, [l for l in text if not l.startswith("#")][:len(mine)])
        ctx = read_cxt(w("c.cxt"))
        for k in range(r.implication_premises.shape[0]):
            p = r.implication_premises[k].toarray()[0].astype(bool)
            c = r.implication_conclusions[k].toarray()[0].astype(bool)
            having = ctx[:, p].all(axis=1)
            self.assertTrue(ctx[having][:, c].all())  # the implication holds
            self.assertEqual(r.implication_support[k], having.sum())
        lat = fcbo_dist.read(w("lat3"), "lattice")
        self.assertGreater(len(r.rules["confidence"]), 0)
        for k in range(len(r.rules["confidence"])):
            lo, up = int(r.rules["lower"][k]), int(r.rules["upper"][k])
            self.assertEqual(set(r.ids(r.rule_premises[k])), set(lat.intent(up)))
            self.assertEqual(set(r.ids(r.rule_premises[k])) | set(r.ids(r.rule_conclusions[k])), set(lat.intent(lo)))
            self.assertAlmostEqual(r.rules["confidence"][k], lat.supports[lo] / lat.supports[up], places=12)
            self.assertGreaterEqual(r.rules["confidence"][k], 0.6)
        # the lattice directory still reads as the lattice
        self.assertEqual(fcbo_dist.read(w("lat3")).workload, "lattice")


class SpearmanTest(unittest.TestCase):
    def test_pairs_match_info_and_scipy(self):
        x = np.loadtxt(w("m.txt"))
        for d in ("sp1", "sp2"):
            r = fcbo_dist.read(w(d))
            p = r.pairs
            i, j, rho, pv = (np.asarray(p[k]) for k in ("i", "j", "rho", "p"))
            text = sorted(info_text(w(d, "spearman.h5")))
            self.assertEqual(len(text), len(i))
            got = {(int(a), int(b)): (float(c), float(e)) for a, b, c, e in zip(i, j, rho, pv)}
            for line in text:
                a, b, c, e = line.split()
                self.assertAlmostEqual(got[(int(a), int(b))][0], float(c), places=6)
                self.assertEqual(got[(int(a), int(b))][1], float(e))
            # Every pair of rows: selected exactly when scipy's p <= 0.01.
            want = set()
            for a in range(len(x)):
                for b in range(a + 1, len(x)):
                    s = scipy.stats.spearmanr(x[a], x[b])
                    if np.isfinite(s.pvalue) and s.pvalue <= 0.01:
                        want.add((a, b))
                        if (a, b) in got:
                            self.assertAlmostEqual(got[(a, b)][0], s.statistic, places=5)
                            self.assertLess(abs(got[(a, b)][1] - s.pvalue), 1e-9 + 1e-6 * s.pvalue)
            self.assertEqual(set(got), want)
            self.assertEqual(r.histogram.sum(), r.attrs["pairs_tested"])


    def test_names(self):
        plain, named = fcbo_dist.read(w("sp1")), fcbo_dist.read(w("spn"))
        self.assertEqual(list(named.names), ["row%d" % k for k in range(40)])
        self.assertIsNone(plain.names)
        text = info_text(w("spn", "spearman.h5"))
        for line in text:
            nums, a, b = line.split("\t")
            i, j = (int(v) for v in nums.split()[:2])
            self.assertEqual((a, b), ("row%d" % i, "row%d" % j))
        try:
            import pandas  # noqa: F401
        except ImportError:
            return
        self.assertEqual(list(named.pairs["name_i"]), ["row%d" % i for i in named.pairs["i"]])


class DpcTest(unittest.TestCase):
    def test_matches_info(self):
        r = fcbo_dist.read(w("dp"))
        rows = [l.split() for l in info_text(w("dp", "dpc.h5"))]
        self.assertEqual(len(rows), len(r.labels))
        for k, (pt, lab, rho, delta, parent) in enumerate(rows):
            self.assertEqual((int(pt), int(lab), int(parent)), (k, int(r.labels[k]), int(r.parent[k])))
            self.assertEqual((float(rho), float(delta)), (float(r.rho[k]), float(r.delta[k])))
        self.assertEqual(len(r.centers), 3)
        self.assertTrue(np.array_equal(r.labels[r.centers], np.arange(1, 4)))


class BcpTest(unittest.TestCase):
    def test_tensorly_convention(self):
        r = fcbo_dist.read(w("bc"))
        for line in info_text(w("bc", "bcp.h5")):
            v = line.split()
            mode, row = int(v[0]), int(v[1])
            np.testing.assert_array_equal(r.factors[mode - 1][row], np.array(v[2:], dtype=float))
        with h5py.File(w("t.h5")) as f:
            y = f["tensor"][:]
        try:
            import tensorly
            model = tensorly.cp_to_tensor((r.weights, r.factors))
        except ImportError:
            model = np.einsum("r,ir,jr,kr->ijk", r.weights, *r.factors)
        fit = 1 - np.linalg.norm(y - model) / np.linalg.norm(y)
        self.assertAlmostEqual(fit, r.attrs["fit"], places=6)
        self.assertEqual(len(r.ard_precisions), r.attrs["rank"])
        self.assertIsNone(r.completed)

    def test_completed(self):
        # --missing --completed: the model's tensor over every entry, and
        # the fit over the observed ones
        r = fcbo_dist.read(w("bcm"))
        y = np.load(w("gaps.npy"))
        model = np.einsum("ir,jr,kr->ijk", *r.factors)
        np.testing.assert_allclose(r.completed, model, rtol=0, atol=1e-10 * np.abs(model).max())
        seen = ~np.isnan(y)
        self.assertEqual(r.attrs["missing_entries"], (~seen).sum())
        fit = 1 - np.linalg.norm((y - model)[seen]) / np.linalg.norm(y[seen])
        self.assertAlmostEqual(fit, r.attrs["fit"], places=6)
        # --predict-at: the listed entries, in the file's order, as
        # /completed holds them
        idx = np.loadtxt(w("at.txt"), dtype=np.int64)
        np.testing.assert_array_equal(r.predictions["indices"], idx)
        np.testing.assert_array_equal(r.predictions["values"], r.completed[tuple(idx.T)])


class DamagedTest(unittest.TestCase):
    def copy(self, src, dst):
        shutil.rmtree(w(dst), ignore_errors=True)
        shutil.copytree(w(src), w(dst))
        return w(dst)

    def refused(self, path, what):
        with self.assertRaises(fcbo_dist.FormatError) as e:
            fcbo_dist.read(path)
        self.assertIn(what, str(e.exception))

    def test_incomplete(self):
        d = self.copy("sp1", "bad_incomplete")
        with h5py.File(os.path.join(d, "spearman.h5"), "r+") as f:
            f.attrs["complete"] = np.uint64(0)
        self.refused(d, "incomplete")

    def test_missing_part(self):
        d = self.copy("lat3", "bad_part")
        part = sorted(n for n in os.listdir(d) if ".part-" in n)[1]
        os.remove(os.path.join(d, part))
        self.refused(d, "missing")

    def test_offsets_past_ids(self):
        d = self.copy("lat1", "bad_offsets")
        with h5py.File(os.path.join(d, "lattice.h5"), "r+") as f:
            off = f["intents/offsets"]
            off[1] = off[-1] + 5
        self.refused(d, "CSR")

    def test_predictions_outside(self):
        d = self.copy("bcm", "bad_predictions")
        with h5py.File(os.path.join(d, "bcp.h5"), "r+") as f:
            f["predictions/indices"][0, 0] = 12
        self.refused(d, "outside")

    def test_newer_version(self):
        d = self.copy("bc", "bad_version")
        with h5py.File(os.path.join(d, "bcp.h5"), "r+") as f:
            f.attrs["format_version"] = np.uint64(99)
        self.refused(d, "newer")

    def test_truncated(self):
        d = self.copy("dp", "bad_truncated")
        p = os.path.join(d, "dpc.h5")
        with open(p, "r+b") as f:
            f.truncate(os.path.getsize(p) // 2)
        self.refused(d, "dpc.h5")

    def test_not_a_result(self):
        self.refused(w("t.h5"), "not an fcbo-dist result")


class RunTest(unittest.TestCase):
    def test_run_returns_the_result(self):
        r = fcbo_dist.run("lattice", w("c.cxt"), output=w("run1"), quiet=True)
        self.assertEqual(sorted(info_text(w("run1", "lattice.h5"))), sorted(info_text(w("lat1", "lattice.h5"))))
        self.assertIsInstance(r, fcbo_dist.Lattice)

    def test_failure_carries_the_message(self):
        with self.assertRaises(fcbo_dist.RunError) as e:
            fcbo_dist.run("lattice", w("nope.cxt"), output=w("run2"))
        self.assertEqual(e.exception.returncode, 2)
        self.assertIn("nope.cxt", e.exception.stderr)


if __name__ == "__main__":
    unittest.main()
