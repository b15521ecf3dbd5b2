from django.contrib import admin
from django.contrib.auth.decorators import login_required
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

urlpatterns = [
    path("", include("operations.urls")),
    path("", include("core.urls")),
    path("accounts/", include("accounts.urls")),
    path("", include("ingestion.urls")),
    path("packages/", include("packages.urls")),
    path("bot/", include("packages.bot.urls")),
    path("", include("reminders.urls")),
    path("admin/", admin.site.urls),
    path("api/", include("config.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # A person on the docs page without a login is sent to log in, not shown a bare 403.
    path("api/docs/", login_required(SpectacularSwaggerSplitView.as_view(url_name="api-schema")), name="api-docs"),
]

# With DEBUG off: JSON for /api/, the console's own error page elsewhere.
handler400 = "core.views.bad_request"
handler403 = "core.views.permission_denied"
handler404 = "core.views.not_found"
handler500 = "core.views.server_error"
