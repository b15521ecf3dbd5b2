"""Collections: packages that belong together, grouped as they arrive and edited by operators.

A new package joins a package of the same source chat and topic that was posted in the same album, that it
answers (or that answers the same message), or, posted within PACKAGE_COLLECTION_WINDOW_SECONDS of it, that has
the same base name ("dragon_v2.zip" and "Dragon v3.7z") or the same creator named in the file name. The rule
is kept on each package and shown. Operators create, rename, merge and dissolve collections; a package taken
out by a dissolve is not grouped again automatically.
"""

import re
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q

from packages.models import Collection, GroupingRule, Package

_SUFFIXES = re.compile(r"(\.(zip|rar|7z|z\d\d|r\d\d|part\d+|\d{3}))+$", re.IGNORECASE)
# Version and volume words at the end of a name: "dragon v2", "dragon final", "dragon 02".
_VERSION_WORDS = re.compile(r"(\s+(v\d+(\s\d+)*|\d+|final|fixed|update|updated|new))+$")
NAME_MAX = 255


def base_name(file_name: str) -> str:
    """A file name without its archive suffixes and version words, in lower case: what versions share."""
    stem = _SUFFIXES.sub("", file_name.rsplit("/", 1)[-1])
    words = " ".join(re.findall(r"[a-z0-9]+", stem.lower()))
    return _VERSION_WORDS.sub("", words).strip() or words


def _named_creator(package: Package) -> str:
    """The creator when the file name names one; the topic's or channel's title says nothing about the model."""
    creator = package.creator.strip()
    fallback = {package.source_topic_title.lower(), (package.source_chat.title if package.source_chat else "").lower()}
    return "" if not creator or creator.lower() in fallback else creator


def _match(package: Package) -> tuple[str, Package] | None:
    peers = (
        Package.objects.filter(
            source_chat_id=package.source_chat_id, source_topic_id=package.source_topic_id, grouping_dismissed=False
        )
        .exclude(pk=package.pk)
        .select_related("source_chat", "collection")
        .order_by("source_posted_at", "pk")
    )
    if package.source_grouped_id is not None:
        album = peers.filter(source_grouped_id=package.source_grouped_id).first()
        if album is not None:
            return GroupingRule.ALBUM, album
    answers = Q(source_reply_to_id__in=package.source_message_ids)
    if package.source_reply_to_id is not None:
        answers |= Q(source_message_ids__contains=[package.source_reply_to_id])
        answers |= Q(source_reply_to_id=package.source_reply_to_id)
    reply = peers.filter(answers).first()
    if reply is not None:
        return GroupingRule.REPLY, reply
    if package.source_posted_at is None:
        return None
    window = timedelta(seconds=settings.PACKAGE_COLLECTION_WINDOW_SECONDS)
    near = list(
        peers.filter(source_posted_at__range=(package.source_posted_at - window, package.source_posted_at + window))
    )
    name = base_name(package.file_name)
    for peer in near:
        if base_name(peer.file_name) == name:
            return GroupingRule.BASE_NAME, peer
    creator = _named_creator(package)
    for peer in near if creator else []:
        if _named_creator(peer).lower() == creator.lower():
            return GroupingRule.CREATOR, peer
    return None


def _name_for(rule: str, first: Package, package: Package) -> str:
    if rule == GroupingRule.CREATOR:
        return _named_creator(package)[:NAME_MAX]
    return (base_name(first.file_name) or first.file_name)[:NAME_MAX]


@transaction.atomic
def package_group(*, package: Package) -> Collection | None:
    """Put a new package in the collection it belongs to by the rules above (starting one when its match has
    none); None when it belongs with nothing."""
    if package.grouping_dismissed or package.collection_id is not None:
        return package.collection
    found = _match(package)
    if found is None:
        return None
    rule, peer = found
    collection = peer.collection
    if collection is None:
        collection = Collection.objects.create(
            name=_name_for(rule, peer, package),
            rule=rule,
            source_chat_id=package.source_chat_id,
            source_topic_id=package.source_topic_id,
        )
        Package.objects.filter(pk=peer.pk).update(collection=collection, collection_rule=rule)
    package.collection, package.collection_rule = collection, rule
    package.save(update_fields=["collection", "collection_rule"])
    return collection


# -- what operators do ---------------------------------------------------------------------------------------------


def _clean_name(name: str) -> str:
    name = (name or "").strip()
    if not name:
        raise ValidationError({"name": "Give the collection a name."})
    if len(name) > NAME_MAX:
        raise ValidationError({"name": f"A collection's name has at most {NAME_MAX} characters."})
    return name


def _drop_if_empty(collection_ids) -> None:
    Collection.objects.filter(pk__in=collection_ids, packages__isnull=True).delete()


@transaction.atomic
def collection_create(*, name: str, package_ids: list[int]) -> Collection:
    """A collection of the packages an operator chose; they leave the collections they were in."""
    name = _clean_name(name)
    packages = list(Package.objects.select_for_update().filter(pk__in=set(package_ids)))
    missing = set(package_ids) - {package.pk for package in packages}
    if not package_ids:
        raise ValidationError({"packages": "Choose at least one package."})
    if missing:
        raise ValidationError({"packages": f"No package with id {', '.join(map(str, sorted(missing)))}."})
    first = min(packages, key=lambda package: package.pk)
    collection = Collection.objects.create(
        name=name,
        rule=GroupingRule.OPERATOR,
        source_chat_id=first.source_chat_id,
        source_topic_id=first.source_topic_id,
    )
    _move(packages, collection)
    return collection


def _move(packages: list[Package], collection: Collection) -> None:
    old = {package.collection_id for package in packages if package.collection_id not in (None, collection.pk)}
    Package.objects.filter(pk__in=[package.pk for package in packages]).update(
        collection=collection, collection_rule=GroupingRule.OPERATOR, grouping_dismissed=False
    )
    _drop_if_empty(old)


@transaction.atomic
def collection_add(*, collection: Collection, package: Package) -> Collection:
    """An operator puts one more package in a collection."""
    _move([package], collection)
    return collection


def collection_rename(*, collection: Collection, name: str) -> Collection:
    collection.name = _clean_name(name)
    collection.save(update_fields=["name"])
    return collection


@transaction.atomic
def collection_merge(*, collection: Collection, into_id: int) -> Collection:
    """Every package of `collection` joins the collection `into_id`, keeping the rule that grouped it; the
    merged collection is gone and the one it went into is the operator's from now on."""
    if into_id == collection.pk:
        raise ValidationError({"into": "Choose another collection to merge into."})
    into = Collection.objects.select_for_update().filter(pk=into_id).first()
    if into is None:
        raise ValidationError({"into": f"No collection with id {into_id}."})
    collection.packages.update(collection=into)
    into.rule = GroupingRule.OPERATOR
    into.save(update_fields=["rule"])
    collection.delete()
    return into


@transaction.atomic
def collection_dissolve(*, collection: Collection) -> int:
    """The packages stand alone again and are left out of automatic grouping; returns how many there were."""
    count = collection.packages.update(collection=None, collection_rule="", grouping_dismissed=True)
    collection.delete()
    return count
