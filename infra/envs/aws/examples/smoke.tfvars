# Smoke test: the smallest useful run (a few cents an hour) to check that provisioning, the first-boot
# script, the node agent and a database install work end to end before a real study run.
# m5.large: 2 vCPU, 8 GiB RAM (not burstable, so no CPU credit effects); 20 GiB gp3 data volume.

name     = "smoke-postgres"
database = "postgres"
db_ports = [5432]

instance_type       = "m5.large"
root_volume_size_gb = 10
data_volume_type    = "gp3"
data_volume_size_gb = 20

client_host    = false
results_bucket = false
