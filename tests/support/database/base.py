"""The test database: PostgreSQL as in production, emptied after each transactional test by DELETE, not TRUNCATE.

TRUNCATE gives every table, index and TOAST table a new file: hundreds of files made and dropped after each such
test, which made file creation the kernel's busiest work in a `make test-fast`. DELETE empties the tables without
new files; foreign keys are deferred, so the order does not matter. Content types and permissions, which
migrations make and no test changes, stay: emptied, the flush's post_migrate signal made them all again."""

from django.db.backends.postgresql import base, operations

KEPT = {"django_content_type", "auth_permission"}


class DatabaseOperations(operations.DatabaseOperations):
    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if not tables or reset_sequences or allow_cascade:  # what only TRUNCATE does: restart ids, cascade
            return super().sql_flush(style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        return ["SET CONSTRAINTS ALL DEFERRED"] + [
            f"{style.SQL_KEYWORD('DELETE FROM')} {style.SQL_FIELD(self.quote_name(table))};"
            for table in tables
            if table not in KEPT
        ]


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
