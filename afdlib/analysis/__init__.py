"""The paper's own analysis: intensity, the 3BO budget, the HFU bound and dead zone, the imbalance penalty, the one schedule and its timelines."""
