"""What a run's end notification says (no Airflow here): ``summary`` reads the run folder into a
``RunSummary`` (outcome, failures with their phase and reason, key figures, detected changes, the
report), ``message`` renders it into a ``Notice`` (subject, plain text, HTML, chat text, the PDF to
attach), ``redact`` keeps secrets out of both. ``tsbench.airflow.notify`` sends it through Airflow's
SMTP and Slack notifiers."""
