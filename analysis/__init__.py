"""analysis: model outputs (torch) -> tidy pandas DataFrames for the pages (the engine itself stays torch-only)."""
