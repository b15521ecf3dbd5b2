"""Models inside an archive: which one is the package's main model, its mesh as triangles, and a 3MF's own
thumbnail. Runs in the listing child (its memory ceiling and time limit hold); a mesh that cannot be drawn ends
as MeshRefused with a reason, never as a crash."""

import io
import struct
import zipfile

from packages.archives.entries import Entry

MESH_SUFFIXES = (".stl", ".3mf", ".obj")
# A model bigger than this is not read for a preview: a binary STL of 2M triangles is ~100 MB.
MESH_SOURCE_MAX_BYTES = 128 * 1024**2
MESH_MAX_TRIANGLES = 2_000_000
# A 3MF's own pictures: its package thumbnail, then the slicers' plate images (Bambu, Orca, Prusa).
_3MF_THUMBNAILS = ("metadata/thumbnail.png", "metadata/plate_1.png", "metadata/thumbnail.jpg")
_3MF_THUMBNAIL_MAX_BYTES = 8 * 1024**2
_STL_HEADER_BYTES, _STL_TRIANGLE_BYTES = 84, 50


class MeshRefused(Exception):
    """No preview of this model; the message says why."""


def model_entries(entries: list[Entry]) -> list[Entry]:
    """The models a preview may be made of, the main one first: the largest readable model file (kits put the
    whole figure or the biggest part there), 3MF before STL before OBJ at equal size."""
    rank = {suffix: index for index, suffix in enumerate(MESH_SUFFIXES)}
    return sorted(
        (
            entry
            for entry in entries
            if entry.path.lower().endswith(MESH_SUFFIXES)
            and not entry.encrypted
            and 0 < entry.size <= MESH_SOURCE_MAX_BYTES
        ),
        key=lambda entry: (-entry.size, rank[entry.path.lower()[-4:]], entry.path.lower()),
    )


def embedded_thumbnail(data: bytes) -> tuple[str, bytes] | None:
    """A 3MF's own picture (its path inside the 3MF, its bytes), read bounded; None when it has none."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            by_name = {info.filename.lower(): info for info in package.infolist()}
            for wanted in _3MF_THUMBNAILS:
                info = by_name.get(wanted)
                if info is not None and 0 < info.file_size <= _3MF_THUMBNAIL_MAX_BYTES:
                    with package.open(info) as member:
                        return info.filename, member.read(_3MF_THUMBNAIL_MAX_BYTES)
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError):
        return None
    return None


def mesh_triangles(path: str, data: bytes):
    """The model's triangles as a float32 array (n, 3, 3), in its own units (millimetres for print models)."""
    suffix = path.lower().rsplit(".", 1)[-1]
    binary_stl = suffix == "stl" and _stl_binary_count(data) is not None  # refused before numpy is imported
    import numpy as np

    try:
        if binary_stl:
            # Read in place (50 bytes a triangle: normal, three vertices, attribute): trimesh would merge
            # vertices first, seconds at a million triangles for a picture that does not need it.
            records = np.frombuffer(data, dtype=_stl_record(), count=_stl_binary_count(data), offset=_STL_HEADER_BYTES)
            triangles = records["vertices"]  # a view of the bytes read: no copy
        else:
            import trimesh  # half a second to import: not for a binary STL, read in place

            loaded = trimesh.load(io.BytesIO(data), file_type=suffix, process=False, force="mesh")
            triangles = np.asarray(loaded.triangles, dtype=np.float32)
    except MemoryError:
        raise
    except Exception as exc:  # any loader failure on hostile bytes means a model that cannot be drawn
        raise MeshRefused(f"the model cannot be read ({exc.__class__.__name__}: {str(exc)[:200]})") from None
    if triangles.ndim != 3 or len(triangles) == 0:
        raise MeshRefused("the model holds no triangles")
    if len(triangles) > MESH_MAX_TRIANGLES:
        raise MeshRefused(f"the model has {len(triangles):,} triangles, above the {MESH_MAX_TRIANGLES:,} drawn")
    finite = np.isfinite(triangles).all(axis=(1, 2))
    if not finite.all():
        triangles = np.ascontiguousarray(triangles[finite])
    if len(triangles) == 0:
        raise MeshRefused("every vertex of the model is NaN or infinite")
    return triangles


def _stl_binary_count(data: bytes) -> int | None:
    """A binary STL's triangle count, checked against its bytes before anything is allocated for it; None for
    an ASCII STL (it starts with `solid` and says `facet`, and is parsed as text)."""
    if len(data) < _STL_HEADER_BYTES or data[:5].lower() == b"solid" and b"facet" in data[:1024]:
        return None
    (declared,) = struct.unpack_from("<I", data, 80)
    held = (len(data) - _STL_HEADER_BYTES) // _STL_TRIANGLE_BYTES
    if declared == 0:
        raise MeshRefused("the STL declares 0 triangles")
    if declared > held:
        raise MeshRefused(f"the STL declares {declared:,} triangles but its bytes hold {held:,} (damaged or crafted)")
    if declared > MESH_MAX_TRIANGLES:
        raise MeshRefused(f"the model has {declared:,} triangles, above the {MESH_MAX_TRIANGLES:,} drawn")
    return declared


def _stl_record():
    import numpy as np

    return np.dtype([("normal", "<f4", 3), ("vertices", "<f4", (3, 3)), ("attribute", "<u2")])
