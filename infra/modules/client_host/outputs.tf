output "host" {
  description = "The client VM: instance_id, public_ip, private_ip, public_dns, instance_type, ami_id, availability_zone, security_group_id, ssh_user."
  value = {
    instance_id       = aws_instance.this.id
    public_ip         = aws_instance.this.public_ip
    private_ip        = aws_instance.this.private_ip
    public_dns        = aws_instance.this.public_dns
    instance_type     = aws_instance.this.instance_type
    ami_id            = aws_instance.this.ami
    availability_zone = aws_instance.this.availability_zone
    security_group_id = aws_security_group.this.id
    ssh_user          = var.ssh_user
  }
}

output "security_group_id" {
  description = "Security group of the client (the database host admits its members on the database ports)."
  value       = aws_security_group.this.id
}
