# Optional benchmark client VM (load generator / query workers) in the same subnet as the database
# host, so that client and server can run on separate machines (study B's setup). No data volume.

locals {
  ami_id     = var.ami_id != null ? var.ami_id : data.aws_ami.debian[0].id
  ipv4_cidrs = [for cidr in var.orchestrator_cidr : cidr if !strcontains(cidr, ":")]
  ipv6_cidrs = [for cidr in var.orchestrator_cidr : cidr if strcontains(cidr, ":")]
  open_ports = distinct(concat([22], var.extra_ports))
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
  name_prefix = "${var.name}-client-"
  description = "tsbench client host ${var.name}: SSH from the orchestrator only"
  vpc_id      = data.aws_subnet.selected.vpc_id
  tags        = merge(var.tags, { Name = "${var.name}-client" })

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

  egress {
    description      = "all outbound (database host, package repositories)"
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

resource "aws_instance" "this" {
  ami                         = local.ami_id
  instance_type               = var.instance_type
  subnet_id                   = data.aws_subnet.selected.id
  vpc_security_group_ids      = [aws_security_group.this.id]
  key_name                    = var.key_name != "" ? var.key_name : null
  associate_public_ip_address = var.associate_public_ip
  user_data_base64 = base64gzip(templatefile("${path.module}/templates/cloud-init.yaml.tftpl", {
    setup_script = var.setup_script_content
  }))
  user_data_replace_on_change = true
  tags                        = merge(var.tags, { Name = "${var.name}-client" })

  metadata_options {
    http_endpoint = "enabled"
    http_tokens   = "required" # IMDSv2 only
  }

  root_block_device {
    volume_type           = var.root_volume_type
    volume_size           = var.root_volume_size_gb
    encrypted             = var.encrypted
    delete_on_termination = true
    tags                  = merge(var.tags, { Name = "${var.name}-client-root" })
  }
}
