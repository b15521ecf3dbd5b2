from django.contrib import admin

from packages.models import Package, RawFile


@admin.register(Package)
class PackageAdmin(admin.ModelAdmin):
    list_display = [
        "file_name",
        "file_size",
        "archive_type",
        "part_count",
        "file_count",
        "metadata_status",
        "created_at",
    ]
    list_filter = ["metadata_status", "archive_type", "is_multipart"]
    search_fields = ["file_name", "content_hash", "creator"]
    date_hierarchy = "created_at"
    # The listing can hold thousands of files: it is on the package's page, not inlined here.
    readonly_fields = ["content_hash", "uploaded_by", "source_chat", "destination_chat", "raw_files"]


@admin.register(RawFile)
class RawFileAdmin(admin.ModelAdmin):
    list_display = ["file_name", "size", "hash", "source_chat", "processed_at", "expires_at", "purged_at"]
    list_filter = ["processed_at", "purged_at"]
    search_fields = ["file_name", "hash", "file_uid"]
    readonly_fields = [field.name for field in RawFile._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False  # a raw file is what ingestion kept of a download: there is nothing to type in
