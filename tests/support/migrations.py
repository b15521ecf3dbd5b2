"""Migration tests: move the test database to a point in the migration graph and back to the latest."""

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate(targets):
    """Migrate to `targets` ([(app, migration), ...]); the apps as they were there, for historical models."""
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state(targets).apps


def latest():
    """Every app's last migration: where a test that went back must leave the database."""
    return MigrationExecutor(connection).loader.graph.leaf_nodes()
