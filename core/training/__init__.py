"""The training layer: the loop, its schedule, data preparation, data-parallel workers, scoring."""
