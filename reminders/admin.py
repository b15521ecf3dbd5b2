from django.contrib import admin

from reminders.models import MediaFile, Reminder, ReminderPart, ReminderRun, ReminderRunTarget, ReminderTarget


class ReminderPartInline(admin.TabularInline):
    model = ReminderPart
    extra = 0


class ReminderTargetInline(admin.TabularInline):
    model = ReminderTarget
    raw_id_fields = ["chat"]
    extra = 0


@admin.register(Reminder)
class ReminderAdmin(admin.ModelAdmin):
    list_display = ["name", "account", "timezone", "schedule_crontab", "schedule_at", "enabled", "auto_resume"]
    list_filter = ["enabled", "auto_resume", "account"]
    search_fields = ["name"]
    # Edits go through the services (they keep the beat schedule in step), so the admin only reads.
    readonly_fields = ["periodic_task", "created_at", "updated_at"]
    inlines = [ReminderPartInline, ReminderTargetInline]

    def has_change_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request):
        return False


class ReminderRunTargetInline(admin.TabularInline):
    model = ReminderRunTarget
    fields = ["chat", "topic_id", "status", "attempts", "latency_ms", "error", "finished_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(ReminderRun)
class ReminderRunAdmin(admin.ModelAdmin):
    list_display = [
        "pk",
        "reminder",
        "account",
        "status",
        "sent",
        "failed",
        "skipped",
        "pending",
        "total",
        "created_at",
    ]
    list_filter = ["status", "trigger"]
    readonly_fields = [field.name for field in ReminderRun._meta.fields]
    inlines = [ReminderRunTargetInline]

    def has_add_permission(self, request):
        return False


@admin.register(MediaFile)
class MediaFileAdmin(admin.ModelAdmin):
    list_display = ["name", "mime_type", "size", "sha256", "created_at"]
    search_fields = ["name", "sha256"]
    readonly_fields = ["size", "mime_type", "sha256", "created_at"]
