"""afdlib: the models of arXiv 2602.09721 (attention-FFN disaggregation vs expert parallelism).

One concept per module, pure functions over plain data, SI units inside:

* ``specs``: the vocabulary: Hardware, Model (with its Attention), Precision, Budget, Efficiency
* ``catalog``, ``hf_config``, ``files``: hardware and model catalogues, user files, HF configs
* ``budget``: the 3-batch-overlap stage budget and bubble conditions (Eqs. 1-5)
* ``roofline``: the one evaluator: work per tier -> time and binding bound (overlapped and serial)
* ``intensity``: tokens per FFN rank, arithmetic intensity, the four regimes (Eqs. 9-10, Fig. 2)
* ``hfu``: the HFU upper bound of the AFD FFN side and its dead zone (Fig. 4, Appendix A)
* ``grouped_gemm``: grouped GEMMs of the routed experts (Fig. 3's roofline; decode work)
* ``attention``, ``dense``, ``alltoall``: the other operator families of a decode step
* ``decode``: the end-to-end decode step for EP and AFD; ``validation``: published deployments
* ``search``, ``advise``, ``sweetspot``: best deployments, the AFD-or-EP advice, design-space maps
* ``imbalance``: the imbalance penalty, with the corrected AFD constant (Figs. 5-6)
* ``routing``, ``balance``: expert popularity, balancedness from routing statistics, EPLB placement
* ``imbalance_cost``: measured imbalance through the penalty, per design
* ``pipeline``: the one scheduling core, and the batch-overlap pipeline simulated under jitter
* ``timeline``: scheduled timelines of one decode step (Fig. 5), on the pipeline's core
* ``aiconfigurator``: the side-by-side with NVIDIA aiconfigurator (its committed predictions)
* ``figures``, ``plotting``: the book's figures; ``book``: the papermill -> jupyter-book build
* ``cli``: the ``afd`` command
"""

__version__ = "0.1.0"
