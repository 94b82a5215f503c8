output "bucket" {
  description = "The bucket: name, arn and region."
  value = {
    name   = aws_s3_bucket.this.id
    arn    = aws_s3_bucket.this.arn
    region = aws_s3_bucket.this.region
  }
}
