"""Imported once, by the fork server that :mod:`server.job_process` starts children from (never by the app's pages).

A child forked from a process that already did everything a first training step does starts training at once:
the optimizer's first step imports ``torch._dynamo`` (about 6 s and 800 modules on this machine), and every
child would pay that again. So this module runs two steps of a tiny model, once, in the fork server.
"""

from server.job_process import warm_up_worker

warm_up_worker()
