from django.contrib import admin

from accounts.models import AccountChat, Chat, TelegramAccount


class AccountChatInline(admin.TabularInline):
    model = AccountChat
    fields = ["chat", "can_post", "seen_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(TelegramAccount)
class TelegramAccountAdmin(admin.ModelAdmin):
    list_display = ["phone", "display_name", "auth_state", "is_premium", "is_active", "last_seen_at"]
    list_filter = ["auth_state", "is_premium", "is_active"]
    search_fields = ["phone", "display_name", "username"]
    # Login goes through the Accounts page; the session and code hash are never shown.
    exclude = ["session_sealed", "login_code_hash"]
    readonly_fields = [
        "telegram_user_id",
        "auth_state",
        "is_premium",
        "upload_limit_bytes",
        "last_seen_at",
        "last_error",
        "chats_refreshed_at",
        "created_at",
    ]
    inlines = [AccountChatInline]


@admin.register(Chat)
class ChatAdmin(admin.ModelAdmin):
    list_display = ["title", "username", "telegram_id", "type", "is_forum", "slow_mode_seconds", "updated_at"]
    list_filter = ["type", "is_forum"]
    search_fields = ["title", "username", "telegram_id"]
