"""Pinned upstream source archives, verified by their content: the one tool every archive install uses.

A pin is (archive name, upstream URL, tree hash). The archive comes from the vendor folder
(``$TSBENCH_VENDOR``, default ``../shared/vendor`` beside the project root) or, when that lacks it, is
downloaded from the URL (upstream's release archive). Either way it must have the pinned **tree hash**,
so the vendored copy and upstream's tag archive both verify although their bytes differ (another top
folder, another compression).

Tree hash (``tree_sha256``): sha256 over the archive's entries with the single top folder stripped,
sorted by their relative path (UTF-8 bytes), each as ``KIND NUL PATH NUL PAYLOAD NUL`` where KIND is
``f`` (regular file), ``x`` (regular file with any executable bit) or ``l`` (symlink), and PAYLOAD is
the hex sha256 of the file's bytes or the symlink's target. Directories are not hashed (git archives
hold no empty ones); owners, times and other mode bits are ignored. Any other entry kind, an absolute
or ``..`` path, a path twice, or more than one top folder: not a source archive (``ArchiveError``).

Standard library only: install scripts run it with the system ``python3`` before any venv exists
(``-P``: this folder has a ``select.py``, which must not shadow the standard library's)::

    python3 -P source_archive.py tree ARCHIVE                    # print the tree hash
    python3 -P source_archive.py verified NAME TREE URL WORKDIR  # print the verified archive's path
    python3 -P source_archive.py built BUILD_FILE NAME TREE      # exit 0 when BUILD_FILE is of this pin
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tarfile
import urllib.request
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[3]
TREE_KEY = "tree_sha256"  # the line a build's BUILD file records its source's tree hash in


class ArchiveError(RuntimeError):
    """The archive is missing, cannot be fetched, or is not the pinned source."""


def vendor_folder() -> Path:
    """``$TSBENCH_VENDOR``, default ``../shared/vendor`` beside the project root."""
    return Path(os.environ.get("TSBENCH_VENDOR") or ROOT.parent / "shared" / "vendor")


def _relative(name: str, top: list[str]) -> str | None:
    """``name`` without the archive's top folder (None for the top folder itself)."""
    parts = [p for p in PurePosixPath(name).parts if p != "."]
    if not parts or name.startswith("/") or ".." in parts:
        raise ArchiveError(f"not a source archive: entry {name!r}")
    if not top:
        top.append(parts[0])
    if parts[0] != top[0]:
        raise ArchiveError(f"not a source archive: {name!r} is outside the top folder {top[0]!r}")
    return "/".join(parts[1:]) or None


def _entry(tar: tarfile.TarFile, member: tarfile.TarInfo) -> tuple[bytes, bytes]:
    """(KIND, PAYLOAD) of a file or symlink member."""
    if member.issym():
        return b"l", member.linkname.encode()
    if not (member.isfile() or member.islnk()):
        raise ArchiveError(f"not a source archive: {member.name!r} is neither a file nor a symlink")
    source = tar.extractfile(member)
    assert source is not None  # a file or hard link has a body
    with source:
        digest = hashlib.file_digest(source, "sha256").hexdigest()
    return (b"x" if member.mode & 0o111 else b"f"), digest.encode()


def tree_sha256(archive: Path) -> str:
    """The tree hash of a tar archive (any compression tarfile reads), defined in the module docstring."""
    entries: dict[bytes, bytes] = {}
    top: list[str] = []
    try:
        with tarfile.open(archive, "r:*") as tar:
            for member in tar:
                path = _relative(member.name, top)
                if path is None or member.isdir():
                    continue
                key = path.encode()
                if key in entries:
                    raise ArchiveError(f"not a source archive: {path!r} twice")
                kind, payload = _entry(tar, member)
                entries[key] = kind + b"\0" + key + b"\0" + payload + b"\0"
    except (tarfile.TarError, OSError, EOFError) as error:
        raise ArchiveError(f"{archive}: unreadable archive ({error})") from error
    tree = hashlib.sha256()
    for key in sorted(entries):
        tree.update(entries[key])
    return tree.hexdigest()


def _download(url: str, dest: Path) -> None:
    """``url`` into ``dest`` (two attempts, 15 s to connect); ArchiveError naming the URL."""
    error: Exception | None = None
    for _ in range(2):
        try:
            with urllib.request.urlopen(url, timeout=15) as response, dest.open("wb") as out:
                shutil.copyfileobj(response, out, 1 << 20)
            return
        except (OSError, ValueError) as failed:
            error = failed
    raise ArchiveError(f"cannot download {url} ({error})")


def verified_archive(name: str, tree: str, url: str, workdir: Path) -> Path:
    """The archive ``name`` of the pinned ``tree``: the vendor folder's, else ``url`` downloaded into
    ``workdir``. ArchiveError when neither is at hand (naming the folder and the URL tried) or when
    the archive's tree hash is not ``tree``."""
    archive = vendor_folder() / name
    if not (archive.is_file() and archive.stat().st_size):
        if not url:
            raise ArchiveError(f"no {archive}, and no URL to fetch {name} from")
        archive = Path(workdir) / name
        print(f"source_archive: {vendor_folder()} has no {name}; downloading {url}", file=sys.stderr)
        try:
            _download(url, archive)
        except ArchiveError as error:
            raise ArchiveError(f"{error}; and {vendor_folder()} has no {name}") from None
    got = tree_sha256(archive)
    if got != tree:
        raise ArchiveError(f"{archive} is not the pinned source: tree hash {got}, pinned {tree}")
    return archive


def _fields(build_file: Path) -> dict[str, str]:
    lines = build_file.read_text().splitlines() if build_file.is_file() else []
    return dict(line.split("=", 1) for line in lines if "=" in line)


def build_is_current(build_file: Path, name: str, tree: str) -> bool:
    """True when ``build_file`` (a build's ``key=value`` record) was made from the pinned tree.

    A record from before tree pins carries only ``sha256=`` (the archive's bytes): it is adopted, and
    ``tree_sha256=`` appended, when the vendor folder's ``name`` has those bytes and the pinned tree.
    """
    fields = _fields(build_file)
    if TREE_KEY in fields:
        return fields[TREE_KEY] == tree
    archive = vendor_folder() / name
    if not fields.get("sha256") or not archive.is_file():
        return False
    with archive.open("rb") as f:
        if hashlib.file_digest(f, "sha256").hexdigest() != fields["sha256"]:
            return False
    if tree_sha256(archive) != tree:
        return False
    with build_file.open("a") as record:
        record.write(f"{TREE_KEY}={tree}\n")
    return True


def main(argv: list[str]) -> int:
    """The command line of the module docstring; errors on stderr, exit 1 (``built``: 1 = rebuild)."""
    try:
        match argv:
            case ["tree", archive]:
                print(tree_sha256(Path(archive)))
            case ["verified", name, tree, url, workdir]:
                print(verified_archive(name, tree, url, Path(workdir)))
            case ["built", build_file, name, tree]:
                return 0 if build_is_current(Path(build_file), name, tree) else 1
            case _:
                print(__doc__.split("::")[1].rstrip(), file=sys.stderr)
                return 2
    except ArchiveError as error:
        print(f"source_archive: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
