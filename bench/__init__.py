"""Benchmarks: `python -m bench` (see bench/__main__.py and the README's Benchmarks section)."""
