"""An S3 bucket and key prefix for publication (boto3), with errors as ``PublishError``.

Credentials and endpoint come from the arguments or boto3's usual sources; they are never logged or
written anywhere. Every object put is at most ``SINGLE_PUT_LIMIT`` in one PUT, so its ETag is its MD5.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

log = logging.getLogger("tsbench.publish")

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".htm": "text/html; charset=utf-8",
    ".pdf": "application/pdf",
    ".json": "application/json",
    ".jsonl": "application/x-ndjson",
    ".svg": "image/svg+xml",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".png": "image/png",
    ".csv": "text/csv; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".log": "text/plain; charset=utf-8",
    ".conf": "text/plain; charset=utf-8",
    ".toml": "text/plain; charset=utf-8",
    ".yaml": "text/plain; charset=utf-8",
}
MUTABLE = "no-cache"
SINGLE_PUT_LIMIT = 4 << 30  # below S3's 5 GiB single-PUT limit: every object's ETag is its MD5
CREDENTIAL_ERRORS = {
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "InvalidToken",
    "ExpiredToken",
    "InvalidClientTokenId",
    "AuthorizationHeaderMalformed",
}


class PublishError(RuntimeError):
    """Publication failed; the message says why without revealing credentials."""


def content_type(name: str) -> str:
    return CONTENT_TYPES.get(Path(name).suffix.lower(), "application/octet-stream")


def make_client(
    endpoint_url: str | None = None,
    region: str | None = None,
    aws_access_key_id: str | None = None,
    aws_secret_access_key: str | None = None,
    aws_session_token: str | None = None,
) -> Any:
    """An S3 client. Unset arguments fall back to boto3's environment/profile chain; with a custom
    endpoint (argument or ``AWS_ENDPOINT_URL[_S3]``) path-style addressing is used (MinIO)."""
    import boto3
    from botocore.config import Config

    custom = endpoint_url or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    config = Config(
        signature_version="s3v4",
        retries={"max_attempts": 3, "mode": "standard"},
        s3={"addressing_style": "path"} if custom else {},
    )
    session = boto3.session.Session(
        botocore_session=_fresh_botocore_session(),
        aws_access_key_id=aws_access_key_id,
        aws_secret_access_key=aws_secret_access_key,
        aws_session_token=aws_session_token,
        region_name=region
        or os.environ.get("AWS_REGION")
        or os.environ.get("AWS_DEFAULT_REGION")
        or "us-east-1",
    )
    return session.client("s3", endpoint_url=endpoint_url, config=config)


@cache
def shared_model_loader() -> Any:
    """botocore's loader of its JSON data (the S3 API model, endpoints, partitions), shared by
    every client this process makes: it keeps what it read, so only the process's first client
    reads and parses those files (~0.3 s of a client's 0.14–0.5 s here). Read-only data, safe to
    share; a Celery worker loads it before it forks its tasks (``tsbench.airflow.preload``)."""
    from botocore.loaders import create_loader

    loader = create_loader()
    loader.load_service_model("s3", "service-2")
    loader.load_data("endpoints")
    loader.load_data("partitions")
    return loader


def _fresh_botocore_session() -> Any:
    """A new botocore session (its own credential chain, read now) on the shared loader."""
    import botocore.session

    session = botocore.session.Session()
    session.register_component("data_loader", shared_model_loader())
    return session


def md5_of(path: Path) -> str:
    """The MD5 of a file's bytes, hex (what S3 gives as the ETag of a single-PUT object)."""
    digest = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


CONDITION_FAILED = ("PreconditionFailed", "ConditionalRequestConflict", "412", "409")


class Bucket:
    """One bucket and key prefix, with errors translated into ``PublishError``."""

    def __init__(self, client: Any, bucket: str, prefix: str = ""):
        self.client = client
        self.bucket = bucket
        self.prefix = prefix.strip("/")

    def key(self, relative: str) -> str:
        return f"{self.prefix}/{relative}" if self.prefix else relative

    def relative(self, key: str) -> str:
        return key[len(self.prefix) + 1 :] if self.prefix else key

    @property
    def where(self) -> str:
        endpoint = getattr(getattr(self.client, "meta", None), "endpoint_url", "") or "AWS S3"
        return f"s3://{self.bucket}/{self.prefix} at {endpoint}"

    @contextmanager
    def errors(self, doing: str) -> Iterator[None]:
        from boto3.exceptions import S3UploadFailedError
        from botocore.exceptions import (
            BotoCoreError,
            ClientError,
            EndpointConnectionError,
            NoCredentialsError,
            PartialCredentialsError,
        )

        try:
            yield
        except (NoCredentialsError, PartialCredentialsError):
            raise PublishError(
                f"{doing}: no S3 credentials. Pass them as arguments or set AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY (or use an AWS profile or role)."
            ) from None
        except EndpointConnectionError:
            raise PublishError(f"{doing}: cannot reach the S3 endpoint for {self.where}") from None
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "")
            status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if code in CREDENTIAL_ERRORS:
                raise PublishError(
                    f"{doing}: S3 rejected the credentials ({code}) for {self.where}. Check "
                    "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (or the arguments); their values are "
                    "never logged."
                ) from None
            if code in ("AccessDenied", "403") or status == 403:
                raise PublishError(
                    f"{doing}: access denied to {self.where}: the credentials lack permission "
                    "(or were rejected)."
                ) from None
            if code == "NoSuchBucket":
                raise PublishError(
                    f"{doing}: bucket {self.bucket!r} does not exist (publish with create_bucket=True "
                    "to create it)"
                ) from None
            message = error.response.get("Error", {}).get("Message", "")
            raise PublishError(f"{doing}: S3 error {code or status} for {self.where}: {message}") from None
        except (BotoCoreError, S3UploadFailedError) as error:
            raise PublishError(f"{doing}: {type(error).__name__} for {self.where}: {error}") from None

    # -- operations ------------------------------------------------------------------------------
    def ensure(self, create: bool) -> None:
        """Check access to the bucket (listing one key); create it when missing and ``create``."""
        from botocore.exceptions import ClientError

        with self.errors("checking the bucket"):
            try:
                self.client.list_objects_v2(Bucket=self.bucket, MaxKeys=1)
                return
            except ClientError as error:
                if error.response.get("Error", {}).get("Code") != "NoSuchBucket" or not create:
                    raise
        with self.errors("creating the bucket"):
            region = self.client.meta.region_name
            if region and region != "us-east-1":
                self.client.create_bucket(
                    Bucket=self.bucket, CreateBucketConfiguration={"LocationConstraint": region}
                )
            else:
                self.client.create_bucket(Bucket=self.bucket)
            log.info("created bucket %s", self.bucket)

    def list(self, relative_prefix: str) -> dict[str, str]:
        """Key → ETag (without quotes) of every object under ``relative_prefix``."""
        found: dict[str, str] = {}
        with self.errors(f"listing {relative_prefix}"):
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=self.key(relative_prefix)
            )
            for page in pages:
                for item in page.get("Contents", []):
                    found[item["Key"]] = item["ETag"].strip('"')
        return found

    def upload(self, path: Path, key: str, cache_control: str | None = None) -> None:
        from boto3.s3.transfer import TransferConfig

        extra = {"ContentType": content_type(path.name)}
        if cache_control:
            extra["CacheControl"] = cache_control
        with self.errors(f"uploading {key}"):
            self.client.upload_file(
                str(path),
                self.bucket,
                key,
                ExtraArgs=extra,
                Config=TransferConfig(multipart_threshold=SINGLE_PUT_LIMIT),
            )

    def put(self, key: str, data: bytes, kind: str, existing: dict[str, str] | None = None) -> bool:
        """Write ``data`` unless the object already holds exactly it; returns whether it wrote."""
        if existing is not None and existing.get(key) == hashlib.md5(data, usedforsecurity=False).hexdigest():
            return False
        with self.errors(f"writing {key}"):
            self.client.put_object(
                Bucket=self.bucket, Key=key, Body=data, ContentType=kind, CacheControl=MUTABLE
            )
        return True

    def copy(self, source: str, key: str) -> None:
        with self.errors(f"copying {source} to {key}"):
            self.client.copy_object(
                Bucket=self.bucket,
                Key=key,
                CopySource={"Bucket": self.bucket, "Key": source},
                MetadataDirective="REPLACE",
                ContentType=content_type(key),
                CacheControl=MUTABLE,
            )

    def delete(self, keys: list[str]) -> None:
        for start in range(0, len(keys), 1000):
            chunk = keys[start : start + 1000]
            with self.errors("deleting stale objects"):
                self.client.delete_objects(
                    Bucket=self.bucket, Delete={"Objects": [{"Key": k} for k in chunk], "Quiet": True}
                )

    def get_json_tagged(self, relative: str) -> tuple[Any | None, str | None]:
        """A JSON object's content and ETag (the version to write over), ``(None, None)`` when the
        key does not exist."""
        from botocore.exceptions import ClientError

        with self.errors(f"reading {relative}"):
            try:
                answer = self.client.get_object(Bucket=self.bucket, Key=self.key(relative))
            except ClientError as error:
                if error.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                    return None, None
                raise
            return json.loads(answer["Body"].read()), answer["ETag"]

    def put_if(self, key: str, data: bytes, kind: str, version: str | None) -> bool:
        """Write ``data`` only if the object is still at ``version`` (an ETag; None: only if it does
        not exist). False when another writer changed it first (S3 conditional writes)."""
        from botocore.exceptions import ClientError

        condition = {"IfMatch": version} if version else {"IfNoneMatch": "*"}
        with self.errors(f"writing {key}"):
            try:
                self.client.put_object(
                    Bucket=self.bucket,
                    Key=key,
                    Body=data,
                    ContentType=kind,
                    CacheControl=MUTABLE,
                    **condition,
                )
            except ClientError as error:
                if error.response.get("Error", {}).get("Code") in CONDITION_FAILED:
                    return False
                raise
        return True

    def get_json(self, relative: str) -> Any | None:
        """A JSON object's content, or None when the key does not exist."""
        from botocore.exceptions import ClientError

        with self.errors(f"reading {relative}"):
            try:
                body = self.client.get_object(Bucket=self.bucket, Key=self.key(relative))["Body"].read()
            except ClientError as error:
                if error.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                    return None
                raise
        return json.loads(body)
