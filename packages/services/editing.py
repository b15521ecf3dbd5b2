"""The operator's edits: a package's creator and tags, many at once, and a channel's category tag."""

from django.core.exceptions import ValidationError
from django.db import connection, transaction

from packages.models import Package

MAX_TAGS = 20
MAX_TAG_CHARS = 100
MAX_CREATOR_CHARS = 255
BULK_EDIT_LIMIT = 1000


def tags_clean(tags: list[str], *, field: str = "tags") -> list[str]:
    """Tags as typed, trimmed, without empties or repeats (the first spelling wins), in their order."""
    kept: dict[str, str] = {}
    for tag in tags:
        tag = " ".join(str(tag).split())
        if len(tag) > MAX_TAG_CHARS:
            raise ValidationError({field: f"A tag has at most {MAX_TAG_CHARS} characters; “{tag[:30]}…” is longer."})
        if tag:
            kept.setdefault(tag.lower(), tag)
    if len(kept) > MAX_TAGS:
        raise ValidationError({field: f"A package has at most {MAX_TAGS} tags; {len(kept)} were given."})
    return list(kept.values())


def creator_clean(creator: str) -> str:
    creator = " ".join(creator.split())
    if len(creator) > MAX_CREATOR_CHARS:
        raise ValidationError({"creator": f"A creator's name has at most {MAX_CREATOR_CHARS} characters."})
    return creator


def package_edit(*, package: Package, creator: str | None = None, tags: list[str] | None = None) -> Package:
    """The operator names the creator and the tags; None leaves a field as it is."""
    fields = []
    if creator is not None:
        package.creator = creator_clean(creator)
        fields.append("creator")
    if tags is not None:
        package.tags = tags_clean(tags)
        fields.append("tags")
    if fields:
        package.save(update_fields=fields)
    return package


def packages_bulk_edit(
    *, package_ids: list[int], creator: str | None = None, add_tags: list[str] = (), remove_tags: list[str] = ()
) -> int:
    """Set the creator of, and add or remove tags on, many packages at once; returns how many were changed."""
    if not package_ids:
        raise ValidationError({"packages": "Choose at least one package."})
    if len(package_ids) > BULK_EDIT_LIMIT:
        raise ValidationError({"packages": f"Edit at most {BULK_EDIT_LIMIT} packages at once."})
    if creator is None and not add_tags and not remove_tags:
        raise ValidationError({"creator": "Give a creator, or tags to add or remove."})
    creator = None if creator is None else creator_clean(creator)
    adding = tags_clean(list(add_tags), field="add_tags")
    removing = {tag.lower() for tag in tags_clean(list(remove_tags), field="remove_tags")}
    with transaction.atomic():
        packages = list(Package.objects.select_for_update().filter(pk__in=package_ids).only("pk", "creator", "tags"))
        for package in packages:
            if creator is not None:
                package.creator = creator
            kept = [tag for tag in package.tags if tag.lower() not in removing]
            package.tags = tags_clean([*kept, *adding])
        Package.objects.bulk_update(packages, ["creator", "tags"])
    return len(packages)


def packages_category_retag(*, chat_id: int, old: str, new: str) -> int:
    """A channel's category changed: its packages lose the old category's tag and get the new one."""
    if old == new:
        return 0
    with connection.cursor() as cursor:
        # Case-insensitive, like every tag comparison: "minis" and "Minis" are one tag.
        cursor.execute(
            "UPDATE packages_package SET tags = array(SELECT tag FROM unnest(tags) WITH ORDINALITY AS t(tag, n) "
            "WHERE lower(tag) NOT IN (lower(%s), lower(%s)) ORDER BY n) || "
            "CASE WHEN %s = '' THEN '{}'::varchar[] ELSE ARRAY[%s]::varchar[] END WHERE source_chat_id = %s",
            [old, new, new, new, chat_id],
        )
        return cursor.rowcount
