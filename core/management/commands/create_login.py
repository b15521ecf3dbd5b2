from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from core.models import LoginOrigin, Role
from core.people import login_add


class Command(BaseCommand):
    help = "Create a login for a person: an operator (changes things) or a viewer (looks). Prints the password."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--role", choices=Role.values, required=True)

    def handle(self, *args, username, role, **options):
        try:
            login, password = login_add(username=username, role=role, how=LoginOrigin.How.COMMAND)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        self.stdout.write(f"{role.title()} login created: {login.get_username()} / {password}")
