import os

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create the operator login from STASHCAST_ADMIN_USER / STASHCAST_ADMIN_PASSWORD the first time."

    def handle(self, *args, **options):
        username = os.environ.get("STASHCAST_ADMIN_USER", "admin")
        password = os.environ.get("STASHCAST_ADMIN_PASSWORD")
        if not password:
            self.stderr.write("STASHCAST_ADMIN_PASSWORD is not set; no operator created.")
            return
        users = get_user_model()
        if users.objects.filter(username=username).exists():
            self.stdout.write(f"  Operator login: {username} (password kept in var/secret.env)")
            return
        users.objects.create_superuser(username=username, email="", password=password)
        self.stdout.write(f"  Operator login created: {username} / {password}")
