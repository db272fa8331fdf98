"""Translucent core: everything that computes (never Streamlit), in layers, each importing only
the layers below it (checked by import-linter, see .importlinter):

    text       tokenizers, vocabularies, data reading, splits and batches
    model      config, attention, layers, masks, Transformer, GRU, the architecture registry
    io         the one checkpoint loader/saver, the card schema, paths
    inference  greedy / beam decoding, the step trace
    training   the training loop, schedule, data-parallel, scoring
    explain    what the app explains: positional lab, mask lab, views, cards, comparisons
    figures    pure plotly builders (arrays and token lists in, figures out; import no other layer)

The modules directly in core/ are the command lines (`python -m core.train | translate | evaluate`)
and `core.checkpoint`, the documented home of `load_checkpoint`.
"""
