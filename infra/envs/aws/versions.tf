terraform {
  # 1.5: strcontains(); S3-native state locking (backend "s3" use_lockfile) needs 1.10 — see README.
  required_version = ">= 1.5.0"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 5.100"
    }
  }

  # No backend block on purpose: local state by default; remote state (S3 + locking) through a
  # backend override file, see backend.s3.tf.example and infra/README.md.
}
