"""Routing: expert popularity, balancedness from routing statistics and measured loads, EPLB placement."""
