"""The members' bot: search, browse, receive and subscribe from Telegram (`manage.py run_bot`)."""
