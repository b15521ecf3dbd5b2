"""The REST API and its OpenAPI schema."""

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # First: DRF answers a refused login with the first class's challenge, so a bad token gets a 401.
        "core.tokens.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "core.tokens.TokenScopeAllows",
        "core.roles.IsOperatorOrReadOnly",
    ],
    # `?page_size=` up to 500, Link headers, cursors on the lists named in API_CURSOR_LISTS.
    "DEFAULT_PAGINATION_CLASS": "core.pagination.ApiPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "core.api.exception_handler",
}
# The big lists, paged by cursor (core/pagination.py); `?page=N` still pages them by number.
API_CURSOR_LISTS = {"packages.Package", "core.AuditEntry", "ingestion.IngestionRun", "reminders.ReminderRun"}
SPECTACULAR_SETTINGS = {
    "TITLE": "Stashcast API",
    "DESCRIPTION": "Telegram archive ingestion and paced broadcast reminders.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        # Every kind of run shares one status vocabulary.
        "RunStatusEnum": "core.models.RunStatus",
        "GroupingRuleEnum": "packages.models.GroupingRule",
        "RepackDecisionEnum": "packages.models.RepackDecision",
        # Run and run-target statuses are both `status`: each gets its own name.
        "ReminderRunTargetStatusEnum": "reminders.models.TargetStatus",
    },
    # Swagger UI and ReDoc from the drf-spectacular-sidecar package's static files, not from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        # Link headers on lists, ETag and 304 on detail reads (core/api/etags.py).
        "core.api.etags.schema_conventions",
    ],
}
