"""The package pages, one module per page family: the Packages page (search), one package's page (detail),
collections, and sending to Telegram (sends). The URLs wire these."""

from packages.views.collections import collection_detail, collection_edit, collection_list
from packages.views.detail import (
    package_collect,
    package_detail,
    package_download_links,
    package_repack_decide,
    preview_choose,
    preview_image,
)
from packages.views.search import package_bulk_edit, package_edit, package_list
from packages.views.sends import (
    collection_send,
    collection_send_preview,
    collection_sends,
    package_send,
    package_send_preview,
    package_send_retry,
    package_sends,
)

__all__ = [
    "collection_detail",
    "collection_edit",
    "collection_list",
    "collection_send",
    "collection_send_preview",
    "collection_sends",
    "package_bulk_edit",
    "package_collect",
    "package_detail",
    "package_download_links",
    "package_edit",
    "package_list",
    "package_repack_decide",
    "package_send",
    "package_send_preview",
    "package_send_retry",
    "package_sends",
    "preview_choose",
    "preview_image",
]
