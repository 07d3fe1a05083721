"""The sweeps chapter's reading along an axis (issue 31): the crossings' trends where both ends have one,
else the ratio itself, never "cannot be read" twice in one sentence and "neither" where the ratio moves."""
import numpy as np
import xarray as xr

from afdlib.sweep.readings import crossing
from afdlib.sweep.study import NOT_READ, Surface


def _surface(ratio):
    w, s, bw = [2048.0, 8192.0], [4.0, 16.0], [50.0, 100.0, 200.0]
    ds = xr.Dataset({"afd_over_ep": (("expert_width", "sparsity", "scale_out_gb_per_s"), np.asarray(ratio, float))},
                    coords={"expert_width": w, "sparsity": s, "scale_out_gb_per_s": bw})
    spec = {"vary": {"expert_width": w, "sparsity": s, "scale_out_gb_per_s": bw}}
    c = crossing(ds.afd_over_ep, "scale_out_gb_per_s")
    shaped = type(c)(*(np.reshape(a, (2, 2)) for a in (c.overtake, c.retake, c.where, c.stretches)))
    return Surface(spec, ds, shaped, {})


def test_where_an_end_never_crosses_the_ratio_itself_is_read():
    # small experts: AFD never ahead (0.8, 0.85); large: ahead from 100 GB/s; medians over E/K and bandwidth:
    # M = 2048 -> 0.85, M = 8192 -> 1.1, a rise: the paper's condition (coarse experts favour AFD) borne out
    small = [[0.8, 0.85, 0.9], [0.8, 0.85, 0.9]]
    large = [[0.9, 1.1, 1.2], [0.9, 1.1, 1.2]]
    words = _surface([small, large]).axis_words(0)
    assert NOT_READ not in words and words.count("cannot be compared") == 1
    assert "rises from 0.85 to 1.10, bearing out the paper's condition that coarse experts favour AFD" in words
    # along sparsity both ends are alike: the ratio does not move (medians 0.90 and 0.90)
    assert "does not move" in _surface([small, large]).axis_words(1) and "neither for nor against" in \
        _surface([small, large]).axis_words(1)


def test_where_both_ends_cross_the_crossings_are_read():
    # AFD overtakes at 200 GB/s at small M and at 100 GB/s at large M: the overtaking bandwidth falls
    small = [[0.8, 0.9, 1.1], [0.8, 0.9, 1.1]]
    large = [[0.9, 1.1, 1.2], [0.9, 1.1, 1.2]]
    words = _surface([small, large]).axis_words(0)
    assert words.startswith("the overtaking bandwidth falls from M = 2048 to M = 8192")
    # EP never leads again (no retake at either end): said, and the paper's condition read from the overtake
    assert "AFD keeping its lead to the top of the range" in words and "bearing out the paper's condition" in words
