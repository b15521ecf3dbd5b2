"""Thumbnails of the first images inside an archive, made in the listing child after the listing."""

import base64
import io
import signal
import warnings
import zipfile
from pathlib import Path

from packages.archives.entries import Entry, safe_path
from packages.archives.zip_format import zip_name, zip_volumes_open
from packages.detection import MODEL, SEVEN_ZIP, ZIP

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".gif", ".bmp")
# An image bigger than this is not read for a preview: renders are rarely above it, and reading is bounded.
THUMBNAIL_SOURCE_MAX_BYTES = 25 * 1024**2
THUMBNAIL_MAX_PIXELS = 50_000_000  # above this a picture is a decompression bomb, or too big to bother
THUMBNAIL_EDGE = 480
THUMBNAILS_SECONDS = 20  # the listing is already made: thumbnails get what time is left, and no more


class _OutOfTime(Exception):
    pass


def image_entries(entries: list[Entry]) -> list[Entry]:
    """The images a preview may be made of, first by path."""
    return sorted(
        (
            entry
            for entry in entries
            if entry.path.lower().endswith(IMAGE_SUFFIXES)
            and not entry.encrypted
            and 0 < entry.size <= THUMBNAIL_SOURCE_MAX_BYTES
        ),
        key=lambda entry: entry.path.lower(),
    )


def thumbnail_make(data: bytes) -> tuple[bytes, int, int]:
    """A JPEG at most THUMBNAIL_EDGE pixels on its longer side; ValueError for what is not a sane picture."""
    from PIL import Image, ImageOps  # only the child and the photo step load Pillow

    Image.MAX_IMAGE_PIXELS = THUMBNAIL_MAX_PIXELS
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            with Image.open(io.BytesIO(data)) as image:
                image = ImageOps.exif_transpose(image)
                image.thumbnail((THUMBNAIL_EDGE, THUMBNAIL_EDGE))
                image = image.convert("RGB")
                out = io.BytesIO()
                image.save(out, format="JPEG", quality=82)
        except (OSError, SyntaxError, Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise ValueError(f"not a picture that can be shown: {exc}") from exc
    return out.getvalue(), image.width, image.height


def thumbnails_make(archive_type: str, volumes: list[Path], entries: list[Entry], wanted: int) -> list[list]:
    """[path, base64 JPEG, width, height] of up to `wanted` images, in THUMBNAILS_SECONDS at most."""
    chosen = {entry.path for entry in image_entries(entries)[:wanted]}
    if not chosen:
        return []
    made = []

    def out_of_time(*_):
        raise _OutOfTime

    signal.signal(signal.SIGALRM, out_of_time)
    signal.setitimer(signal.ITIMER_REAL, THUMBNAILS_SECONDS)
    try:
        for path, data in members_read(archive_type, volumes, chosen, THUMBNAIL_SOURCE_MAX_BYTES):
            try:
                jpeg, width, height = thumbnail_make(data)
            except ValueError:
                continue
            made.append([path, base64.b64encode(jpeg).decode(), width, height])
    except Exception:  # out of time or memory, a damaged archive, a reader that needs a tool: fewer previews
        pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return sorted(made, key=lambda made_one: made_one[0].lower())


def members_read(archive_type: str, volumes: list[Path], chosen: set[str], max_bytes: int):
    """(safe path, bytes) of the chosen entries of staged volumes, each read at most `max_bytes`."""
    if archive_type == MODEL:  # a model posted as it is: the one file is the entry
        with open(volumes[0], "rb") as model:
            yield safe_path(volumes[0].name)[0], model.read(max_bytes)
    elif archive_type == ZIP:
        with zip_volumes_open(volumes) as stream, zipfile.ZipFile(stream) as archive:
            for info in archive.infolist():
                path = safe_path(zip_name(info))[0]
                if path in chosen and not info.is_dir():
                    with archive.open(info) as member:
                        yield path, member.read(max_bytes)
    elif archive_type == SEVEN_ZIP:
        from py7zr.io import BytesIOFactory  # imported here: see packages/archives/listing.py

        from packages.archives.sevenzip_format import sevenzip_open

        with sevenzip_open(volumes) as archive:
            names = [info.filename for info in archive.list() if safe_path(info.filename)[0] in chosen]
            factory = BytesIOFactory(max_bytes)
            archive.extract(targets=names, factory=factory)
            for name in names:
                if name in factory.products:
                    product = factory.get(name)
                    product.seek(0)
                    yield safe_path(name)[0], product.read()
    else:
        import rarfile

        with rarfile.RarFile(volumes[0]) as archive:
            for info in archive.infolist():
                path = safe_path(info.filename)[0]
                if path in chosen and not info.is_dir():
                    with archive.open(info) as member:
                        yield path, member.read(max_bytes)
