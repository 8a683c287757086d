"""Training runs and claim outcomes: their keys, caches, the training pool and the plan."""
