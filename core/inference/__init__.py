"""The inference layer: preparing a source, greedy and beam decoding, the step-by-step trace."""
