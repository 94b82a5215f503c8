# --- where and what -----------------------------------------------------------------------------

variable "region" {
  description = "AWS region of every resource."
  type        = string
  default     = "us-east-1"
}

variable "name" {
  description = "Run/instance name: the Name tag of the database host and the value of the tsbench:run tag on every resource (find leftovers by it)."
  type        = string
  default     = "tsbench-manual"

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9-]{0,47}$", var.name))
    error_message = "name: 1-48 characters: lowercase letters, digits and '-', starting with a letter or digit."
  }
}

variable "tags" {
  description = "Extra tags on every resource (added to tsbench:run, tsbench:database and tsbench:managed-by)."
  type        = map(string)
  default     = {}
}

variable "database" {
  description = "tsbench target whose install script the host runs (plugins/tsbench/targets/<database>/); also the tsbench:database tag."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9_]+$", var.database))
    error_message = "database: a target folder name (lowercase letters, digits, '_')."
  }
}

variable "server_install_script" {
  description = "Path of the database install script (the AWS runtime renders it from the target's definition.py and cloud_install.sh). Empty: <repository>/plugins/tsbench/targets/<database>/cloud_install.sh as it is (relative to this root module)."
  type        = string
  default     = ""
}

variable "db_ports" {
  description = "TCP ports the database listens on, opened to orchestrator_cidr (and to the client host): the container ports of the target's default container (targets/<database>/container.py)."
  type        = list(number)
}

variable "db_password" {
  description = "Database password given to the install script as DB_PASSWORD (empty: the server's default/no password, see the target's cloud_install.sh)."
  type        = string
  default     = ""
  sensitive   = true
}

variable "node_agent_token" {
  description = "Bearer token of the node agent on the database host (at least 16 characters; empty: no agent)."
  type        = string
  default     = ""
  sensitive   = true

  validation {
    condition     = length(var.node_agent_token) == 0 || length(var.node_agent_token) >= 16
    error_message = "node_agent_token must be empty or at least 16 characters long."
  }
}

variable "agent_port" {
  description = "TCP port of the node agent."
  type        = number
  default     = 9700
}

variable "orchestrator_cidr" {
  description = "CIDR blocks allowed to reach the hosts (SSH, database ports, node agent), e.g. [\"203.0.113.7/32\"]. Empty: nothing can reach them. A block wider than an IPv4 /16 or an IPv6 /48 needs allow_wide_ingress."
  type        = list(string)
  default     = []

  validation {
    condition = var.allow_wide_ingress != "" || alltrue([
      for cidr in var.orchestrator_cidr : tonumber(split("/", cidr)[1]) >= (strcontains(cidr, ":") ? 48 : 16)
    ])
    error_message = "orchestrator_cidr has a block wider than an IPv4 /16 or an IPv6 /48 (0.0.0.0/0 is the whole internet): name the orchestrator's address block, or state why in allow_wide_ingress."
  }
}

variable "allow_wide_ingress" {
  description = "Why the hosts may be open to a block wider than an IPv4 /16 or an IPv6 /48 (empty: they may not)."
  type        = string
  default     = ""
}

variable "ssh_public_key" {
  description = "OpenSSH public key for the hosts' login user. Empty: no key pair (no SSH login)."
  type        = string
  default     = ""
}

# --- network --------------------------------------------------------------------------------------

variable "subnet_id" {
  description = "Subnet for the hosts. Empty: the default VPC's default subnet in availability_zone."
  type        = string
  default     = ""
}

variable "availability_zone" {
  description = "Availability zone (with subnet_id empty). Empty: the first zone, in name order, that offers every requested instance type."
  type        = string
  default     = ""
}

variable "associate_public_ip" {
  description = "Give the hosts public IPv4 addresses (billed per hour, see README)."
  type        = bool
  default     = true
}

# --- database host --------------------------------------------------------------------------------

variable "instance_type" {
  description = "Instance type of the database host."
  type        = string
  default     = "m5.2xlarge"
}

variable "ami_id" {
  description = "AMI of the hosts. null: the newest official Debian 12 amd64 AMI."
  type        = string
  default     = null
}

variable "root_volume_type" {
  description = "EBS type of the hosts' root volumes."
  type        = string
  default     = "gp3"
}

variable "root_volume_size_gb" {
  description = "Root volume size of the database host in GiB."
  type        = number
  default     = 20
}

variable "data_volume_type" {
  description = "EBS type of the database host's data volume (/data)."
  type        = string
  default     = "gp3"
}

variable "data_volume_size_gb" {
  description = "Data volume size in GiB."
  type        = number
  default     = 100
}

variable "data_volume_iops" {
  description = "Provisioned IOPS of the data volume (gp3: null = 3000; io1/io2: required; ignored for other types)."
  type        = number
  default     = null
}

variable "data_volume_throughput" {
  description = "Provisioned throughput of a gp3 data volume in MiB/s (null = 125; ignored for other types)."
  type        = number
  default     = null
}

variable "volume_encryption" {
  description = "Encrypt the EBS volumes with the account's default key."
  type        = bool
  default     = true
}

# --- optional client host -------------------------------------------------------------------------

variable "client_host" {
  description = "Also create a separate benchmark client VM in the same subnet."
  type        = bool
  default     = false
}

variable "client_instance_type" {
  description = "Instance type of the client host."
  type        = string
  default     = "m5.2xlarge"
}

variable "client_root_volume_size_gb" {
  description = "Root volume size of the client host in GiB."
  type        = number
  default     = 50
}

variable "client_setup_script" {
  description = "Path of a bash script the client runs as root at first boot. Empty: none."
  type        = string
  default     = ""
}

# --- optional results bucket ----------------------------------------------------------------------

variable "results_bucket" {
  description = "Also create a private, versioned, encrypted S3 bucket for results and reports."
  type        = bool
  default     = false
}

variable "results_bucket_name" {
  description = "Exact name of the results bucket. Empty: generated (prefix tsbench-results-)."
  type        = string
  default     = ""
}

variable "results_bucket_force_destroy" {
  description = "Let destroy delete the results bucket together with its objects."
  type        = bool
  default     = false
}

variable "results_noncurrent_version_expiration_days" {
  description = "Expire noncurrent object versions of the results bucket after this many days (0: never)."
  type        = number
  default     = 0
}

# --- test and escape hatches ----------------------------------------------------------------------

variable "aws_endpoint_url" {
  description = "One endpoint URL for EC2, S3, STS and IAM (e.g. a local moto server in tests). Empty: AWS's own endpoints."
  type        = string
  default     = ""
}

variable "skip_aws_validation" {
  description = "Skip credential/account/metadata checks and use path-style S3 URLs (for AWS-compatible test endpoints)."
  type        = bool
  default     = false
}
