output "benchmark_host" {
  description = "The database host: instance_id, public_ip, private_ip, public_dns, instance_type, ami_id, availability_zone, security_group_id, key_name, ssh_user, data_mount, db_dir, agent_port, data_volume {id, type, size_gb, iops, throughput, device_name}."
  value       = module.benchmark_host.host
}

output "agent_url" {
  description = "Base URL of the node agent on the database host (http://<ip>:<agent_port>)."
  value       = module.benchmark_host.agent_url
}

output "client_host" {
  description = "The client host (instance_id, public_ip, private_ip, public_dns, instance_type, ami_id, availability_zone, security_group_id, ssh_user), or null when client_host = false."
  value       = var.client_host ? module.client_host[0].host : null
}

output "results_bucket" {
  description = "The results bucket {name, arn, region}, or null when results_bucket = false."
  value       = var.results_bucket ? module.results_bucket[0].bucket : null
}

output "region" {
  description = "AWS region of the run."
  value       = var.region
}

output "name" {
  description = "Run name (the tsbench:run tag value of every resource)."
  value       = var.name
}
