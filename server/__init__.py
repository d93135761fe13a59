"""The server's resource management, below ``ui``: what a Streamlit server shares between its sessions.

The heavy-job line and the page views' line (:mod:`server.admission`), the per-action budget
(:mod:`server.budget`), background training jobs and their child processes (:mod:`server.jobs`,
:mod:`server.job_process`, :mod:`server.job_preload`) and their records on disk (:mod:`server.runs`), the
byte-bounded model/trace store (:mod:`server.bytecache`) and the once-per-process start-up
(:mod:`server.startup`). Plain Python on top of ``engine``: no page API, no
text (the page turns the values and codes returned here into words), no figures; ``tests/test_architecture.py``
holds it to that.
"""
