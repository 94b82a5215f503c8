# One database server VM: an EC2 instance, a separate EBS data volume mounted at /data, a security
# group open only to the orchestrator, an optional key pair, and a first-boot cloud-init that mounts
# the volume, starts the tsbench node agent and runs the database's install script.

locals {
  data_mount = "/data"
  db_dir     = "/data/db"

  # Provisioned IOPS / throughput exist only for some volume types; AWS rejects them elsewhere.
  data_volume_iops       = contains(["gp3", "io1", "io2"], var.data_volume_type) ? var.data_volume_iops : null
  data_volume_throughput = var.data_volume_type == "gp3" ? var.data_volume_throughput : null

  ami_id = var.ami_id != null ? var.ami_id : data.aws_ami.debian[0].id

  ipv4_cidrs = [for cidr in var.orchestrator_cidr : cidr if !strcontains(cidr, ":")]
  ipv6_cidrs = [for cidr in var.orchestrator_cidr : cidr if strcontains(cidr, ":")]
  open_ports = distinct(concat([22, var.agent_port], var.db_ports))
  peer_ports = distinct(concat([var.agent_port], var.db_ports))
}

data "aws_subnet" "selected" {
  id                = var.subnet_id
  availability_zone = var.subnet_id == null ? var.availability_zone : null
  default_for_az    = var.subnet_id == null ? true : null
}

data "aws_ami" "debian" {
  count       = var.ami_id == null ? 1 : 0
  owners      = ["136693071363"] # Debian's official AWS account
  most_recent = true

  filter {
    name   = "name"
    values = ["debian-12-amd64-*"]
  }

  filter {
    name   = "architecture"
    values = ["x86_64"]
  }

  filter {
    name   = "virtualization-type"
    values = ["hvm"]
  }
}

resource "aws_security_group" "this" {
  name_prefix = "${var.name}-db-"
  description = "tsbench database host ${var.name}: SSH, database and node agent ports from the orchestrator only"
  vpc_id      = data.aws_subnet.selected.vpc_id
  tags        = merge(var.tags, { Name = "${var.name}-db" })

  dynamic "ingress" {
    for_each = length(var.orchestrator_cidr) > 0 ? local.open_ports : []
    content {
      description      = "from the orchestrator"
      from_port        = ingress.value
      to_port          = ingress.value
      protocol         = "tcp"
      cidr_blocks      = local.ipv4_cidrs
      ipv6_cidr_blocks = local.ipv6_cidrs
    }
  }

  dynamic "ingress" {
    for_each = length(var.peer_security_group_ids) > 0 ? local.peer_ports : []
    content {
      description     = "from peer hosts (benchmark client)"
      from_port       = ingress.value
      to_port         = ingress.value
      protocol        = "tcp"
      security_groups = var.peer_security_group_ids
    }
  }

  egress {
    description      = "all outbound (package repositories, release downloads)"
    from_port        = 0
    to_port          = 0
    protocol         = "-1"
    cidr_blocks      = ["0.0.0.0/0"]
    ipv6_cidr_blocks = ["::/0"]
  }

  lifecycle {
    create_before_destroy = true
  }
}

resource "aws_key_pair" "this" {
  count           = var.ssh_public_key != "" ? 1 : 0
  key_name_prefix = "${var.name}-"
  public_key      = var.ssh_public_key
  tags            = merge(var.tags, { Name = var.name })
}

resource "aws_ebs_volume" "data" {
  availability_zone = data.aws_subnet.selected.availability_zone
  type              = var.data_volume_type
  size              = var.data_volume_size_gb
  iops              = local.data_volume_iops
  throughput        = local.data_volume_throughput
  encrypted         = var.data_volume_encrypted
  final_snapshot    = false
  tags              = merge(var.tags, { Name = "${var.name}-data" })

  lifecycle {
    precondition {
      condition     = !contains(["io1", "io2"], var.data_volume_type) || var.data_volume_iops != null
      error_message = "data_volume_iops is required for io1/io2 data volumes."
    }
  }
}

resource "aws_instance" "this" {
  ami                                  = local.ami_id
  instance_type                        = var.instance_type
  subnet_id                            = data.aws_subnet.selected.id
  vpc_security_group_ids               = [aws_security_group.this.id]
  key_name                             = one(aws_key_pair.this[*].key_name)
  associate_public_ip_address          = var.associate_public_ip
  instance_initiated_shutdown_behavior = "stop"
  user_data_base64                     = base64gzip(local.cloud_init)
  user_data_replace_on_change          = true
  tags                                 = merge(var.tags, { Name = var.name })

  metadata_options {
    http_endpoint = "enabled"
    http_tokens   = "required" # IMDSv2 only
  }

  root_block_device {
    volume_type           = var.root_volume_type
    volume_size           = var.root_volume_size_gb
    encrypted             = var.data_volume_encrypted
    delete_on_termination = true
    tags                  = merge(var.tags, { Name = "${var.name}-root" })
  }
}

resource "aws_volume_attachment" "data" {
  device_name = var.data_device_name
  volume_id   = aws_ebs_volume.data.id
  instance_id = aws_instance.this.id
  # Never detach a mounted /data: destroy only forgets the attachment, terminates the instance (which
  # releases the volume) and then deletes the volume. Saves a stop + detach on every teardown.
  skip_destroy = true
}

locals {
  # Written by cloud-init before files/bootstrap.sh runs; the boot script reads only these files.
  host_env = join("\n", [
    "TSBENCH_NAME=${var.name}",
    "TSBENCH_DATA_VOLUME_ID=${aws_ebs_volume.data.id}",
    "TSBENCH_DATA_DEVICE=${var.data_device_name}",
    "TSBENCH_DATA_MOUNT=${local.data_mount}",
    "TSBENCH_DB_DIR=${local.db_dir}",
    "TSBENCH_AGENT_PORT=${var.agent_port}",
    "",
  ])

  cloud_init = templatefile("${path.module}/templates/cloud-init.yaml.tftpl", {
    host_env       = local.host_env
    agent_token    = var.node_agent_token
    db_password    = var.db_password
    node_agent     = file("${path.module}/files/node_agent.py")
    bootstrap      = file("${path.module}/files/bootstrap.sh")
    install_script = var.server_install_script_content
  })
}
