"""Settings shared by every environment, one module per concern; everything comes from the environment.

test.py and production.py start from this module; the parts import each other downward only
(environment first, schedule last).
"""

from config.settings.api import *  # noqa: F403
from config.settings.celery import *  # noqa: F403
from config.settings.environment import *  # noqa: F403
from config.settings.ingestion import *  # noqa: F403
from config.settings.operations import *  # noqa: F403
from config.settings.reminders import *  # noqa: F403
from config.settings.runs import *  # noqa: F403
from config.settings.schedule import *  # noqa: F403
from config.settings.security import *  # noqa: F403
from config.settings.storage import *  # noqa: F403
from config.settings.telegram import *  # noqa: F403
from config.settings.web import *  # noqa: F403
