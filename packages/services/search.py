"""The search index of a package: the words of its name, its caption and its listed paths."""

from django.db import connection

from packages.models import Package
from packages.passwords import caption_masked

# A tsvector holds at most 1 MB: the words of this much of a listing are searchable.
SEARCH_TEXT_LIMIT = 200_000


def package_search_words_update(*, package: Package) -> None:
    """Index the words of the package's name, caption (where posters name what is inside; its passwords masked)
    and listed paths, and their three-letter pieces (substring search), in one row, for a fast search."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE packages_package SET search_words = to_tsvector('simple', regexp_replace(text, "
            "'[^[:alnum:]]+', ' ', 'g')), name_grams = text_trigrams(text), search_text = lower(text) "
            "FROM (SELECT left(file_name || ' ' || %s || ' ' || coalesce((SELECT string_agg(path, ' ') "
            "FROM packages_packagefile WHERE package_id = %s), ''), %s) AS text "
            "FROM packages_package WHERE id = %s) searched WHERE id = %s",
            [caption_masked(package.caption), package.pk, SEARCH_TEXT_LIMIT, package.pk, package.pk],
        )
