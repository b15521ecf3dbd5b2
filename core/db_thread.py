"""Database work from async code: each ORM step runs on the one thread that holds the connection."""

from asgiref.sync import sync_to_async


def in_db_thread(function):
    """`function` (sync, using the ORM) as an awaitable run on the thread-sensitive executor: never on the event
    loop, and always on the same connection, so the advisory locks and claims taken on it stay held."""
    return sync_to_async(function, thread_sensitive=True)
