"""A book table is a MyST pipe table of the Styler's displayed values (afdlib.report.style.table_markdown)."""
import numpy as np
import pandas as pd
import pytest

from afdlib.errors import AfdError
from afdlib.report.style import table_markdown


def test_the_styler_s_formats_hidden_index_and_na_rep_apply():
    frame = pd.DataFrame({"model": ["A|B", "C"], "HFU": [0.3312, np.nan], "N_F": [8, 16]})
    text = table_markdown(frame.style.hide(axis="index").format({"HFU": "{:.1%}"}, na_rep="infeasible"))
    # written out by hand: '|' in a cell escaped, numeric columns right-aligned, 0.3312 as 33.1%
    assert text.splitlines() == ["| model | HFU | N_F |", "| --- | ---: | ---: |",
                                 r"| A\|B | 33.1% | 8 |", "| C | infeasible | 16 |"]


def test_a_table_with_an_index_or_two_header_rows_is_refused():
    frame = pd.DataFrame({"a": [1.0]}, index=["x"])
    with pytest.raises(AfdError, match="no index"):
        table_markdown(frame.style)
    with pytest.raises(AfdError, match="one header row"):
        table_markdown(pd.DataFrame([[1, 2]], columns=pd.MultiIndex.from_tuples([("a", "b"), ("a", "c")])).style.hide(
            axis="index"))


def test_plain_numbers_have_no_needless_decimals():
    import numpy as np
    import pandas as pd

    from afdlib.report.style import table_markdown
    from afdlib.report.tables import cell
    t = pd.DataFrame({"device": ["x", "y"], "TFLOP/s": [4500.0, 2614.9], "TB/s": [np.nan, 3.35], "GPUs": [8, 72]})
    lines = table_markdown(t.style.hide(axis="index").format(cell)).splitlines()
    assert lines[2:] == ["| x | 4500 | - | 8 |", "| y | 2614.9 | 3.35 | 72 |"]
