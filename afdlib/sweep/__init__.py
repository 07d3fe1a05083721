"""Design-space sweeps: a grid of hardware, model, deployment and setting values evaluated in chunks
(on Dask) through the decode model's vectorised functions, into a labelled xarray Dataset.

* :mod:`afdlib.sweep.spec`: the spec file (model, hardware, design, fixed values, axes) read and checked;
* :mod:`afdlib.sweep.evaluate`: one chunk of grid points through the library's functions;
* :mod:`afdlib.sweep.grid`: the grid's chunks, the Dask graph, the Dataset and where it is written.
"""
