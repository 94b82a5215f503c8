# The production study's paper size (studies/production.yaml): study A's machine shape, an m5.2xlarge
# (8 vCPU, 32 GiB RAM) with a 1 TiB gp3 volume at 5,000 IOPS and 200 MiB/s — 10,000 hosts × 1 day
# (86.4 M rows) needs no more; database and benchmark client on the same VM.
#
#   terraform apply -var-file=examples/production.tfvars \
#     -var='orchestrator_cidr=["<your public IP>/32"]' -var="ssh_public_key=$(cat ~/.ssh/id_ed25519.pub)"
#   (secrets from the environment: TF_VAR_node_agent_token, TF_VAR_db_password)

name     = "production-questdb"
database = "questdb"
db_ports = [9000, 8812] # QuestDB: HTTP (REST + ILP) and PostgreSQL wire

instance_type          = "m5.2xlarge"
data_volume_type       = "gp3"
data_volume_size_gb    = 1024
data_volume_iops       = 5000
data_volume_throughput = 200

client_host = false # the study ran the client on the database VM
