"""Where a lease lives: one small JSON document with an atomic create, a compare-and-swap replace
and a conditional delete — on a local file system (``FileSlot``) or in an S3 bucket (``S3Slot``),
so that workers that share no disk (Celery, Kubernetes) still see one holder per benchmark host.

Every operation is all-or-nothing against the version the caller read: a takeover or a heartbeat
can never overwrite a change it did not see, and a release never deletes a lease someone else took
meanwhile. A version is an opaque string (the file's content digest; the object's ETag).

``slot_for(url, key)`` picks the backend from a store URL: ``s3://bucket/prefix`` → an object
``prefix/leases/<key>.json`` (conditional writes: ``If-None-Match: *`` / ``If-Match: <etag>``);
anything else is a local folder → ``<folder>/leases/<key>.lease``.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlparse

from tsbench.results.bucket import CONDITION_FAILED
from tsbench.results.files import write_bytes_atomic

Body = dict[str, Any]
# S3's answers to a condition that does not hold (412) or to a concurrent conditional write (409)


class Slot(Protocol):
    where: str  # for messages: the file or the object URL

    def read(self) -> tuple[Body | None, str | None]:
        """The document and its version, or ``(None, None)`` when there is none."""

    def create(self, body: Body) -> bool:
        """Write ``body`` only if no document exists; whether it did."""

    def replace(self, body: Body, version: str) -> bool:
        """Write ``body`` only if the document is still at ``version``; whether it did."""

    def delete(self, version: str) -> bool:
        """Remove the document only if it is still at ``version``; whether it did."""


def _encode(body: Body) -> bytes:
    return json.dumps(body, sort_keys=True).encode()


class FileSlot:
    """A lease file; each operation runs under an exclusive ``flock`` of a sidecar lock file, so a
    read-compare-write is atomic between processes of one machine (and threads of one process)."""

    def __init__(self, path: Path):
        self.path = path
        self.where = str(path)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path.with_name(self.path.name + ".lock"), os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing drops the lock

    def _read(self) -> tuple[Body | None, str | None]:
        try:
            data = self.path.read_bytes()
            return json.loads(data), hashlib.sha256(data).hexdigest()
        except (FileNotFoundError, json.JSONDecodeError):
            return None, None

    def read(self) -> tuple[Body | None, str | None]:
        with self._locked():
            return self._read()

    def create(self, body: Body) -> bool:
        with self._locked():
            if self._read()[0] is not None:
                return False
            write_bytes_atomic(self.path, _encode(body))
            return True

    def replace(self, body: Body, version: str) -> bool:
        with self._locked():
            if self._read()[1] != version:
                return False
            write_bytes_atomic(self.path, _encode(body))
            return True

    def delete(self, version: str) -> bool:
        with self._locked():
            if self._read()[1] != version:
                return False
            self.path.unlink(missing_ok=True)
            return True


class S3Slot:
    """A lease object in S3 (or MinIO), written with S3's conditional requests."""

    def __init__(self, client: Any, bucket: str, key: str):
        self.client, self.bucket, self.key = client, bucket, key
        self.where = f"s3://{bucket}/{key}"

    def read(self) -> tuple[Body | None, str | None]:
        from botocore.exceptions import ClientError

        try:
            answer = self.client.get_object(Bucket=self.bucket, Key=self.key)
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") in {"NoSuchKey", "404"}:
                return None, None
            raise
        return json.loads(answer["Body"].read()), answer["ETag"]

    def _put(self, body: Body, **condition: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            self.client.put_object(Bucket=self.bucket, Key=self.key, Body=_encode(body), **condition)
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") in CONDITION_FAILED:
                return False
            raise
        return True

    def create(self, body: Body) -> bool:
        return self._put(body, IfNoneMatch="*")

    def replace(self, body: Body, version: str) -> bool:
        return self._put(body, IfMatch=version)

    def delete(self, version: str) -> bool:
        """Conditional delete (``If-Match``); an S3 without conditional deletes ignores the header,
        so the version is also checked just before (the window is one request long, and only a
        lease's own holder ever deletes it)."""
        from botocore.exceptions import ClientError

        if self.read()[1] != version:
            return False
        try:
            self.client.delete_object(Bucket=self.bucket, Key=self.key, IfMatch=version)
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") in CONDITION_FAILED:
                return False
            raise
        return True


def slot_for(store_url: str, key: str) -> Slot:
    """The slot of lease ``key`` (e.g. a host name) in the store at ``store_url``."""
    parsed = urlparse(store_url)
    if parsed.scheme == "s3":
        from tsbench.results.bucket import make_client

        prefix = parsed.path.strip("/")
        object_key = f"{prefix}/leases/{key}.json" if prefix else f"leases/{key}.json"
        return S3Slot(make_client(), parsed.netloc, object_key)
    folder = Path(parsed.path if parsed.scheme == "file" else store_url)
    return FileSlot(folder / "leases" / f"{key}.lease")
