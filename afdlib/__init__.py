"""afdlib: the models of arXiv 2602.09721 (attention-FFN disaggregation vs expert parallelism).

Subpackages are layers, bottom to top; a module imports from its own layer or the ones below it
(``tests/test_layout.py`` holds the code to this), SI units inside:

* ``errors``: the one error type, ``AfdError`` (one clear line, exit 2 at the command)
* ``inputs``: the vocabulary (Hardware, Model, Precision, Budget, Efficiency), the catalogues,
  user files and Hugging Face configs
* ``routing``: expert popularity, balancedness from routing statistics, EPLB placement, measured
  expert loads and their Zipf fits, ``sweeps`` of balancedness over EP sizes and batches
* ``evaluator``: the one evaluator (``roofline``: work per tier -> time and binding bound) and one
  module per operator family (``attention``, ``dense``, ``grouped_gemm``, ``alltoall``)
* ``analysis``: the paper's own analysis: ``intensity`` (Eqs. 9-10, Fig. 2), ``budget`` (the 3BO
  budget, Eqs. 1-5), ``hfu`` (HFU bound and dead zone, Fig. 4), ``imbalance`` and
  ``imbalance_cost`` (the penalty, Figs. 5-6), ``schedule`` (the one scheduling core) and
  ``timeline`` (Fig. 5)
* ``decode``: whole deployments: ``step`` (the decode step of EP and AFD), ``search``, ``advise``,
  ``sweetspot`` and ``sweetspot_study`` (where AFD can win), ``validation`` against published deployments
* ``simulation``: the batch-overlap pipeline under jitter (``pipeline``) and its ``studies``
* ``peers``: the side-by-side with NVIDIA aiconfigurator
* ``report``: the book's figures and style, notebook parameters, the book build
* ``cli``: the ``afd`` command
"""

__version__ = "0.1.0"
