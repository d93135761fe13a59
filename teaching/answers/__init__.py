"""Answer functions: a lesson step's ``answer = "name"`` computes its key from the step's model (see ``core``).

Importing ``teaching.lessons`` registers all of them (``core`` holds the registry and the shared helpers; ``block``
and ``attention`` add lessons 1 to 3's, ``real``, ``training``, ``interventions`` and ``variants`` lessons 4 to 7's)."""
