import logging
import os

from django.core.wsgi import get_wsgi_application

from core.logging import SecretsInAddressesFilter

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
application = get_wsgi_application()

# gunicorn's access log names every address, an invite link's secret too; its own handlers stay as they are.
logging.getLogger("gunicorn.access").addFilter(SecretsInAddressesFilter())
