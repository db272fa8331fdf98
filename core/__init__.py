"""Translucent core: the model, its data and everything that computes (no Streamlit here)."""
