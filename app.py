"""Translucent: see inside an English->Chinese Transformer while it translates.

streamlit run app.py
"""

import streamlit as st

from pages import common

st.set_page_config(page_title="Translucent", page_icon="🔎", layout="wide")
navigation = st.navigation(
    [
        st.Page(
            "pages/translate.py", title="Translate", icon=":material/translate:", url_path="translate", default=True
        ),
        st.Page("pages/attention.py", title="Attention", icon=":material/grid_view:", url_path="attention"),
    ]
)
with common.routed():
    navigation.run()
