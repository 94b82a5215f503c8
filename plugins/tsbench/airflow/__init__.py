"""Airflow glue: the only subpackage of tsbench that imports Airflow. DAG files in ``dags/`` call
``build_comparison_dag``; every task body is a call into the core library."""
