#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    import django
    from django.core.management import execute_from_command_line

    django.setup()
    from core.audit import audit_command

    with audit_command(sys.argv):
        execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
