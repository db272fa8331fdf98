"""The io layer: the one checkpoint loader and saver, the card schema, where shipped files live."""
