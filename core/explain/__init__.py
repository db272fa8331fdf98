"""The explain layer: everything the app explains, computed without Streamlit (positional lab, mask
lab, attention views, model cards, comparisons)."""
