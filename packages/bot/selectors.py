"""Reads for the Bot page: the people who wrote to the bot, their subscriptions, what it sent and did."""

from datetime import timedelta

from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from packages.models import BotActivity, BotDelivery, BotPerson, BotSubscription

RECENT = 50


def bot_people() -> QuerySet[BotPerson]:
    since = timezone.now() - timedelta(days=1)
    return BotPerson.objects.annotate(
        sends_today=Count("deliveries", filter=Q(deliveries__created_at__gte=since)),
        subscription_count=Count("subscriptions", distinct=True),
    ).order_by("-last_seen_at")


def bot_subscriptions() -> QuerySet[BotSubscription]:
    return BotSubscription.objects.select_related("person").annotate(told=Count("notices")).order_by("-created_at")


def bot_deliveries() -> QuerySet[BotDelivery]:
    return BotDelivery.objects.select_related("person", "package")[:RECENT]


def bot_activity() -> QuerySet[BotActivity]:
    return BotActivity.objects.select_related("person")[:RECENT]
