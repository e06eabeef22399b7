#!/usr/bin/python3
"""Golden data for the linalg_* operators (tests/ops/la), from numpy.

References follow MXNet 1.9's documented definitions (la_op): matrices are
the last two axes, leading axes a batch; triangular inputs use only the
named triangle. Output format: see tests/ops/vision/make_golden.py.

Usage: make_golden.py OUT_FILE
"""
import sys

import numpy as np

RNG = np.random.RandomState(17)
CASES = []


def case(name, op, params, inputs, outputs):
    CASES.append((name, op, params, inputs, outputs))


def fmt_arr(tag, a):
    a = np.asarray(a, dtype=np.float64)
    dims = " ".join(str(d) for d in a.shape)
    vals = " ".join(repr(float(v)) for v in a.ravel())
    return "%s %d %s : %s" % (tag, a.ndim, dims, vals)


def write(path):
    with open(path, "w") as f:
        for name, op, params, inputs, outputs in CASES:
            f.write("case %s %s\n" % (name, op))
            for k, v in params.items():
                f.write("param %s %s\n" % (k, v))
            for a in inputs:
                f.write(fmt_arr("in", a) + "\n")
            for a in outputs:
                f.write(fmt_arr("out", a) + "\n")
            f.write("end\n")


def b(v):
    return "true" if v else "false"


def T(x):
    return np.swapaxes(x, -1, -2)


def spd(batch, n):
    m = RNG.uniform(-1, 1, batch + (n, n))
    return m @ T(m) + n * np.eye(n)


def tri_matrix(batch, n):
    """Well-conditioned, with garbage in both triangles' far sides."""
    a = RNG.uniform(-1, 1, batch + (n, n))
    return a + 3 * np.eye(n)


def tri(a, lower):
    return np.tril(a) if lower else np.triu(a)


def gemm_cases():
    for ta in (False, True):
        for tb in (False, True):
            a = RNG.uniform(-1, 1, (2, 3, 4) if not ta else (2, 4, 3))
            bb = RNG.uniform(-1, 1, (2, 4, 5) if not tb else (2, 5, 4))
            c = RNG.uniform(-1, 1, (2, 3, 5))
            opa = T(a) if ta else a
            opb = T(bb) if tb else bb
            p = {"transpose_a": b(ta), "transpose_b": b(tb), "alpha": 1.5}
            case("gemm2_%d%d" % (ta, tb), "linalg_gemm2", p, [a, bb],
                 [1.5 * opa @ opb])
            p2 = dict(p, beta=-0.7)
            case("gemm_%d%d" % (ta, tb), "linalg_gemm", p2, [a, bb, c],
                 [1.5 * opa @ opb - 0.7 * c])
    a = RNG.uniform(-1, 1, (4, 6))
    bb = RNG.uniform(-1, 1, (6, 2))
    case("gemm2_2d", "_linalg_gemm2", {}, [a, bb], [a @ bb])


def tri_cases():
    for lower in (True, False):
        for tr in (False, True):
            for right in (False, True):
                a = tri_matrix((2,), 3)
                bb = RNG.uniform(-1, 1, (2, 4, 3) if right else (2, 3, 4))
                t = tri(a, lower)
                opt = T(t) if tr else t
                p = {"lower": b(lower), "transpose": b(tr),
                     "rightside": b(right), "alpha": 0.8}
                tag = "%d%d%d" % (lower, tr, right)
                mm = bb @ opt if right else opt @ bb
                case("trmm_" + tag, "linalg_trmm", p, [a, bb], [0.8 * mm])
                if right:
                    x = T(np.linalg.solve(T(opt), T(0.8 * bb)))
                else:
                    x = np.linalg.solve(opt, 0.8 * bb)
                case("trsm_" + tag, "linalg_trsm", p, [a, bb], [x])


def chol_cases():
    a = spd((2,), 4)
    l = np.linalg.cholesky(a)
    case("potrf_lower", "linalg_potrf", {}, [a], [l])
    case("potrf_upper", "linalg_potrf", {"lower": "false"}, [a], [T(l)])
    # Only the named triangle is read.
    junk = a + np.triu(RNG.uniform(-5, 5, a.shape), 1)
    case("potrf_lower_junk", "linalg_potrf", {}, [junk], [l])
    inv = np.linalg.inv(a)
    case("potri_lower", "linalg_potri", {},
         [l + np.triu(np.ones_like(l), 1)], [inv])
    case("potri_upper", "_linalg_potri", {"lower": "false"}, [T(l)], [inv])


def misc_cases():
    a = RNG.uniform(-1, 1, (2, 3, 4))
    case("syrk", "linalg_syrk", {"alpha": 2.0}, [a], [2.0 * a @ T(a)])
    case("syrk_t", "linalg_syrk", {"transpose": "true"}, [a], [T(a) @ a])
    s = spd((3,), 3)
    case("sumlogdiag", "linalg_sumlogdiag", {}, [s],
         [np.log(np.diagonal(s, axis1=-2, axis2=-1)).sum(-1)])
    case("sumlogdiag_2d", "linalg_sumlogdiag", {}, [s[0]],
         [[np.log(np.diag(s[0])).sum()]])
    m = RNG.uniform(-1, 1, (2, 4, 4))
    for off in (0, 1, -2):
        case("extractdiag_%d" % off, "linalg_extractdiag", {"offset": off},
             [m], [np.diagonal(m, offset=off, axis1=-2, axis2=-1)])
    v = RNG.uniform(-1, 1, (2, 3))
    for off in (0, 2, -1):
        want = np.stack([np.diag(x, off) for x in v])
        case("makediag_%d" % off, "linalg_makediag", {"offset": off}, [v],
             [want])
    g = RNG.uniform(-1, 1, (2, 3, 3)) + 2 * np.eye(3)
    case("inverse", "linalg_inverse", {}, [g], [np.linalg.inv(g)])
    case("det", "linalg_det", {}, [g], [np.linalg.det(g)])
    case("det_2d", "linalg_det", {}, [g[0]], [[np.linalg.det(g[0])]])
    neg = g.copy()
    neg[1] = -neg[1]
    sign, logdet = np.linalg.slogdet(neg)
    case("slogdet", "linalg_slogdet", {}, [neg], [sign, logdet])


def main():
    gemm_cases()
    tri_cases()
    chol_cases()
    misc_cases()
    write(sys.argv[1])


if __name__ == "__main__":
    main()
