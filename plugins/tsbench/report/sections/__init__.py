"""The report's sections, one module each: every ``*_section`` function takes the run's result
(and the target views of ``status.target_view``) and returns the plain dicts and lists the
template shows. ``tsbench.report.model`` assembles them into the document's context."""
