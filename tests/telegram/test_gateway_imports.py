"""The production gateway does not load the sandbox server's code."""

import os
import subprocess
import sys

import pytest
from django.conf import settings


@pytest.mark.processes  # a fresh Python process, to see what one import loads
def test_importing_the_gateway_does_not_load_the_sandbox():
    code = (
        "import django, sys; django.setup(); import telegram.gateway; "
        "print(sorted(name for name in sys.modules if name.startswith('telegram.sandbox')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=settings.BASE_DIR,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout
