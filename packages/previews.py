"""Previews: thumbnails of the photo posted with a package, of images inside its archive, or of its main model.

The photo wins when there is one: posted in the same album, or in the same topic within
PACKAGE_PREVIEW_PHOTO_WINDOW_SECONDS with a caption that names the archive. Else the first image inside the
archive (thumbnails made in the listing child, packages.archives), else its main model: the 3MF's own picture or
one drawn of its mesh (same child). Thumbnails are JPEGs kept through Django's
storage, so they live wherever media do (local disk or an object store).
"""

import hashlib
import re
from datetime import datetime

from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction

from packages.archives import Thumbnail, thumbnail_make
from packages.models import Package, PackagePreview, PreviewSource
from telegram.records import DocumentMessage

# Words that say nothing about which model a photo shows.
_NOISE_WORDS = frozenset(
    {"zip", "rar", "7z", "part", "the", "and", "for", "with", "stl", "obj", "3mf", "presupported", "supported"}
)
PHOTO_MAX_BYTES = 10 * 1024**2  # Telegram's own limit for a photo


def _words(text: str) -> set[str]:
    return {
        word
        for word in re.findall(r"[a-z0-9]+", text.lower())
        if len(word) >= 3 and not word.isdigit() and word not in _NOISE_WORDS
    }


def photo_for_archive(
    *, file_name: str, caption: str, grouped_id: int | None, posted_at: datetime, photos: list[DocumentMessage]
) -> DocumentMessage | None:
    """The photo that shows this archive: the first of its album, else the one whose caption shares the most
    words with the archive's name or caption (the nearest of those). A photo that names nothing is not taken,
    nor one of another album (it shows that album's archive): a wrong preview is worse than the image inside."""
    usable = [photo for photo in photos if photo.photo is not None]
    if grouped_id is not None:
        album = [photo for photo in usable if photo.grouped_id == grouped_id]
        if album:
            return min(album, key=lambda photo: photo.id)
    named = _words(file_name) | _words(caption)
    scored = [(len(named & _words(photo.text)), photo) for photo in usable if photo.grouped_id is None]
    matched = [(shared, photo) for shared, photo in scored if shared]
    if not matched:
        return None
    return min(matched, key=lambda pair: (-pair[0], abs((pair[1].date - posted_at).total_seconds()), pair[1].id))[1]


def _preview_store(
    *, package: Package, source: str, path: str, jpeg: bytes, width: int, height: int, message_id: int | None = None
) -> PackagePreview:
    """Keep one thumbnail; the same image twice (a backfill, a retried cycle) is kept once."""
    existing = PackagePreview.objects.filter(package=package, source=source, path=path).first()
    if existing is not None:
        return existing
    digest = hashlib.sha256(jpeg).hexdigest()
    name = default_storage.save(
        f"previews/{package.content_hash[:2]}/{package.content_hash}/{digest[:16]}.jpg", ContentFile(jpeg)
    )
    try:
        with transaction.atomic():
            return PackagePreview.objects.create(
                package=package,
                source=source,
                path=path,
                source_message_id=message_id,
                image=name,
                width=width,
                height=height,
            )
    except IntegrityError:
        default_storage.delete(name)
        return PackagePreview.objects.get(package=package, source=source, path=path)


_SOURCES = {"image": PreviewSource.ARCHIVE, "embedded": PreviewSource.EMBEDDED, "render": PreviewSource.RENDER}


def previews_from_archive(
    *, package: Package, thumbnails: list[Thumbnail], model_preview_refused: str = ""
) -> list[PackagePreview]:
    """The archive's images, then its main model's preview, as preview candidates; the first becomes the
    preview when it has none (a picture someone chose to put in the archive says more than a drawing)."""
    previews = [
        _preview_store(
            package=package,
            source=_SOURCES[thumbnail.kind],
            path=thumbnail.path,
            jpeg=thumbnail.jpeg,
            width=thumbnail.width,
            height=thumbnail.height,
        )
        for thumbnail in thumbnails
    ]
    package.model_preview_note = model_preview_refused
    update = ["model_preview_note"]
    if previews and package.preview_id is None:
        package.preview = previews[0]
        update.append("preview")
    package.save(update_fields=update)
    return previews


def preview_from_photo(*, package: Package, message_id: int, data: bytes) -> PackagePreview | None:
    """The photo posted with the archive becomes its preview (None when its bytes are no picture)."""
    try:
        jpeg, width, height = thumbnail_make(data[:PHOTO_MAX_BYTES])
    except ValueError:
        return None
    preview = _preview_store(
        package=package,
        source=PreviewSource.PHOTO,
        path="",
        message_id=message_id,
        jpeg=jpeg,
        width=width,
        height=height,
    )
    package.preview = preview
    package.save(update_fields=["preview"])
    return preview


def package_preview_choose(*, package: Package, preview_id: int) -> Package:
    """The operator picks another of the package's images as its preview."""
    preview = PackagePreview.objects.filter(package=package, pk=preview_id).first()
    if preview is None:
        raise ValidationError({"preview": f"Image {preview_id} is not one of this package's images."})
    package.preview = preview
    package.save(update_fields=["preview"])
    return package
