import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError

from core.roles import OPERATORS_GROUP


class Command(BaseCommand):
    help = "Create a login for a person: an operator (changes things) or a viewer (looks). Prints the password."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--role", choices=["operator", "viewer"], required=True)

    def handle(self, *args, username, role, **options):
        users = get_user_model()
        if users.objects.filter(username=username).exists():
            raise CommandError(f"A login named {username!r} already exists; pick another name.")
        password = secrets.token_urlsafe(12)
        user = users.objects.create_user(username=username, password=password)
        if role == "operator":
            user.groups.add(Group.objects.get_or_create(name=OPERATORS_GROUP)[0])
        self.stdout.write(f"{role.title()} login created: {username} / {password}")
