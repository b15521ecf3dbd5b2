"""Previews of the model inside a package: the 3MF's own picture where it has one, else a picture drawn of the
main model's mesh (binary and ASCII STL, OBJ, 3MF) in the listing child; models written by a mesh library and
packed by Debian's `zip` and `7z`. Hostile meshes end as "no model preview: why", never as a crash."""

import io
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest
import trimesh
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.utils import timezone
from PIL import Image

from packages.archives import read_archive
from packages.archives.render import render_pixels
from packages.detection import MODEL, SEVEN_ZIP, ZIP
from packages.models import MetadataStatus, Package, PreviewSource
from packages.services import package_metadata_fill
from tests.support.archives import run, tool
from tests.support.factories import package_with_raw_files

BACKGROUND = (238, 240, 255)


def figure() -> trimesh.Trimesh:
    """A small figure: a ball on a plinth."""
    ball = trimesh.creation.icosphere(subdivisions=3, radius=10).apply_translation((0, 0, 18))
    plinth = trimesh.creation.box(extents=(30, 20, 8))
    return trimesh.util.concatenate([ball, plinth])


def written(folder: Path, name: str, data: bytes | str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def picture_of(jpeg: bytes) -> np.ndarray:
    image = Image.open(io.BytesIO(jpeg))
    assert image.format == "JPEG" and image.size == (480, 480)
    return np.asarray(image.convert("RGB"))


def drawn_share(pixels: np.ndarray) -> float:
    """The share of the picture that is not background: the model's silhouette."""
    return float((np.abs(pixels.astype(int) - BACKGROUND).sum(axis=2) > 30).mean())


def model_preview(listing):
    (made,) = [thumbnail for thumbnail in listing.thumbnails if thumbnail.kind != "image"]
    return made


@pytest.mark.parametrize("file_type", ["stl", "stl_ascii", "obj", "3mf"])
def test_a_model_packed_by_zip_is_drawn_from_a_fixed_angle(tmp_path, file_type):
    suffix = "stl" if file_type == "stl_ascii" else file_type
    written(tmp_path / "in", f"knight/knight.{suffix}", figure().export(file_type=file_type))
    written(tmp_path / "in", "knight/readme.txt", b"print at 0.12 mm")
    run(tool("zip"), "-q", "-r", str(tmp_path / "knight.zip"), "knight", cwd=tmp_path / "in")

    listing = read_archive(ZIP, [tmp_path / "knight.zip"], model_preview=True)

    made = model_preview(listing)
    assert (made.path, made.kind, listing.model_preview_refused) == (f"knight/knight.{suffix}", "render", "")
    share = drawn_share(picture_of(made.jpeg))
    assert 0.15 < share < 0.8, "the model fills the picture, with a margin"


def test_the_main_model_is_the_largest_and_7z_sets_are_read_too(tmp_path):
    small = trimesh.creation.box(extents=(5, 5, 5))
    written(tmp_path / "in", "kit/a-screw.stl", small.export(file_type="stl"))
    written(tmp_path / "in", "kit/z-body.stl", figure().export(file_type="stl"))
    run(tool("7z"), "a", "-bd", str(tmp_path / "kit.7z"), "kit", cwd=tmp_path / "in")

    listing = read_archive(SEVEN_ZIP, [tmp_path / "kit.7z"], model_preview=True)

    assert model_preview(listing).path == "kit/z-body.stl"


def test_a_3mf_shows_its_own_thumbnail(tmp_path):
    model = io.BytesIO(figure().export(file_type="3mf"))
    thumbnail = io.BytesIO()
    Image.new("RGB", (300, 200), (200, 30, 30)).save(thumbnail, format="PNG")
    with zipfile.ZipFile(model, "a") as package:
        package.writestr("Metadata/thumbnail.png", thumbnail.getvalue())
    written(tmp_path / "in", "rook.3mf", model.getvalue())
    run(tool("zip"), "-q", str(tmp_path / "rook.zip"), "rook.3mf", cwd=tmp_path / "in")

    made = model_preview(read_archive(ZIP, [tmp_path / "rook.zip"], model_preview=True))

    assert made.kind == "embedded" and (made.width, made.height) == (300, 200)
    red = np.asarray(Image.open(io.BytesIO(made.jpeg)).convert("RGB"))[100, 150]
    assert red[0] > 180 and red[1] < 70


def test_a_model_posted_as_it_is_gets_its_preview_on_the_package(storage, db, tmp_path):
    path = written(tmp_path, "rover.stl", figure().export(file_type="stl"))
    package = Package.objects.create(
        content_hash="c" * 64, file_name="rover.stl", file_size=path.stat().st_size, archive_type=MODEL
    )

    package_metadata_fill(package=package, volume_paths=[path])

    package.refresh_from_db()
    assert package.metadata_status == MetadataStatus.COMPLETE
    assert (package.preview.source, package.preview.path) == (PreviewSource.RENDER, "rover.stl")
    with default_storage.open(package.preview.image.name, "rb") as kept:
        assert drawn_share(picture_of(kept.read())) > 0.1
    assert package.model_preview_note == ""


def test_the_renderer_keeps_the_nearest_surface_whatever_the_order():
    """Two wide squares, one behind the other and tilted (so shaded differently): the front one hides the back
    one where they overlap, in whichever order the triangles come."""
    front = [[[-10, -5, -10], [10, -5, -10], [10, -5, 10]], [[-10, -5, -10], [10, -5, 10], [-10, -5, 10]]]
    back = [[[-10, 5, -10], [10, 9, 10], [10, 9, -10]], [[-10, 5, -10], [-10, 5, 10], [10, 9, 10]]]
    front_first = render_pixels(np.array(front + back, dtype=np.float32), 96)
    back_first = render_pixels(np.array(back + front, dtype=np.float32), 96)
    assert (front_first == back_first).all()
    front_colour = tuple(render_pixels(np.array(front, dtype=np.float32), 96)[48, 48])
    back_colour = tuple(render_pixels(np.array(back, dtype=np.float32), 96)[48, 48])
    assert front_colour != back_colour
    assert tuple(front_first[48, 48]) == front_colour


# Hostile meshes ----------------------------------------------------------------------------------------------------


def binary_stl(triangles: np.ndarray, declared: int | None = None) -> bytes:
    body = b"".join(struct.pack("<12fH", 0, 0, 0, *triangle.ravel(), 0) for triangle in triangles)
    return b"\0" * 80 + struct.pack("<I", len(triangles) if declared is None else declared) + body


def refused_reason(tmp_path: Path, name: str, data: bytes) -> str:
    written(tmp_path / "in", name, data)
    run(tool("zip"), "-q", str(tmp_path / "hostile.zip"), name, cwd=tmp_path / "in")
    listing = read_archive(ZIP, [tmp_path / "hostile.zip"], model_preview=True)
    assert [entry.path for entry in listing.entries] == [name], "the listing stands"
    assert not [thumbnail for thumbnail in listing.thumbnails if thumbnail.kind != "image"]
    return listing.model_preview_refused


def test_nan_vertices_are_left_out_and_a_model_of_nothing_but_nan_gets_no_preview(tmp_path):
    good = np.asarray(figure().triangles, dtype=np.float32)
    spoiled = good.copy()
    spoiled[::3] = np.nan
    written(tmp_path / "in", "part.stl", binary_stl(spoiled))
    run(tool("zip"), "-q", str(tmp_path / "part.zip"), "part.stl", cwd=tmp_path / "in")
    assert model_preview(read_archive(ZIP, [tmp_path / "part.zip"], model_preview=True)).kind == "render"

    reason = refused_reason(tmp_path, "nan.stl", binary_stl(np.full((10, 3, 3), np.nan, dtype=np.float32)))
    assert reason == "No model preview: nan.stl: every vertex of the model is NaN or infinite."


def test_zero_triangles_and_a_declared_fifty_million_end_with_their_reason(tmp_path):
    assert refused_reason(tmp_path, "empty.stl", binary_stl(np.zeros((0, 3, 3)))) == (
        "No model preview: empty.stl: the STL declares 0 triangles."
    )
    (tmp_path / "hostile.zip").unlink()
    liar = binary_stl(np.asarray(figure().triangles[:4], dtype=np.float32), declared=50_000_000)
    assert refused_reason(tmp_path, "liar.stl", liar) == (
        "No model preview: liar.stl: the STL declares 50,000,000 triangles but its bytes hold 4 (damaged or crafted)."
    )


def test_a_3mf_that_inflates_past_the_memory_ceiling_ends_as_a_reason(tmp_path):
    bomb = io.BytesIO()
    with (
        zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as package,
        package.open("3D/3dmodel.model", "w", force_zip64=True) as model,
    ):
        block = b" " * 1024**2
        for _ in range(1100):  # 1.1 GiB of nothing, above the child's 1 GiB ceiling
            model.write(block)
    assert len(bomb.getvalue()) < 20 * 1024**2

    reason = refused_reason(tmp_path, "bomb.3mf", bomb.getvalue())

    assert reason.startswith("No model preview: bomb.3mf:") or "memory" in reason, reason


def test_previews_are_made_again_from_the_kept_raw_file(storage, db, tmp_path):
    """A package listed without drawing (a catalog rebuild reads in place) gets its model's preview back."""
    written(tmp_path / "in", "kit/figure.stl", figure().export(file_type="stl"))
    run(tool("zip"), "-q", "-r", str(tmp_path / "kit.zip"), "kit", cwd=tmp_path / "in")
    package = package_with_raw_files(tmp_path, {"kit.zip": (tmp_path / "kit.zip").read_bytes()})
    gone = package_with_raw_files(tmp_path / "gone", {"gone.zip": b"PK\x05\x06" + bytes(18)})
    Package.objects.filter(pk__in=[package.pk, gone.pk]).update(metadata_status=MetadataStatus.COMPLETE)
    gone.raw_files.update(purged_at=timezone.now())
    out = io.StringIO()

    call_command("remake_previews", stdout=out)

    package.refresh_from_db()
    assert package.preview is not None, out.getvalue()
    assert (package.preview.source, package.preview.path) == (PreviewSource.RENDER, "kit/figure.stl")
    assert f"{gone.pk} gone.zip: its raw files are no longer kept" in out.getvalue()
    assert "2 package(s) looked at." in out.getvalue()
