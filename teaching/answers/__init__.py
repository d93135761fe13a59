"""Answer functions: a lesson step's ``answer = "name"`` computes its key from the step's model (see ``core``).

Importing ``teaching.lessons`` registers all of them (``core`` holds the registry; ``real``, ``training``,
``interventions`` and ``variants`` add lessons 4 to 7's)."""
