"""Which package an archive set already is (the dedupe ladder), its first row, and its destination copy."""

from django.utils import timezone

from packages.models import MetadataStatus, Package
from packages.services.search import package_search_words_update


def package_find(*, content_hash: str = "", document_ids: list[int] | None = None, source=None) -> Package | None:
    """The dedupe ladder's lookups, cheapest first; `source` is (chat, first message id)."""
    if document_ids:
        package = Package.objects.filter(telegram_document_ids__contains=document_ids).first()
        if package is not None:
            return package
    if source is not None:
        chat, message_id = source
        package = Package.objects.filter(source_chat=chat, source_message_id=message_id).first()
        if package is not None:
            return package
    if content_hash:
        return Package.objects.filter(content_hash=content_hash).first()
    return None


def package_remember_documents(*, package: Package, document_ids: list[int]) -> None:
    """A duplicate seen elsewhere: its document ids dedupe for free next time."""
    new_ids = [doc_id for doc_id in document_ids if doc_id not in package.telegram_document_ids]
    if new_ids:
        package.telegram_document_ids = [*package.telegram_document_ids, *new_ids]
        package.save(update_fields=["telegram_document_ids"])


def package_source_release(*, chat_id: int, message_ids: list[int]) -> int:
    """These posts now hold other files (an edit replaced them): the packages made from what they held before
    stay in the catalog, as the files were posted, and leave the posts to the packages of their new files."""
    return Package.objects.filter(source_chat_id=chat_id, source_message_id__in=message_ids).update(
        source_message_id=None
    )


def package_reupload_request(*, package: Package) -> None:
    """Its destination messages are gone: keep the package (row, listing, history) for a new upload."""
    Package.objects.filter(pk=package.pk).update(reupload_needed=True)


def package_reuploaded(*, package: Package, dest_message_ids: list[int], dest_part_names: list[str], uploaded_by):
    """The new upload of a package whose destination messages were deleted."""
    package.dest_message_ids = dest_message_ids
    package.dest_part_names = dest_part_names
    package.upload_generation += 1
    package.reupload_needed = False
    package.dest_checked_at = timezone.now()
    package.uploaded_by = uploaded_by
    package.save(
        update_fields=[
            "dest_message_ids",
            "dest_part_names",
            "upload_generation",
            "reupload_needed",
            "dest_checked_at",
            "uploaded_by",
        ]
    )
    return package


def package_stub_create(**fields) -> Package:
    """Phase one, written right after the upload: enough to never upload again."""
    package = Package.objects.create(metadata_status=MetadataStatus.PENDING, **fields)
    package_search_words_update(package=package)
    return package
