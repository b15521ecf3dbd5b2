"""How lists come in pages: for pages, a paginator that stops counting; for the API, `?page_size=` (bounded),
cursors on the big lists, and `Link` headers beside `next` in the body."""

from django.conf import settings
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.utils.functional import cached_property
from drf_spectacular.plumbing import get_view_model
from rest_framework import pagination
from rest_framework.exceptions import ValidationError

# A page of 500 rows is still one quick answer; beyond that a client should follow `next`.
MAX_PAGE_SIZE = 500


class CappedPaginator(Paginator):
    """Counts at most `cap` + 1 rows; `capped` says there are more than `cap` (shown as "1,000+")."""

    def __init__(self, object_list, per_page, *, cap: int):
        super().__init__(object_list, per_page)
        self.cap = cap

    @cached_property
    def count(self) -> int:
        return self.object_list[: self.cap + 1].count()

    @property
    def capped(self) -> bool:
        return self.count > self.cap


def page_size_read(request, default: int) -> int:
    """`?page_size=` as a number from 1 to MAX_PAGE_SIZE; anything else is the client's mistake, said so."""
    raw = request.query_params.get("page_size")
    if raw is None or raw == "":
        return default
    size = int(raw) if raw.isascii() and raw.isdigit() else 0
    if not 1 <= size <= MAX_PAGE_SIZE:
        message = f"page_size must be a whole number from 1 to {MAX_PAGE_SIZE}; got {raw[:40]!r}."
        raise ValidationError({"page_size": [message]})
    return size


def link_header(next_url: str | None, previous_url: str | None) -> str:
    """RFC 8288: the neighbouring pages, for clients that read headers rather than bodies."""
    links = [f'<{url}>; rel="{rel}"' for url, rel in ((next_url, "next"), (previous_url, "prev")) if url]
    return ", ".join(links)


_PAGE_SIZE_HELP = f"How many results per page, from 1 to {MAX_PAGE_SIZE}."


class _Linked:
    """Adds the Link header to a paginated answer whose body already carries `next` and `previous`."""

    def get_paginated_response(self, data):
        response = super().get_paginated_response(data)
        if header := link_header(self.get_next_link(), self.get_previous_link()):
            response["Link"] = header
        return response

    def get_page_size(self, request):
        return page_size_read(request, self.page_size)


class NumberedPagination(_Linked, pagination.PageNumberPagination):
    """`?page=N`, with `count`, `next` and `previous`."""

    page_size_query_param = "page_size"
    page_size_query_description = _PAGE_SIZE_HELP
    max_page_size = MAX_PAGE_SIZE


class ApiPagination(_Linked, pagination.CursorPagination):
    """Every API list. The big ones (settings.API_CURSOR_LISTS: packages, the audit trail, runs) go by cursor,
    so rows arriving meanwhile neither shift nor repeat a page and no page costs an OFFSET, with `count` on the
    first page only. The rest, and any list asked for `?page=N` (clients written before cursors) or kept in an
    order a cursor cannot follow (an expression, such as a name without case), go by page number."""

    page_size_query_param = "page_size"
    page_size_query_description = _PAGE_SIZE_HELP
    max_page_size = MAX_PAGE_SIZE
    ordering = "-pk"
    _numbered: NumberedPagination | None = None
    _count: int | None = None

    def paginate_queryset(self, queryset, request, view=None):
        if self._by_number(queryset, request, view):
            self._numbered = NumberedPagination()
            return self._numbered.paginate_queryset(queryset, request, view)
        self.get_page_size(request)  # a bad page_size is refused before anything is counted
        if not request.query_params.get(self.cursor_query_param):
            self._count = queryset.count()
        return super().paginate_queryset(queryset, request, view)

    def _by_number(self, queryset, request, view) -> bool:
        if "page" in request.query_params or getattr(view, "action", "list") != "list":
            return True
        if not isinstance(queryset, QuerySet) or queryset.model._meta.label not in settings.API_CURSOR_LISTS:
            return True
        return not all(isinstance(key, str) for key in _order_of(queryset))

    def get_ordering(self, request, queryset, view):
        return _order_of(queryset) or ("-pk",)

    def get_paginated_response(self, data):
        if self._numbered is not None:
            return self._numbered.get_paginated_response(data)
        response = super().get_paginated_response(data)
        if self._count is not None:
            response.data = {"count": self._count, **response.data}
        return response

    def get_paginated_response_schema(self, schema):
        answer = super().get_paginated_response_schema(schema)
        count = {"type": "integer", "example": 123, "description": "Left out on a cursor's pages after the first."}
        answer["properties"] = {"count": count, **answer["properties"]}
        return answer

    def get_schema_operation_parameters(self, view):
        numbered = NumberedPagination().get_schema_operation_parameters(view)
        model = get_view_model(view)
        by_cursor = getattr(view, "action", "list") == "list" and model is not None
        if not by_cursor or model._meta.label not in settings.API_CURSOR_LISTS:
            return numbered
        page = {**numbered[0], "description": "A page number instead of a cursor, for clients that count pages."}
        return [*super().get_schema_operation_parameters(view), page]


def _order_of(queryset: QuerySet) -> tuple:
    if queryset.query.order_by:
        return tuple(queryset.query.order_by)
    return tuple(queryset.model._meta.ordering) if queryset.query.default_ordering else ()
