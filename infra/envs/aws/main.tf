# tsbench on AWS: one database host (+ optional client host, + optional results bucket) per run.
# Everything is tagged tsbench:run = var.name (provider default_tags), so leftovers can be found.

locals {
  endpoint = var.aws_endpoint_url != "" ? var.aws_endpoint_url : null

  tags = merge(var.tags, {
    "tsbench:run"        = var.name
    "tsbench:database"   = var.database
    "tsbench:managed-by" = "terraform"
  })

  server_install_script = (var.server_install_script != "" ? var.server_install_script
  : "${path.module}/../../../plugins/tsbench/targets/${var.database}/cloud_install.sh")

  # Placement: an explicit subnet, else the default VPC's default subnet in one zone.
  subnet_id    = var.subnet_id != "" ? var.subnet_id : null
  pick_zone    = var.subnet_id == "" && var.availability_zone == ""
  wanted_types = distinct(concat([var.instance_type], var.client_host ? [var.client_instance_type] : []))
  offering     = local.pick_zone ? data.aws_ec2_instance_type_offerings.wanted[0] : null
  zones_offering_all = local.pick_zone ? sort(tolist(setintersection([
    for type in local.wanted_types : toset([
      for i, zone in local.offering.locations : zone if local.offering.instance_types[i] == type
    ])
  ]...))) : []
  availability_zone = (var.subnet_id != "" ? null
    : var.availability_zone != "" ? var.availability_zone
  : local.zones_offering_all[0])
}

provider "aws" {
  region = var.region

  skip_credentials_validation = var.skip_aws_validation
  skip_requesting_account_id  = var.skip_aws_validation
  skip_metadata_api_check     = var.skip_aws_validation
  s3_use_path_style           = var.skip_aws_validation

  endpoints {
    ec2 = local.endpoint
    s3  = local.endpoint
    sts = local.endpoint
    iam = local.endpoint
  }

  default_tags {
    tags = local.tags
  }
}

data "aws_ec2_instance_type_offerings" "wanted" {
  count         = local.pick_zone ? 1 : 0
  location_type = "availability-zone"

  filter {
    name   = "instance-type"
    values = local.wanted_types
  }

  lifecycle {
    postcondition {
      condition = length(setintersection([
        for type in local.wanted_types : toset([
          for i, zone in self.locations : zone if self.instance_types[i] == type
        ])
      ]...)) > 0
      error_message = "No availability zone of ${var.region} offers all of ${join(", ", local.wanted_types)}: set availability_zone/subnet_id or choose other instance types."
    }
  }
}

module "client_host" {
  source = "../../modules/client_host"
  count  = var.client_host ? 1 : 0

  name                 = var.name
  tags                 = local.tags
  subnet_id            = local.subnet_id
  availability_zone    = local.availability_zone
  instance_type        = var.client_instance_type
  ami_id               = var.ami_id
  associate_public_ip  = var.associate_public_ip
  root_volume_type     = var.root_volume_type
  root_volume_size_gb  = var.client_root_volume_size_gb
  encrypted            = var.volume_encryption
  orchestrator_cidr    = var.orchestrator_cidr
  key_name             = module.benchmark_host.key_name
  setup_script_content = var.client_setup_script != "" ? file(var.client_setup_script) : ""
}

module "benchmark_host" {
  source = "../../modules/benchmark_host"

  name                          = var.name
  tags                          = local.tags
  subnet_id                     = local.subnet_id
  availability_zone             = local.availability_zone
  instance_type                 = var.instance_type
  ami_id                        = var.ami_id
  associate_public_ip           = var.associate_public_ip
  root_volume_type              = var.root_volume_type
  root_volume_size_gb           = var.root_volume_size_gb
  data_volume_type              = var.data_volume_type
  data_volume_size_gb           = var.data_volume_size_gb
  data_volume_iops              = var.data_volume_iops
  data_volume_throughput        = var.data_volume_throughput
  data_volume_encrypted         = var.volume_encryption
  orchestrator_cidr             = var.orchestrator_cidr
  peer_security_group_ids       = var.client_host ? [module.client_host[0].security_group_id] : []
  db_ports                      = var.db_ports
  agent_port                    = var.agent_port
  ssh_public_key                = var.ssh_public_key
  node_agent_token              = var.node_agent_token
  db_password                   = var.db_password
  server_install_script_content = file(local.server_install_script)
}

module "results_bucket" {
  source = "../../modules/results_bucket"
  count  = var.results_bucket ? 1 : 0

  bucket_name                        = var.results_bucket_name
  tags                               = local.tags
  force_destroy                      = var.results_bucket_force_destroy
  noncurrent_version_expiration_days = var.results_noncurrent_version_expiration_days
}
