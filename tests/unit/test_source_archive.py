"""Pinned source archives verify by content (``tsbench.runtimes.source_archive``): the vendored tarball
as it is and the same tree packed the way upstream's tag archives are (another top folder, another
compression) both verify; one changed byte, one extra file, a lost executable bit do not. Real
archives: the vendor folder's (``$TSBENCH_VENDOR``, default ``../shared/vendor``)."""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from tsbench.runtimes.source_archive import (
    ArchiveError,
    build_is_current,
    tree_sha256,
    vendor_folder,
    verified_archive,
)

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import tsbs_side  # noqa: E402  (bench/ is not a package)

from tsbench.targets.griddb.definition import DEFINITION as GRIDDB  # noqa: E402
from tsbench.targets.timescaledb.definition import DEFINITION as TIMESCALEDB  # noqa: E402

# Every pinned archive: (name, upstream URL, tree hash) as its owner declares it.
PINS = {
    "griddb": tuple(GRIDDB.install_env[f"GRIDDB_SOURCE_{k}"] for k in ("ARCHIVE", "URL", "TREE_SHA256")),
    "timescaledb-tsl": tuple(
        TIMESCALEDB.install_env[f"TIMESCALEDB_TSL_{k}"] for k in ("ARCHIVE", "URL", "TREE_SHA256")
    ),
    "tsbs": (tsbs_side.ARCHIVE_NAME, tsbs_side.ARCHIVE_URL, tsbs_side.ARCHIVE_TREE_SHA256),
}
Edit = Callable[[str, bytes], bytes | None]


def _vendored(name: str) -> Path:
    archive = vendor_folder() / name
    assert archive.is_file(), f"the vendored archive {archive} is missing"
    return archive


def _repack(source: Path, dest: Path, top: str, mode: str, edit: Edit | None = None) -> Path:
    """``source``'s entries under the top folder ``top`` in a tar of ``mode`` (``w`` plain, ``w:xz``…);
    ``edit(relative_path, data)`` may change a file's bytes (None: unchanged)."""
    fast = {"preset": 0} if mode == "w:xz" else {}  # xz's default level takes 10 s here
    with tarfile.open(source) as old, tarfile.open(dest, mode, format=tarfile.GNU_FORMAT, **fast) as new:
        for member in old:
            rest = member.name.split("/", 1)[1] if "/" in member.name else ""
            data = old.extractfile(member).read() if member.isfile() else None
            if edit and data is not None and (changed := edit(rest, data)) is not None:
                data = changed
            member.name = f"{top}/{rest}" if rest else top
            if data is not None:
                member.size = len(data)
            new.addfile(member, io.BytesIO(data) if data is not None else None)
    return dest


def _add_file(archive: Path, path: str, data: bytes) -> None:
    with tarfile.open(archive, "a") as tar:  # plain tar only
        info = tarfile.TarInfo(path)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))


@pytest.mark.parametrize("pin", sorted(PINS))
def test_the_vendored_archive_has_its_pinned_tree(pin: str) -> None:
    name, url, tree = PINS[pin]
    assert url.startswith("https://github.com/") and url.endswith(".tar.gz") and "/archive/" in url
    assert tree_sha256(_vendored(name)) == tree


@pytest.mark.parametrize(
    ("pin", "top", "mode"),
    [("griddb", "griddb-5.9.0", "w"), ("timescaledb-tsl", "timescaledb-2.19.3", "w:xz")],
)
def test_upstreams_form_of_the_same_tree_verifies(
    pin: str, top: str, mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tag archive's top folder and another compression than the vendored tar.gz: same tree hash,
    through the same path an install takes (downloaded from the URL when the vendor folder lacks it)."""
    name, _, tree = PINS[pin]
    vendored = _vendored(name)
    upstream = _repack(vendored, tmp_path / "upstream.tar", top, mode)
    assert upstream.read_bytes()[:6] != vendored.read_bytes()[:6]  # really another compression
    with tarfile.open(upstream) as tar:
        assert {m.name.split("/")[0] for m in tar} == {top}
    monkeypatch.setenv("TSBENCH_VENDOR", str(tmp_path / "no-vendor"))
    fetched = verified_archive(name, tree, upstream.as_uri(), tmp_path)
    assert fetched == tmp_path / name and tree_sha256(fetched) == tree


@pytest.mark.parametrize(
    ("case", "edit"),
    [
        (
            "one byte changed",
            lambda path, data: data[:-1] + bytes([data[-1] ^ 1]) if path == "Makefile" else None,
        ),
        ("a file emptied", lambda path, data: b"" if path == "go.mod" else None),
    ],
)
def test_a_changed_tree_does_not_verify(case: str, edit: Edit, tmp_path: Path) -> None:
    name, _, tree = PINS["tsbs"]
    changed = _repack(_vendored(name), tmp_path / "changed.tar.gz", "tsbs-37fced7", "w:gz", edit)
    assert tree_sha256(changed) != tree, case
    unchanged = _repack(_vendored(name), tmp_path / "same.tar.gz", "tsbs-37fced7", "w:gz")
    assert tree_sha256(unchanged) == tree  # the repacking itself changes nothing


def test_an_extra_file_or_a_lost_executable_bit_does_not_verify(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, _, tree = PINS["tsbs"]
    vendored = _vendored(name)
    with tarfile.open(vendored) as tar:
        script = next(m.name.split("/", 1)[1] for m in tar if m.isfile() and m.mode & 0o111)
    plain = tmp_path / "plain.tar"
    with tarfile.open(vendored) as old, tarfile.open(plain, "w") as new:
        for member in old:
            if member.name.endswith("/" + script):
                member.mode &= ~0o111
            new.addfile(member, old.extractfile(member) if member.isfile() else None)
    assert tree_sha256(plain) != tree
    extra = _repack(vendored, tmp_path / "extra.tar", "tsbs", "w")
    _add_file(extra, "tsbs/EXTRA", b"")
    assert tree_sha256(extra) != tree
    monkeypatch.setenv("TSBENCH_VENDOR", str(tmp_path / "no-vendor"))
    (tmp_path / "work").mkdir()
    with pytest.raises(ArchiveError, match="is not the pinned source"):
        verified_archive(name, tree, extra.as_uri(), tmp_path / "work")


def test_the_hash_is_over_the_extracted_tree(tmp_path: Path) -> None:
    """The documented definition, recomputed independently from the files tar put on disk."""
    name, _, tree = PINS["tsbs"]
    subprocess.run(["tar", "-xf", str(_vendored(name)), "-C", str(tmp_path)], check=True)
    (top,) = tmp_path.iterdir()
    records = []
    for path in sorted(p for p in top.rglob("*") if not p.is_dir() or p.is_symlink()):
        rel = path.relative_to(top).as_posix().encode()
        if path.is_symlink():
            records.append((rel, b"l", os.readlink(path).encode()))
        else:
            kind = b"x" if path.stat().st_mode & 0o111 else b"f"
            records.append((rel, kind, hashlib.sha256(path.read_bytes()).hexdigest().encode()))
    digest = hashlib.sha256(b"".join(k + b"\0" + r + b"\0" + p + b"\0" for r, k, p in sorted(records)))
    assert digest.hexdigest() == tree


def test_not_a_source_archive(tmp_path: Path) -> None:
    two_tops = tmp_path / "two.tar"
    with tarfile.open(two_tops, "w") as tar:
        for path in ("a/x", "b/y"):
            tar.addfile(tarfile.TarInfo(path), io.BytesIO(b""))
    with pytest.raises(ArchiveError, match="outside the top folder"):
        tree_sha256(two_tops)
    (garbage := tmp_path / "garbage.tar.gz").write_bytes(b"not a tar")
    with pytest.raises(ArchiveError, match="unreadable"):
        tree_sha256(garbage)


def test_no_vendor_folder_and_no_network_names_the_url(tmp_path: Path) -> None:
    """What an install prints on a machine without ../shared that cannot reach upstream (here: a
    refused connection), through lib.sh's verified_archive, as build.sh calls it."""
    name, _, tree = PINS["griddb"]
    url = "http://127.0.0.1:9/griddb/archive/refs/tags/v5.9.0.tar.gz"
    script = f'source scripts/lib.sh && verified_archive {name} {tree} "{url}" "{tmp_path}"'
    env = {**os.environ, "TSBENCH_VENDOR": str(tmp_path / "none"), "TSBENCH_OPT": str(tmp_path / "opt")}
    done = subprocess.run(["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode != 0 and done.stdout == ""
    assert f"cannot download {url}" in done.stderr and str(tmp_path / "none") in done.stderr


def test_a_cached_build_is_keyed_by_the_pin(tmp_path: Path) -> None:
    """A build record of another tree is not current; one from before tree pins (the archive's bytes'
    sha256 only) is adopted when the vendored archive has those bytes and the pinned tree."""
    name, _, tree = PINS["tsbs"]
    record = tmp_path / "BUILD"
    record.write_text(f"archive={name}\ntree_sha256={'0' * 64}\n")
    assert not build_is_current(record, name, tree)
    record.write_text(f"archive={name}\ntree_sha256={tree}\n")
    assert build_is_current(record, name, tree)
    sha256 = hashlib.sha256(_vendored(name).read_bytes()).hexdigest()
    record.write_text(f"archive={name}\nsha256={'1' * 64}\n")
    assert not build_is_current(record, name, tree)
    record.write_text(f"archive={name}\nsha256={sha256}\n")
    assert build_is_current(record, name, tree) and f"tree_sha256={tree}\n" in record.read_text()
    assert not build_is_current(record, name, "2" * 64)
