"""A run: its parameters planned into points (``comparison``, ``sweep``, ``axes``), the run folder
that is its only record (``folder``), each point's data and reference answers (``point_setup``),
each branch's phases (``phases``, ``target_phases``, ``group``) executed once for the DAG and the
command line alike (``branch``), the machine lease around them (``lease``), and the pipeline's steps
in order (``pipeline``; ``local`` walks them in one process)."""
