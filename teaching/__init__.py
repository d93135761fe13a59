"""The teaching wing, below ui and without Streamlit, plotly or figures.

- ``teaching.lessons``: the lesson files (``teaching/lessons/*.toml``), their loader, the answer key and its one
  grader (``Key.grade``), the question-quality rules and ``python -m teaching.lessons check``;
- ``teaching.answers``: the answer functions a step names (``answer = "..."``), computed on the step's model
  from analysis' numbers: ``core`` (the registry and the toy models' answers), ``real`` (SmolLM2), ``training``
  (the Training lab's run), ``interventions``, ``variants``;
- ``teaching.classroom``: the class store (SQLAlchemy: SQLite by default, PostgreSQL for several machines), its
  errors, and the class's answers as a table.

It knows nothing of sessions, pages or widgets: ``ui/teaching/`` is its Streamlit face (the lesson banner, the
class session and bars), and the settings a step applies are ``settings``' own.
"""
