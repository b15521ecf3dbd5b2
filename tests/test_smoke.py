def test_database_is_postgres(db):
    from django.db import connection

    assert connection.vendor == "postgresql"
