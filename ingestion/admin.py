from django.contrib import admin

from ingestion.models import AccountChannelMap, Channel, IngestionRun, SkippedPackage, TopicProgress


class AccountChannelMapInline(admin.TabularInline):
    model = AccountChannelMap
    fields = ["account", "role", "last_processed_message_id"]
    extra = 0


@admin.register(Channel)
class ChannelAdmin(admin.ModelAdmin):
    list_display = ["title", "telegram_id", "is_active", "is_destination", "category", "expiration_days"]
    list_filter = ["is_active", "is_destination", "chat__type"]
    search_fields = ["chat__title", "chat__telegram_id", "category"]
    list_select_related = ["chat"]
    readonly_fields = ["chat", "is_destination", "created_at"]  # the destination is chosen on the Channels page
    inlines = [AccountChannelMapInline]


@admin.register(TopicProgress)
class TopicProgressAdmin(admin.ModelAdmin):
    list_display = ["title", "topic_id", "map", "fetch_enabled", "last_processed_message_id"]
    list_filter = ["fetch_enabled"]
    search_fields = ["title", "map__channel__chat__title"]
    list_select_related = ["map__account", "map__channel__chat"]


@admin.register(IngestionRun)
class IngestionRunAdmin(admin.ModelAdmin):
    list_display = ["pk", "account", "trigger", "status", "ingested", "skipped", "duplicates", "created_at"]
    list_filter = ["status", "trigger"]
    list_select_related = ["account"]
    date_hierarchy = "created_at"
    # Runs are written by workers only; the admin is for looking.
    readonly_fields = [*(field.name for field in IngestionRun._meta.fields), "packages"]

    def has_add_permission(self, request):
        return False


@admin.register(SkippedPackage)
class SkippedPackageAdmin(admin.ModelAdmin):
    list_display = ["file_name", "reason", "channel", "message_id", "attempt_count", "updated_at"]
    list_filter = ["reason"]
    search_fields = ["file_name", "error_message"]
    list_select_related = ["channel__chat"]
    readonly_fields = [field.name for field in SkippedPackage._meta.fields]

    def has_add_permission(self, request):
        return False
