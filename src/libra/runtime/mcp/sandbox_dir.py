"""Sandbox directories as states: content manifests, fingerprints, a blob store and in-place restore.

Why this shape: an MCP server (or any external tool) keeps its state in files, so the files are the state. A
:class:`Manifest` maps each relative path to what is there (kind, executable bit, content hash); its fingerprint
is a hash of exactly that, so two directories with the same content are the same state whatever their mtimes,
inode numbers or the order files were written in. Every content seen is kept once in a content-addressed blob
store, so any state seen can be put back **in place**, at the same absolute path, by writing only what differs:
paths in tool arguments and outputs stay valid across states.

Metadata-only changes never change a fingerprint:

- mtimes, ctimes, owners and permission bits other than the executable bit are not part of an entry;
- a git index (a file named ``index`` that starts with git's ``DIRC`` magic) carries stat data (ctime, mtime,
  device, inode, uid, gid, size) per entry that git rewrites whenever it re-stats the work tree. Its identity
  is the list of its entries *without* the stat fields -- mode, object id, stage and path, i.e. what
  ``git ls-files -s`` prints -- parsed here for index versions 2, 3 and 4 (extensions such as the cached tree
  are derived from the entries and left out). The raw bytes are still stored, so a restore writes a valid
  index; two indexes that differ only in stat data count as one state, and the first one seen is restored.
- a git reflog (``.git/logs/...``) stamps each entry with the clock at the time of the call; its identity is
  the entries without those times (:func:`git_reflog_entries`).

Reading every file on every call would cost the sandbox's size per call, so hashes are cached per path by
(size, mtime_ns, ctime_ns, inode): a rewrite changes ctime, so a cached hash is only reused for a file that was
not touched.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: longest text shown for a file in ``state_changes`` (longer contents are cut, with their hash appended)
MAX_TEXT = 4000


@dataclass(frozen=True)
class Entry:
    """What one path holds: ``kind`` ("f" file, "d" directory, "l" symlink, "o" other), the executable bit,
    ``blob`` (content hash of the raw bytes or the link target) and ``ident`` (what the fingerprint uses:
    the blob, or the hash of a normalized form for files with metadata inside, see :func:`git_index_entries`)."""

    kind: str
    executable: bool = False
    blob: str = ""
    ident: str = ""


Manifest = dict[str, Entry]


def fingerprint(manifest: Manifest) -> str:
    """Content hash of a directory manifest (paths, kinds, executable bits, normalized content hashes)."""
    h = hashlib.sha256()
    for path in sorted(manifest):
        e = manifest[path]
        h.update(f"{path}\0{e.kind}\0{int(e.executable)}\0{e.ident}\n".encode())
    return h.hexdigest()


def git_index_entries(data: bytes) -> str | None:
    """The entries of a git index as ``git ls-files -s`` lines (mode, object id, stage, path), or None when the
    bytes are not an index this parser reads. Stat fields are dropped on purpose: they are metadata."""
    if len(data) < 12 or data[:4] != b"DIRC":
        return None
    version = int.from_bytes(data[4:8], "big")
    count = int.from_bytes(data[8:12], "big")
    if version not in (2, 3, 4):
        return None
    pos, lines, previous = 12, [], b""
    try:
        for _ in range(count):
            start = pos
            mode = int.from_bytes(data[pos + 24 : pos + 28], "big")
            oid = data[pos + 40 : pos + 60].hex()
            flags = int.from_bytes(data[pos + 60 : pos + 62], "big")
            pos += 62
            if version >= 3 and flags & 0x4000:
                pos += 2
            if version == 4:
                strip, shift = 0, 0
                while True:  # git's offset varint: 7 bits per byte, +1 per continuation
                    byte = data[pos]
                    pos += 1
                    strip = (strip << 7) | (byte & 0x7F)
                    if not byte & 0x80:
                        break
                    strip += 1
                    shift += 1
                end = data.index(b"\0", pos)
                path = previous[: len(previous) - strip] + data[pos:end]
                pos = end + 1
            else:
                end = data.index(b"\0", pos)
                path = data[pos:end]
                pos = start + ((end - start) // 8 + 1) * 8  # NUL padding to a multiple of 8
            previous = path
            lines.append(f"{mode:06o} {oid} {(flags >> 12) & 3}\t{path.decode('utf-8', 'replace')}")
    except (IndexError, ValueError):
        return None
    return "\n".join(lines) + ("\n" if lines else "")


_REFLOG_TIME = re.compile(r"^(\S+ \S+ .*?) \d+ [+-]\d{4}\t", re.MULTILINE)


def git_reflog_entries(data: bytes) -> str:
    """A git reflog without the time of each entry: old and new object ids, who, and the message.

    Why: a reflog line records *when* a ref moved by the machine's clock (git libraries such as GitPython write
    it with the real time even when commit dates are pinned), which is metadata like an mtime."""
    return _REFLOG_TIME.sub(r"\1\t", data.decode("utf-8", "replace"))


_GIT_OBJECT = re.compile(r"(^|/)\.git/objects/[0-9a-f]{2}/[0-9a-f]{38,62}$")


def git_object_text(data: bytes) -> bytes:
    """A loose git object as readable bytes: ``<type> <size>`` and, for commits, tags and blobs, the content.

    Why: the objects a commit writes are zlib streams; shown inflated, ``state_changes`` holds the commit's
    message, tree and parents instead of a hash of compressed bytes (display only: fingerprints use the raw
    content, which is a function of the inflated one)."""
    try:
        raw = zlib.decompress(data)
    except zlib.error:
        return data
    header, _, body = raw.partition(b"\0")
    if header.startswith(b"tree "):
        return header + b" (binary entries)"
    return header + b"\n" + body


def _normalized(rel: str, name: str, data: bytes) -> str | None:
    """The normalized text of a file whose raw bytes hold metadata, or None for plain files."""
    if name == "index" and data[:4] == b"DIRC":
        return git_index_entries(data)
    if ".git/logs/" in f"/{rel}":
        return git_reflog_entries(data)
    return None


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class SandboxDir:
    """One sandbox directory at a fixed absolute path, with a blob store to put any seen state back in place."""

    def __init__(self, path: str | Path, store: str | Path) -> None:
        self.path = Path(path).absolute()
        self.store = Path(store).absolute()
        (self.store / "blobs").mkdir(parents=True, exist_ok=True)
        self._stat_cache: dict[str, tuple[tuple[int, int, int, int], Entry]] = {}
        self._normal: dict[str, str] = {}  # ident -> normalized text, for diffs

    # -- blobs ------------------------------------------------------------------------------------------
    def _blob_path(self, key: str) -> Path:
        return self.store / "blobs" / key[:2] / key[2:]

    def _keep(self, key: str, data: bytes) -> None:
        target = self._blob_path(key)
        if target.exists():
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, target)

    def blob(self, key: str) -> bytes:
        return self._blob_path(key).read_bytes()

    # -- scanning ---------------------------------------------------------------------------------------
    def scan(self) -> Manifest:
        """The directory's manifest now (every new content is kept in the blob store as it is read)."""
        out: Manifest = {}
        if not self.path.is_dir():
            return out
        for root, dirs, files in os.walk(self.path, followlinks=False):
            rel_root = os.path.relpath(root, self.path)
            for name in sorted(dirs + files):
                full = os.path.join(root, name)
                rel = name if rel_root == "." else f"{rel_root}/{name}".replace(os.sep, "/")
                try:
                    st = os.lstat(full)
                except FileNotFoundError:
                    continue
                out[rel] = self._entry(full, rel, name, st)
        return out

    def _entry(self, full: str, rel: str, name: str, st: os.stat_result) -> Entry:
        if stat.S_ISDIR(st.st_mode):
            return Entry("d")
        if stat.S_ISLNK(st.st_mode):
            target = os.readlink(full)
            key = _sha(target.encode())
            self._keep(key, target.encode())
            return Entry("l", False, key, key)
        if not stat.S_ISREG(st.st_mode):
            return Entry("o")
        sig = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        cached = self._stat_cache.get(rel)
        if cached is not None and cached[0] == sig:
            return cached[1]
        try:
            with open(full, "rb") as fh:
                data = fh.read()
        except OSError:
            return Entry("o")
        key = _sha(data)
        self._keep(key, data)
        ident = key
        normal = _normalized(rel, name, data)
        if normal is not None:
            ident = "n:" + _sha(normal.encode())
            self._normal[ident] = normal
        entry = Entry("f", bool(st.st_mode & stat.S_IXUSR), key, ident)
        self._stat_cache[rel] = (sig, entry)
        return entry

    # -- restoring --------------------------------------------------------------------------------------
    def reset(self, template: str | Path | None) -> Manifest:
        """Empty the directory and fill it from ``template`` (a directory) when given; returns the manifest."""
        if self.path.exists():
            shutil.rmtree(self.path)
        if template is not None:
            shutil.copytree(template, self.path, symlinks=True)
        else:
            self.path.mkdir(parents=True)
        self._stat_cache.clear()
        return self.scan()

    def restore(self, target: Manifest, current: Manifest | None = None) -> None:
        """Make the directory hold exactly ``target``, in place, writing only what differs from ``current``
        (scanned when not given)."""
        current = self.scan() if current is None else current
        self.path.mkdir(parents=True, exist_ok=True)
        stale = [
            p
            for p, e in current.items()
            if p not in target or target[p].kind != e.kind or (e.kind != "d" and target[p].blob != e.blob)
        ]
        for rel in sorted(stale, key=lambda p: p.count("/"), reverse=True):
            full = self.path / rel
            if current[rel].kind == "d":
                shutil.rmtree(full, ignore_errors=True)
            else:
                try:
                    full.unlink()
                except FileNotFoundError:
                    pass
            self._stat_cache.pop(rel, None)
        for rel in sorted(target, key=lambda p: (p.count("/"), p)):
            e = target[rel]
            full = self.path / rel
            have = current.get(rel)
            if have is not None and rel not in stale:
                if e.kind == "f" and have.executable != e.executable:
                    os.chmod(full, 0o755 if e.executable else 0o644)
                continue
            if e.kind == "d":
                full.mkdir(parents=True, exist_ok=True)
            elif e.kind == "l":
                os.symlink(self.blob(e.blob).decode(), full)
            elif e.kind == "f":
                full.parent.mkdir(parents=True, exist_ok=True)
                tmp = full.with_name(f".{full.name}.libra-restore")
                tmp.write_bytes(self.blob(e.blob))
                os.chmod(tmp, 0o755 if e.executable else 0o644)
                os.replace(tmp, full)

    # -- diffs ------------------------------------------------------------------------------------------
    def show(self, entry: Entry, rel: str = "") -> Any:
        """A file's content as ``state_changes`` shows it: text (cut at :data:`MAX_TEXT`), the normalized form
        of a metadata-bearing file, a git object's inflated content, or a size-and-hash line for binary content."""
        if entry.kind == "d":
            return {}
        if entry.kind == "o":
            return "<special file>"
        if entry.ident in self._normal:
            return self._normal[entry.ident]
        data = self.blob(entry.blob)
        if entry.kind == "f" and _GIT_OBJECT.search(rel):
            data = git_object_text(data)
        if entry.kind == "l":
            return {"symlink": data.decode("utf-8", "replace")}
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return f"<binary, {len(data)} bytes, sha256 {entry.blob[:16]}>"
        if len(text) > MAX_TEXT:
            return text[:MAX_TEXT] + f"... <{len(data)} bytes, sha256 {entry.blob[:16]}>"
        return text

    def diff(self, before: Manifest, after: Manifest) -> dict[str, dict[str, Any]]:
        """The change between two manifests in :mod:`libra.runtime.diff`'s format (paths are JSON-quoted keys)."""
        out: dict[str, dict[str, Any]] = {"changed": {}, "added": {}, "removed": {}}
        removed = [rel for rel in before if rel not in after]
        added = [rel for rel in after if rel not in before]
        for rel in removed:
            if not _has_child(rel, before[rel], removed):
                out["removed"][_key(rel)] = self.show(before[rel], rel)
        for rel, e in before.items():
            other = after.get(rel)
            if other is not None and (
                other.ident != e.ident or other.kind != e.kind or other.executable != e.executable
            ):
                out["changed"][_key(rel)] = {"before": self.show(e, rel), "after": self.show(other, rel)}
        for rel in added:
            if not _has_child(rel, after[rel], added):
                out["added"][_key(rel)] = self.show(after[rel], rel)
        return out


def _key(rel: str) -> str:
    return f"[{json.dumps(rel, ensure_ascii=False)}]"


def _has_child(rel: str, entry: Entry, paths: list[str]) -> bool:
    """Whether a directory's appearance (or disappearance) is already told by a path under it: a diff lists a
    new directory only when it is empty, so ``state_changes`` holds the files, not the folders around them."""
    prefix = rel + "/"
    return entry.kind == "d" and any(p.startswith(prefix) for p in paths)
