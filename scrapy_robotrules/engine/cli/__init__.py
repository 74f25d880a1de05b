"""The ``robotrules`` command line (SPEC 7 where it explains decisions).

:mod:`.main` is the entry point (``check``, ``compare``, ``lint``),
:mod:`.operator_commands` the operator's (``audit``, ``archive``,
``compare --builtin``), :mod:`.page_commands` is ``robotrules page``;
:mod:`.input_files` reads the files they are given (``-`` for stdin).
"""
