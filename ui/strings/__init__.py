"""i18n catalogs: one module per area, each with ``EN`` and ``ZH`` dicts (see ``ui.i18n``)."""
