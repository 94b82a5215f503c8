variable "name" {
  description = "Run/instance name: the Name tag of the instance (volumes and the security group get suffixes) and the prefix of the security group and key pair names."
  type        = string
  default     = "tsbench"

  validation {
    condition     = can(regex("^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$", var.name))
    error_message = "name: 1-63 characters, letters, digits, '.', '_' or '-', starting with a letter or digit."
  }
}

variable "tags" {
  description = "Extra tags for every resource of this module (merged under the provider's default_tags)."
  type        = map(string)
  default     = {}
}

variable "subnet_id" {
  description = "Subnet to launch in. null: the default subnet of the region's default VPC in var.availability_zone."
  type        = string
  default     = null
}

variable "availability_zone" {
  description = "Availability zone whose default subnet is used when subnet_id is null (e.g. \"us-east-1a\"); ignored when subnet_id is set."
  type        = string
  default     = null
}

variable "instance_type" {
  description = "EC2 instance type of the database server (e.g. m5.2xlarge: 8 vCPU, 32 GiB)."
  type        = string
  default     = "m5.2xlarge"
}

variable "ami_id" {
  description = "AMI to boot. null: the newest official Debian 12 amd64 AMI (owner 136693071363, name debian-12-amd64-*), looked up at plan time."
  type        = string
  default     = null
}

variable "associate_public_ip" {
  description = "Give the instance a public IPv4 address (the orchestrator reaches the database and the node agent over it)."
  type        = bool
  default     = true
}

variable "root_volume_type" {
  description = "EBS type of the root volume (OS, packages, logs)."
  type        = string
  default     = "gp3"
}

variable "root_volume_size_gb" {
  description = "Size of the root volume in GiB."
  type        = number
  default     = 20
}

variable "data_volume_type" {
  description = "EBS type of the data volume mounted at /data (gp3, gp2, io1, io2, st1, sc1)."
  type        = string
  default     = "gp3"

  validation {
    condition     = contains(["gp2", "gp3", "io1", "io2", "st1", "sc1", "standard"], var.data_volume_type)
    error_message = "data_volume_type must be one of gp2, gp3, io1, io2, st1, sc1, standard."
  }
}

variable "data_volume_size_gb" {
  description = "Size of the data volume in GiB."
  type        = number
  default     = 100
}

variable "data_volume_iops" {
  description = "Provisioned IOPS of the data volume; used only for gp3 (3000-16000; null = 3000) and io1/io2 (required)."
  type        = number
  default     = null
}

variable "data_volume_throughput" {
  description = "Provisioned throughput of the data volume in MiB/s; used only for gp3 (125-1000; null = 125)."
  type        = number
  default     = null
}

variable "data_volume_encrypted" {
  description = "Encrypt the data and root volumes with the account's default EBS key."
  type        = bool
  default     = true
}

variable "data_device_name" {
  description = "Device name the data volume is attached as. Nitro instances show it as an NVMe device instead; the boot script finds it by the volume id."
  type        = string
  default     = "/dev/sdf"
}

variable "orchestrator_cidr" {
  description = "CIDR blocks (IPv4 or IPv6) allowed to reach SSH (22), the database ports and the node agent port. Empty: no ingress at all."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for cidr in var.orchestrator_cidr : can(cidrhost(cidr, 0))])
    error_message = "orchestrator_cidr entries must be CIDR blocks such as 203.0.113.7/32."
  }
}

variable "peer_security_group_ids" {
  description = "Security groups (e.g. the client host's) whose members may reach the database ports and the node agent port."
  type        = list(string)
  default     = []
}

variable "db_ports" {
  description = "TCP ports the database server listens on (opened to orchestrator_cidr and peer_security_group_ids)."
  type        = list(number)
  default     = []
}

variable "agent_port" {
  description = "TCP port of the tsbench node agent (files/node_agent.py)."
  type        = number
  default     = 9700
}

variable "ssh_public_key" {
  description = "OpenSSH public key for the instance's default user (admin on Debian). Empty: no key pair is created and SSH login is impossible."
  type        = string
  default     = ""
}

variable "node_agent_token" {
  description = "Bearer token of the node agent (at least 16 characters; written to /etc/tsbench/agent.token, mode 0600). Empty: the agent is not started."
  type        = string
  default     = ""
  sensitive   = true

  validation {
    condition     = length(var.node_agent_token) == 0 || length(var.node_agent_token) >= 16
    error_message = "node_agent_token must be empty or at least 16 characters long."
  }
}

variable "server_install_script_content" {
  description = "Text of the database install script (bash, run as root once the data volume is mounted, with DATA_DIR=/data/db and DB_PASSWORD). Empty: no database is installed."
  type        = string
  default     = ""
}

variable "db_password" {
  description = "Database password handed to the install script as DB_PASSWORD (may be empty)."
  type        = string
  default     = ""
  sensitive   = true
}

variable "ssh_user" {
  description = "Login user of the AMI, reported in the outputs (admin on the official Debian AMIs)."
  type        = string
  default     = "admin"
}
