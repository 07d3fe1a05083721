"""When a verdict is decided (afdlib.decision.decision): beyond the threshold under the free search and
the validated-forms search alike, for the same design, and never on a search bound."""
from afdlib.decision.decision import decision
from afdlib.decision.uncertainty import Verdict
from afdlib.errors import AfdError

EP_SURE, EP_LEAN, AFD_SURE = Verdict(0.05, (0.7, 0.9), 0.8), Verdict(0.3, (0.7, 1.1), 0.9), Verdict(0.95, (1.1, 1.4), 1.2)


def test_decided_only_where_both_searches_decide_the_same_design():
    assert decision(EP_SURE, EP_SURE, [], False, False)[0] is True
    ok, why = decision(EP_SURE, Verdict(0.08, (0.7, 0.95), 0.8), [], False, False)
    assert ok and why.startswith("decided EP under both the free search (P(AFD better) = 0.05)") and "(0.08)" in why
    ok, why = decision(EP_SURE, AFD_SURE, [], False, False)
    assert not ok and "held to validated forms decides AFD (0.95)" in why
    ok, why = decision(EP_SURE, EP_LEAN, [], False, False)
    assert not ok and "held to validated forms does not (0.30)" in why
    ok, why = decision(EP_SURE, AfdError("no EP form searched here is validated"), [], False, False)
    assert not ok and "has no answer (no EP form searched here is validated)" in why


def test_never_decided_on_a_search_bound_nor_inside_the_threshold():
    ok, why = decision(EP_SURE, EP_SURE, ["AFD: N_A = 128 nodes (the search's hard cap)"], False, False)
    assert not ok and "sits on a search bound (AFD: N_A = 128 nodes" in why
    ok, why = decision(EP_LEAN, None, [], False, False)
    assert not ok and why == "undecided: P(AFD better) = 0.30 is inside 0.1 to 0.9"
    # held to validated forms already: one search
    assert decision(AFD_SURE, None, [], True, False) == (True, "decided AFD under the validated forms (P(AFD better) = 0.95)")
    # one design feasible: it is the answer
    assert decision(None, None, [], False, True)[0] is True and decision(None, None, [], False, False)[0] is False
