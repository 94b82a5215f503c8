# Study B (QuestDB's TSBS article: cpu-only ingestion vs workers and cardinality).
# Their machine: one AWS m5.8xlarge (32 vCPU = 16 physical cores, 128 GiB RAM); database and TSBS
# client on the same instance. The article does not state the volume: 1 TiB gp3 at 10,000 IOPS and
# 500 MiB/s is our choice (high enough not to be the bottleneck at ~1 M rows/s) — say so in reports.

name     = "study-b-questdb"
database = "questdb"
db_ports = [9000, 8812]

instance_type          = "m5.8xlarge"
data_volume_type       = "gp3"
data_volume_size_gb    = 1024
data_volume_iops       = 10000
data_volume_throughput = 500

client_host = false
