"""Translucent: see inside an English->Chinese Transformer while it translates.

streamlit run app.py
"""

import streamlit as st

from pages.ui.routing import routed

st.set_page_config(page_title="Translucent", page_icon="🔎", layout="wide")
navigation = st.navigation(
    [
        st.Page(
            "pages/translate.py", title="Translate", icon=":material/translate:", url_path="translate", default=True
        ),
        st.Page("pages/attention.py", title="Attention", icon=":material/grid_view:", url_path="attention"),
        st.Page("pages/heads.py", title="Heads", icon=":material/toggle_on:", url_path="heads"),
        st.Page("pages/explain.py", title="Explain", icon=":material/psychology_alt:", url_path="explain"),
        st.Page("pages/positional.py", title="Positions", icon=":material/timeline:", url_path="positions"),
        st.Page("pages/masks.py", title="Masks", icon=":material/filter_alt:", url_path="masks"),
        st.Page("pages/models.py", title="Models", icon=":material/model_training:", url_path="models"),
        st.Page("pages/compare.py", title="Compare", icon=":material/compare:", url_path="compare"),
    ]
)
with routed():
    navigation.run()
