"""The model layer: configuration, attention, layers, masks, the Transformer, the GRU, and the
architecture registry (everything that differs between architectures is in registry.py)."""
