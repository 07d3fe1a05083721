"""The book's figures: one function per figure, taking computed data and returning a Figure.

Kept out of the notebooks so that each chapter is parameters, a library call, a figure, glued
numbers and prose. Plotting only: every number drawn comes from the model modules. One module
per group of chapters; every figure is importable from here.
"""
from afdlib.report.figures.common import (  # noqa: F401
    PAGE_WIDTH_IN, PANELS_PER_ROW, STAGE_COLOURS, lanes_panel, place_labels,
)
from afdlib.report.figures.paper import (  # noqa: F401
    ceiling_figure, grouped_gemm_figure, hfu_frame, hfu_panels, intensity_figure, models_scatter,
    penalty_figure, penalty_table, timelines_figure,
)
from afdlib.report.figures.sigma import (  # noqa: F401
    measured_sigma_figure, uniform_sigma_figure,
)
from afdlib.report.figures.decode import (  # noqa: F401
    advice_heatmap, tornado_figure, batch_curves_figure, breakdown_figure, deepep_figure, kernel_curves_figure, ratio_bandwidth_figure,
    ratio_maps_figure, sensitivity_figure, validation_figure, conditions_figure,
)
from afdlib.report.figures.modern import hybrid_heatmap  # noqa: F401
from afdlib.report.figures.aiconfigurator import (  # noqa: F401
    aic_ratio_figure, aic_scatter_figure, aic_stage_figure,
)
from afdlib.report.figures.pipeline import (  # noqa: F401
    bubble_timelines_figure, jitter_deployment_figure, jitter_ideal_figure, overlap_timelines_figure,
)
from afdlib.report.figures.sweeps import break_even_figure  # noqa: F401,E402
