"""What accounts tell the apps above them, which accounts may not import."""

from django.dispatch import Signal

# Sent (sender=TelegramAccount, account=…) inside the transaction that stored an account's chats, so that an
# app above can keep its own rows in step (ingestion makes a Channel for each new channel or supergroup).
chats_refreshed = Signal()
