"""What accounts tell the apps above them, which accounts may not import."""

from django.dispatch import Signal

# Sent (sender=TelegramAccount, account=…) inside the transaction that stored an account's chats, so that an
# app above can keep its own rows in step (ingestion makes a Channel for each new channel or supergroup).
chats_refreshed = Signal()

# Sent (sender=TelegramAccount, account=…, reason=…) when an account starts resting (quarantine): apps above pause
# what they do through it (reminders pause every run of it).
account_rest_started = Signal()
# Sent (sender=TelegramAccount, account=…, resume_runs=…) when a rest ends, by its time or by the operator.
account_rest_ended = Signal()
# Sent (sender=TelegramAccount, account=…, stopped=…) when the operator stops or allows the account's sending.
account_sending_changed = Signal()
