"""The text layer: tokenizers, vocabularies, the text pipeline a checkpoint carries, data files,
splits and batches. Imports no other layer."""
