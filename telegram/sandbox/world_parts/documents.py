"""Documents of the sandbox world: content-addressed blobs, world-file document specs turned into rows, and
reading a document's bytes (from its blob, or made from its seed)."""

import hashlib
import json
import os
import sqlite3
import tempfile
from pathlib import Path

from telegram.sandbox import content
from telegram.sandbox.world_parts.base import BLOBS_DIR, READ_CHUNK, WorldError


def _blob_path(root: Path, sha256: str) -> Path:
    return root / BLOBS_DIR / sha256


class BlobWriter:
    """Bytes written inside the block become a content-addressed blob when it ends without error."""

    def __init__(self, root: Path):
        self.root = root
        self.sha256 = ""
        self.size = 0

    def __enter__(self) -> "BlobWriter":
        blobs = self.root / BLOBS_DIR
        blobs.mkdir(parents=True, exist_ok=True)
        self._digest = hashlib.sha256()
        self._file = tempfile.NamedTemporaryFile(dir=blobs, prefix=".upload-", delete=False)
        return self

    def write(self, chunk: bytes) -> None:
        self._digest.update(chunk)
        self.size += len(chunk)
        self._file.write(chunk)

    def __exit__(self, exc_type, exc, traceback) -> None:
        self._file.close()
        if exc_type is not None:
            os.unlink(self._file.name)
            return
        self.sha256 = self._digest.hexdigest()
        os.replace(self._file.name, _blob_path(self.root, self.sha256))  # atomic: readers never see half a blob


def _archive_blob(root: Path, name: str, entries: list[dict]) -> tuple[str, int]:
    (root / BLOBS_DIR).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root / BLOBS_DIR, prefix=".build-") as build:
        archive = Path(build) / "archive"
        content.archive_write(path=archive, name=name, entries=entries)
        with BlobWriter(root) as blob, open(archive, "rb") as handle:
            while chunk := handle.read(READ_CHUNK):
                blob.write(chunk)
        return blob.sha256, blob.size


def _file_blob(root: Path, path: Path) -> tuple[str, int]:
    """Real bytes from a file (an archive made by zip or 7z, say) as a blob."""
    with BlobWriter(root) as blob, open(path, "rb") as handle:
        while chunk := handle.read(READ_CHUNK):
            blob.write(chunk)
    return blob.sha256, blob.size


def document_spec(spec, where: str) -> dict:
    """A world-file document, checked: {"name", "archive"}, {"name", "size", "seed"}, {"name", "file"} or
    {"name", "model"} (a real mesh of a models3d shape),
    with an optional "volume_size"."""
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str) or not spec["name"]:
        raise WorldError(f"{where}: a document needs a non-empty 'name'")
    name = spec["name"]
    volume_size = spec.get("volume_size")
    if volume_size is not None and (not isinstance(volume_size, int) or volume_size <= 0):
        raise WorldError(f"{where}: 'volume_size' must be a positive integer")
    if "file" in spec:
        path = Path(str(spec["file"]))
        if not path.is_file():
            raise WorldError(f"{where}: document file {path} does not exist")
        return {"name": name, "file": str(path), "volume_size": volume_size}
    if "archive" in spec:
        entries = spec["archive"]
        if content.archive_kind(name) is None:
            raise WorldError(f"{where}: archive '{name}' must end in .zip or .7z (the sandbox cannot build others)")
        if not isinstance(entries, list) or not entries:
            raise WorldError(f"{where}: 'archive' must be a non-empty list of {{'path', 'size'}} entries")
        checked = []
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) or not entry["path"]:
                raise WorldError(f"{where}: every archive entry needs a 'path'")
            made = entry.get("picture") or entry.get("model")
            if not made and (not isinstance(entry.get("size"), int) or entry["size"] < 0):
                raise WorldError(f"{where}: archive entry '{entry['path']}' needs a non-negative integer 'size'")
            _model_check(entry.get("model"), where)
            checked.append({key: entry[key] for key in ("path", "size", "seed", "picture", "model") if key in entry})
        return {"name": name, "archive": checked, "volume_size": volume_size}
    if "model" in spec:
        _model_check(spec["model"], where)
        return {"name": name, "model": spec["model"], "volume_size": volume_size}
    size = spec.get("size")
    if not isinstance(size, int) or size < 0:
        raise WorldError(f"{where}: document '{name}' needs 'archive' entries or a non-negative integer 'size'")
    return {"name": name, "size": size, "seed": str(spec.get("seed", name)), "volume_size": volume_size}


def _model_check(shape, where: str) -> None:
    from telegram.sandbox.models3d import SHAPES

    if shape is not None and shape not in SHAPES:
        raise WorldError(f"{where}: 'model' must be one of {', '.join(sorted(SHAPES))}")


def _model_blob(root: Path, name: str, shape: str) -> tuple[str, int]:
    """A model posted as it is (rover.stl): a real mesh, made at build time."""
    from telegram.sandbox.models3d import model_bytes

    with BlobWriter(root) as blob:
        blob.write(model_bytes(shape, name))
    return blob.sha256, blob.size


def document_parts(root: Path, spec: dict) -> list[dict]:
    """Document rows (without id) for a checked spec: one, or one per volume."""
    if "archive" in spec:
        sha256, total = _archive_blob(root, spec["name"], spec["archive"])
        source, key = "blob", sha256
    elif "file" in spec:
        sha256, total = _file_blob(root, Path(spec["file"]))
        source, key = "blob", sha256
    elif "model" in spec:
        sha256, total = _model_blob(root, spec["name"], spec["model"])
        source, key = "blob", sha256
    else:
        source, key, total, sha256 = "seed", spec["seed"], spec["size"], None
    if not spec["volume_size"]:
        return [_document_row(spec["name"], total, sha256, source, key, total, 0)]
    return [
        _document_row(content.volume_name(spec["name"], index), length, None, source, key, total, start)
        for index, (start, length) in enumerate(content.volume_ranges(size=total, volume_size=spec["volume_size"]), 1)
    ]


def _document_row(name, size, sha256, source, key, source_size, start) -> dict:
    return {
        "name": name,
        "size": size,
        "mime_type": content.mime_type(name),
        "sha256": sha256,
        "source": source,
        "source_key": key,
        "source_size": source_size,
        "start": start,
    }


def photo_row(root: Path, spec, where: str, default_seed: str) -> dict:
    """A photo holds a real JPEG picture made from its seed (so previews can be made of it)."""
    if not isinstance(spec, dict):
        raise WorldError(f"{where}: 'photo' must be an object")
    with BlobWriter(root) as blob:
        blob.write(content.picture(seed=str(spec.get("seed", default_seed))))
    return _document_row("photo.jpg", blob.size, blob.sha256, "blob", blob.sha256, blob.size, 0)


def document_insert(conn: sqlite3.Connection, row: dict) -> int:
    document_id = json.loads(conn.execute("SELECT value FROM meta WHERE key = 'next_document_id'").fetchone()[0])
    conn.execute(
        "UPDATE meta SET value = ? WHERE key = 'next_document_id'",
        (json.dumps(document_id + 1),),
    )
    conn.execute(
        "INSERT INTO documents VALUES (:id, :name, :size, :mime_type, :sha256, :source, :source_key, :source_size,"
        " :start)",
        {**row, "id": document_id},
    )
    return document_id


class Documents:
    """Reading documents and storing uploads."""

    def document(self, document_id: int) -> dict | None:
        row = self._one("SELECT * FROM documents WHERE id = ?", (document_id,))
        return None if row is None else dict(row)

    def document_read(self, document: dict, *, offset: int = 0, length: int | None = None) -> bytes:
        """Bytes of a document from `offset` (all of the rest when length is None)."""
        length = document["size"] - offset if length is None else min(length, document["size"] - offset)
        if length <= 0:
            return b""
        if document["source"] == "seed":
            return content.seeded_read(
                seed=document["source_key"],
                size=document["source_size"],
                offset=document["start"] + offset,
                length=length,
            )
        with open(_blob_path(self.path, document["source_key"]), "rb") as blob:
            blob.seek(document["start"] + offset)
            return blob.read(length)

    def document_sha256(self, document: dict) -> str:
        """Computed on first use and kept: a seeded document can be gigabytes that nobody hashes."""
        if document["sha256"]:
            return document["sha256"]
        digest = hashlib.sha256()
        for offset in range(0, document["size"], READ_CHUNK):
            digest.update(self.document_read(document, offset=offset, length=READ_CHUNK))
        sha256 = digest.hexdigest()
        with self.transaction() as conn:
            conn.execute("UPDATE documents SET sha256 = ? WHERE id = ?", (sha256, document["id"]))
        return sha256

    def blob_writer(self) -> BlobWriter:
        """Where uploaded bytes go: `with world.blob_writer() as blob: blob.write(...)`."""
        return BlobWriter(self.path)

    def document_create(self, *, name: str, sha256: str, size: int, mime_type: str = "") -> int:
        """A document holding a whole blob (an upload)."""
        row = _document_row(name, size, sha256, "blob", sha256, size, 0)
        with self.transaction() as conn:
            return document_insert(conn, row | ({"mime_type": mime_type} if mime_type else {}))
