variable "name" {
  description = "Run/instance name; the client's Name tag is \"<name>-client\"."
  type        = string
  default     = "tsbench"

  validation {
    condition     = can(regex("^[A-Za-z0-9][A-Za-z0-9._-]{0,55}$", var.name))
    error_message = "name: 1-56 characters, letters, digits, '.', '_' or '-', starting with a letter or digit."
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
  description = "Availability zone whose default subnet is used when subnet_id is null; ignored when subnet_id is set."
  type        = string
  default     = null
}

variable "instance_type" {
  description = "EC2 instance type of the benchmark client (load generator and query workers)."
  type        = string
  default     = "m5.2xlarge"
}

variable "ami_id" {
  description = "AMI to boot. null: the newest official Debian 12 amd64 AMI (owner 136693071363)."
  type        = string
  default     = null
}

variable "associate_public_ip" {
  description = "Give the client a public IPv4 address."
  type        = bool
  default     = true
}

variable "root_volume_type" {
  description = "EBS type of the client's root volume (it also holds generated datasets)."
  type        = string
  default     = "gp3"
}

variable "root_volume_size_gb" {
  description = "Size of the client's root volume in GiB."
  type        = number
  default     = 50
}

variable "encrypted" {
  description = "Encrypt the root volume with the account's default EBS key."
  type        = bool
  default     = true
}

variable "orchestrator_cidr" {
  description = "CIDR blocks (IPv4 or IPv6) allowed to reach SSH (22) and var.extra_ports. Empty: no ingress."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for cidr in var.orchestrator_cidr : can(cidrhost(cidr, 0))])
    error_message = "orchestrator_cidr entries must be CIDR blocks such as 203.0.113.7/32."
  }
}

variable "extra_ports" {
  description = "More TCP ports opened to orchestrator_cidr (e.g. an agent on the client)."
  type        = list(number)
  default     = []
}

variable "key_name" {
  description = "Existing EC2 key pair for SSH (the benchmark host module's key_name output). Empty: none."
  type        = string
  default     = ""
}

variable "setup_script_content" {
  description = "Optional bash script run as root at first boot after python3 is installed (e.g. install tsbench). Empty: none."
  type        = string
  default     = ""
}

variable "ssh_user" {
  description = "Login user of the AMI, reported in the outputs (admin on the official Debian AMIs)."
  type        = string
  default     = "admin"
}
