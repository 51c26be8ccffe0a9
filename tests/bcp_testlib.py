"""Shared by the bcp tests: how far apart two sets of CP factors are."""
import numpy as np
from scipy.optimize import linear_sum_assignment


def factor_diff(A, B):
    """The largest difference between the factors A and B (lists of I_n x R
    arrays) relative to A's largest entry, components matched by the
    product of their cosines over the modes, signs aligned; inf when the
    ranks differ."""
    if A[0].shape[1] != B[0].shape[1]:
        return np.inf
    C = np.ones((A[0].shape[1], B[0].shape[1]))
    for a, b in zip(A, B):
        C *= np.abs((a / np.linalg.norm(a, axis=0)).T @ (b / np.linalg.norm(b, axis=0)))
    r, c = linear_sum_assignment(-C)
    worst = 0.0
    for a, b in zip(A, B):
        bb = b[:, c] * np.sign(np.sum(a[:, r] * b[:, c], axis=0))
        worst = max(worst, np.abs(a[:, r] - bb).max() / np.abs(a).max())
    return worst
