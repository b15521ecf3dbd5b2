"""The Redis broker transport, kombu's own, with one failure of a lost connection made harmless (config/celery_app.py
makes it what redis:// URLs name).

When Redis drops the connection while tasks run (acknowledged late), Celery closes the channel and kombu gives
their messages back to Redis; the transport's client is already gone then, so kombu raises AttributeError
("'NoneType' object has no attribute 'hostname'"). Celery takes that for an unrecoverable error: the worker
stops taking tasks and ends once its running task is over, instead of reconnecting. Redis could not take the
messages back at that moment anyway: they stay in its unacknowledged set (restored after `visibility_timeout`, or
acknowledged by the task that finishes), and the runs' claims in PostgreSQL cover a Redis that lost them.
"""

import logging

from kombu.transport import redis

logger = logging.getLogger(__name__)


class QoS(redis.QoS):
    def restore_unacked(self, client=None):
        if client is None and self.channel.connection.client is None:
            logger.warning(
                "Redis went away: %s running task(s) left to Redis's unacknowledged set.", len(self._delivered)
            )
            self._delivered.clear()
            return
        super().restore_unacked(client)


class Channel(redis.Channel):
    QoS = QoS


class Transport(redis.Transport):
    Channel = Channel
