"""Helpers the page scripts share (this folder is not scanned for pages): routing, session state,
caches, the session's models, widgets, display, the page frame."""
