"""What the package pages share: their templates and page sizes, a row or a 404, and the contexts of a
package's page and a collection's page (both carry the Send form and the sends)."""

from django.conf import settings
from django.core.paginator import Paginator
from django.http import Http404

from accounts.models import ChatTopic
from core.numbers import whole_number
from packages import selectors, sending
from packages.models import Collection, GroupingRule, Package

PAGE = "packages/list.html"
DETAIL = "packages/detail.html"
COLLECTIONS = "packages/collections.html"
COLLECTION = "packages/collection.html"
PER_PAGE = 25
GRID_PER_PAGE = 24  # rows of 2, 3, 4 or 6 cards come out even
SENT_THUMBNAILS = 4
SENDS_SHOWN = 10


def id_of(value) -> int:
    """An id from a form, or ValueError: the database is never asked about a number it cannot hold."""
    number = whole_number(str(value or ""))
    if not number:
        raise ValueError(value)
    return number


def package_or_404(pk: int) -> Package:
    try:
        return selectors.package_get(pk=pk)
    except Package.DoesNotExist:
        raise Http404("No such package.") from None


def collection_or_404(pk: int) -> Collection:
    try:
        return selectors.collection_get(pk=pk)
    except Collection.DoesNotExist:
        raise Http404("No such collection.") from None


def send_options(*destination_ids: int) -> list[tuple[str, list[tuple[str, str]]]]:
    """The Send form's option groups: per account that reads every destination chat involved, (value, label) of
    each chat, and each forum topic, it may post in; then, apart, the people it has a private chat with."""
    options = []
    for account, chats in sending.package_send_choices(destination_ids=destination_ids):
        by_chat: dict[int, list[ChatTopic]] = {}
        for topic in ChatTopic.objects.filter(chat__in=[chat for chat in chats if chat.is_forum]):
            by_chat.setdefault(topic.chat_id, []).append(topic)
        choices, people = [], []
        for chat in chats:
            if chat.is_person:
                people.append((f"{account.pk}:{chat.pk}:", chat.label))
                continue
            choices.append((f"{account.pk}:{chat.pk}:", chat.title))
            choices += [
                (f"{account.pk}:{chat.pk}:{topic.topic_id}", f"{chat.title} / {topic.title}")
                for topic in by_chat.get(chat.pk, [])
            ]
        if choices:
            options.append((f"through {account}", choices))
        if people:
            options.append((f"People, through {account}", people))
    return options


def sends_context(*, package: Package | None = None, collection: Collection | None = None) -> dict:
    sends = list(selectors.package_sends(package=package, collection=collection)[:SENDS_SHOWN])
    for send in sends:
        send.thumbnails = _sent_thumbnails(send)
    return {"sends": sends, "sends_live": any(send.is_live for send in sends)}


def _sent_thumbnails(send) -> list:
    """The packages a send copies that have a preview, once each, in order: at most four, as small cards."""
    shown = {}
    for part in send.parts.all():
        if part.package is not None and part.package.preview_id and len(shown) < SENT_THUMBNAILS:
            shown.setdefault(part.package_id, part.package)
    return list(shown.values())


def detail_context(package: Package, query: str = "", **extra) -> dict:
    matched = selectors.package_matched_paths(package=package, query=query)
    return {
        "package": package,
        "folders": selectors.package_folders(package=package, matched=matched),
        "query": query,
        "matched_count": len(matched),
        "source_topic": package.source_topic_name,
        # The template shows the one for its reader: as posted to operators, passwords masked to viewers.
        "caption_posted": selectors.package_caption_shown(package=package, operator=True),
        "caption_masked": selectors.package_caption_shown(package=package, operator=False),
        # Unsealed only when an operator's page renders it.
        "package_password": lambda: selectors.package_password(package=package),
        "dest_parts": list(zip(package.dest_part_names, package.dest_message_ids, strict=False)),
        "previews": selectors.package_previews(package=package),
        "collections": selectors.collection_choices(exclude_id=package.collection_id),
        "rules": GroupingRule,
        "send_options": send_options(package.destination_chat_id),
        "send_caption": package.caption,
        "viewers_may_download": settings.DOWNLOAD_LINKS_FOR_VIEWERS,
        # One file out of the kept archive ("Get", the 3D viewer): allowed like the raw-file links.
        "archive_kept": selectors.package_archive_kept(package=package),
        "link_minutes": settings.DOWNLOAD_LINK_SECONDS // 60,
        **sends_context(package=package),
        **extra,
    }


def collection_context(collection: Collection, request, **extra) -> dict:
    packages = Paginator(selectors.package_search(collection_id=collection.pk), GRID_PER_PAGE)
    sendable = Package.objects.filter(collection=collection, destination_chat__isnull=False)
    return {
        "send_options": send_options(*sendable.values_list("destination_chat_id", flat=True).distinct()),
        "send_message_count": sum(len(ids) for ids in sendable.values_list("dest_message_ids", flat=True)),
        **sends_context(collection=collection),
        "collection": collection,
        "packages": packages.get_page(request.GET.get("page")),
        "others": selectors.collection_choices(exclude_id=collection.pk),
        "name": collection.name,
        **extra,
    }
