# Study A (Fixstars 2023: GridDB vs QuestDB vs TimescaleDB, TSBS cpu-only).
# Their machine: one Azure D8s v3 (8 vCPU, 32 GiB RAM) with a 1 TB Premium SSD P30 (1 TiB, 5,000 IOPS,
# 200 MB/s); database and benchmark client on the same VM.
# Closest AWS shape: m5.2xlarge (8 vCPU, 32 GiB RAM, Intel Xeon) with a gp3 volume provisioned to the
# P30's figures: 5,000 IOPS and 200 MiB/s, but of 6 TiB, not 1: TimescaleDB stores 462 B/row here, ~4.9 TB
# at the study's 10,000 hosts × 4 months (studies/a_fixstars_2023.yaml, differences). Not identical:
# other CPU generation, and each cloud caps disk I/O per VM differently — report results as "AWS
# m5.2xlarge", not as the study's machine.
#
#   terraform apply -var-file=examples/study-a.tfvars \
#     -var='orchestrator_cidr=["<your public IP>/32"]' -var="ssh_public_key=$(cat ~/.ssh/id_ed25519.pub)"
#   (secrets from the environment: TF_VAR_node_agent_token, TF_VAR_db_password)

name     = "study-a-questdb"
database = "questdb"
db_ports = [9000, 8812] # QuestDB: HTTP (REST + ILP) and PostgreSQL wire

instance_type          = "m5.2xlarge"
data_volume_type       = "gp3"
data_volume_size_gb    = 6144
data_volume_iops       = 5000
data_volume_throughput = 200

client_host = false # the study ran the client on the database VM
