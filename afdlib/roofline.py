"""The classic roofline extended with a communication ceiling.

Attainable rate = min(peak FLOP/s, I_mem * BW_mem, I_comm * BW_comm), where I_mem is FLOPs per
byte read from memory and I_comm FLOPs per byte received over the network. SI units.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

BOUNDS = ("compute", "memory", "communication")


def ridge_point(peak_flops: ArrayLike, bandwidth: ArrayLike) -> np.ndarray:
    """Intensity (FLOP/byte) where a bandwidth roof meets the compute roof."""
    return np.asarray(peak_flops, dtype=float) / np.asarray(bandwidth, dtype=float)


def _ceilings(peak_flops, intensity_mem, hbm_bandwidth, intensity_comm, comm_bandwidth):
    roofs = [np.broadcast_to(np.asarray(peak_flops, dtype=float), np.shape(intensity_mem)),
             np.asarray(intensity_mem, dtype=float) * np.asarray(hbm_bandwidth, dtype=float)]
    if intensity_comm is not None:
        roofs.append(np.asarray(intensity_comm, dtype=float) * np.asarray(comm_bandwidth, dtype=float))
    return np.broadcast_arrays(*roofs)


def attainable_flops(peak_flops: ArrayLike, intensity_mem: ArrayLike, hbm_bandwidth: ArrayLike,
                     intensity_comm: ArrayLike | None = None, comm_bandwidth: ArrayLike | None = None) -> np.ndarray:
    """FLOP/s under the compute, memory and (optional) communication roofs."""
    return np.minimum.reduce(_ceilings(peak_flops, intensity_mem, hbm_bandwidth, intensity_comm, comm_bandwidth))


def binding_bound(peak_flops: ArrayLike, intensity_mem: ArrayLike, hbm_bandwidth: ArrayLike,
                  intensity_comm: ArrayLike | None = None, comm_bandwidth: ArrayLike | None = None) -> np.ndarray:
    """Name of the roof that binds at each point (ties go to the first of :data:`BOUNDS`)."""
    roofs = np.stack(_ceilings(peak_flops, intensity_mem, hbm_bandwidth, intensity_comm, comm_bandwidth))
    return np.asarray(BOUNDS)[np.argmin(roofs, axis=0)]
