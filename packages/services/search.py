"""The search index of a package: the words of its name and of its listed paths."""

from django.db import connection

from packages.models import Package

# A tsvector holds at most 1 MB: the words of this much of a listing are searchable.
SEARCH_TEXT_LIMIT = 200_000


def package_search_words_update(*, package: Package) -> None:
    """Index the words of the package's name and listed paths, and their three-letter pieces (substring
    search), in one row, for a fast search."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE packages_package SET search_words = to_tsvector('simple', regexp_replace(text, "
            "'[^[:alnum:]]+', ' ', 'g')), name_grams = text_trigrams(text), search_text = lower(text) "
            "FROM (SELECT left(file_name || ' ' || coalesce((SELECT string_agg(path, ' ') "
            "FROM packages_packagefile WHERE package_id = %s), ''), %s) AS text "
            "FROM packages_package WHERE id = %s) searched WHERE id = %s",
            [package.pk, SEARCH_TEXT_LIMIT, package.pk, package.pk],
        )
