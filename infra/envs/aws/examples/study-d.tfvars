# Study D (Fixstars 2018: GridDB vs InfluxDB, YCSB-TS) — the c4.2xlarge + io1 1,000 IOPS study.
# Their machine: AWS c4.2xlarge (8 vCPU, 15 GiB RAM, EBS-optimized) with a 1,000-IOPS io1 volume; the
# same shape is used here. The volume size is not stated: 200 GiB is our choice (room for 400 M records;
# io1 allows up to 50 IOPS per GiB, so 1,000 IOPS needs at least 20 GiB).
# c4 is a previous-generation Xen instance: the data volume shows up as /dev/xvdf (the boot script
# handles both this and NVMe names). Not every zone still offers c4: leave availability_zone empty and
# the first zone offering it is chosen.

name     = "study-d-influxdb"
database = "influxdb"
db_ports = [8086] # InfluxDB HTTP API

instance_type       = "c4.2xlarge"
data_volume_type    = "io1"
data_volume_size_gb = 200
data_volume_iops    = 1000

client_host = false
