variable "bucket_name" {
  description = "Exact bucket name (globally unique). Empty: a unique name is generated from bucket_prefix."
  type        = string
  default     = ""
}

variable "bucket_prefix" {
  description = "Prefix of the generated bucket name when bucket_name is empty (at most 37 characters, lowercase)."
  type        = string
  default     = "tsbench-results-"

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9.-]{0,36}$", var.bucket_prefix))
    error_message = "bucket_prefix: 1-37 characters: lowercase letters, digits, '.' and '-'."
  }
}

variable "tags" {
  description = "Extra tags for the bucket (merged under the provider's default_tags)."
  type        = map(string)
  default     = {}
}

variable "force_destroy" {
  description = "Let terraform destroy delete the bucket with every object version in it. false: destroy fails while the bucket holds objects."
  type        = bool
  default     = false
}

variable "noncurrent_version_expiration_days" {
  description = "Delete noncurrent object versions this many days after they become noncurrent. 0: keep them forever (no lifecycle rule)."
  type        = number
  default     = 0

  validation {
    condition     = var.noncurrent_version_expiration_days >= 0 && floor(var.noncurrent_version_expiration_days) == var.noncurrent_version_expiration_days
    error_message = "noncurrent_version_expiration_days must be a whole number >= 0."
  }
}
