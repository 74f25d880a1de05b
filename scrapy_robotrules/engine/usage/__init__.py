"""Usage preferences: what a site says its content may be used for (outside the SPEC).

:mod:`.structured` parses structured-field dictionaries, :mod:`.vocabulary`
reads one statement, :mod:`.tdmrep` reads W3C TDMRep, and
:mod:`.preferences` combines them into the view of one URL.
"""
