"""The covering relation by brute force, and the covers a lattice.h5 holds:
shared by lattice_edges.py and gpu_lattice_edges.py."""
import h5py


def brute_covers(intents):
    """Each intent's upper covers: the intents maximal among those strictly
    inside it (all pairs), as sorted concept ids."""
    sets = [frozenset(x) for x in intents]
    out = []
    for b in sets:
        below = [k for k, d in enumerate(sets) if d < b]
        out.append(sorted(k for k in below if not any(sets[k] < sets[m] for m in below)))
    return out


def read_covers(path):
    """(intents, covers, n_edges attribute, /edges virtual, partitioned) of a lattice.h5."""
    with h5py.File(path) as f:
        off, ids = f["intents/offsets"][:], f["intents/ids"][:]
        eoff, eids = f["edges/offsets"][:], f["edges/ids"][:]
        n_edges = f.attrs["n_edges"]
        virtual = f["edges/ids"].is_virtual and f["edges/offsets"].is_virtual
        parts = "parts" in f.attrs
    intents = [ids[off[i]:off[i + 1]].tolist() for i in range(len(off) - 1)]
    covers = [eids[eoff[i]:eoff[i + 1]].tolist() for i in range(len(eoff) - 1)]
    return intents, covers, n_edges, len(eids) == n_edges and eoff[0] == 0, virtual, parts
