"""What a view's settings are (``schema``: options, defaults, presets, sidebar values <-> ``ModelConfig``) and the one
function that builds a view from them (``build``). No Streamlit: the sidebar, the lessons and the lesson check share
it."""
