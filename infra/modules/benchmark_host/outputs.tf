output "host" {
  description = "The database VM: instance_id, public_ip, private_ip, public_dns, instance_type, ami_id, availability_zone, security_group_id, key_name, ssh_user, data_mount, db_dir, agent_port and data_volume {id, type, size_gb, iops, throughput, device_name}."
  value = {
    instance_id       = aws_instance.this.id
    public_ip         = aws_instance.this.public_ip
    private_ip        = aws_instance.this.private_ip
    public_dns        = aws_instance.this.public_dns
    instance_type     = aws_instance.this.instance_type
    ami_id            = aws_instance.this.ami
    availability_zone = aws_instance.this.availability_zone
    security_group_id = aws_security_group.this.id
    key_name          = one(aws_key_pair.this[*].key_name)
    ssh_user          = var.ssh_user
    data_mount        = local.data_mount
    db_dir            = local.db_dir
    agent_port        = var.agent_port
    data_volume = {
      id          = aws_ebs_volume.data.id
      type        = aws_ebs_volume.data.type
      size_gb     = aws_ebs_volume.data.size
      iops        = aws_ebs_volume.data.iops
      throughput  = aws_ebs_volume.data.throughput
      device_name = aws_volume_attachment.data.device_name
    }
  }
}

output "agent_url" {
  description = "Base URL of the node agent (public IP when there is one, else the private IP)."
  value       = "http://${coalesce(aws_instance.this.public_ip, aws_instance.this.private_ip)}:${var.agent_port}"
}

output "key_name" {
  description = "Name of the EC2 key pair made from ssh_public_key (null when none)."
  value       = one(aws_key_pair.this[*].key_name)
}

output "security_group_id" {
  description = "Security group of the database host."
  value       = aws_security_group.this.id
}
