"""A paginator that stops counting: a common word matches most of 100,000 packages, and counting them all
costs more than the page itself."""

from django.core.paginator import Paginator
from django.utils.functional import cached_property


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
