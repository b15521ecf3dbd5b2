"""Operator input for the Packages page: the filters, and creator and tags edited one by one or in bulk."""

from django import forms

from packages.selectors import SORTS, PackageFilters

MB = 1024 * 1024


def tags_split(text: str) -> list[str]:
    """Tags as typed in one box: separated by commas."""
    return [tag for tag in (part.strip() for part in text.split(",")) if tag]


class PackageFilterForm(forms.Form):
    q = forms.CharField(label="Search", required=False, max_length=200)
    locked = forms.BooleanField(required=False)
    creator = forms.CharField(required=False, max_length=255)
    tag = forms.CharField(required=False, max_length=100)
    channel = forms.IntegerField(required=False, min_value=1)
    type = forms.CharField(required=False, max_length=10)
    size_min = forms.DecimalField(label="From (MB)", required=False, min_value=0, decimal_places=3)
    size_max = forms.DecimalField(label="To (MB)", required=False, min_value=0, decimal_places=3)
    added_from = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    added_to = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    sort = forms.ChoiceField(
        required=False,
        choices=[
            ("", "Newest first"),  # the default: not in the URL
            ("oldest", "Oldest first"),
            ("name", "Name"),
            ("largest", "Largest first"),
            ("smallest", "Smallest first"),
        ],
    )
    repacks = forms.BooleanField(label="Likely repacks only", required=False)

    def clean(self):
        cleaned = super().clean()
        low, high = cleaned.get("size_min"), cleaned.get("size_max")
        # A range the wrong way round narrows nothing: neither end applies until it is fixed.
        if low is not None and high is not None and low > high:
            self.add_error("size_max", "The largest size is below the smallest; swap them.")
            cleaned.pop("size_min")
        start, end = cleaned.get("added_from"), cleaned.get("added_to")
        if start and end and start > end:
            self.add_error("added_to", "This date is before the first one; swap them.")
            cleaned.pop("added_from")
        return cleaned

    def filters(self) -> PackageFilters:
        """The valid filters (a field with an error does not narrow the list; the form shows why)."""
        data = self.cleaned_data if hasattr(self, "cleaned_data") else {}
        valid = {name: value for name, value in data.items() if name not in self.errors}

        def megabytes(value):
            return None if value is None else int(value * MB)

        return PackageFilters(
            query=(valid.get("q") or "").strip(),
            needs_password=bool(valid.get("locked")),
            creator=(valid.get("creator") or "").strip(),
            tag=(valid.get("tag") or "").strip(),
            channel=valid.get("channel"),
            archive_type=(valid.get("type") or "").strip(),
            size_min=megabytes(valid.get("size_min")),
            size_max=megabytes(valid.get("size_max")),
            added_from=valid.get("added_from"),
            added_to=valid.get("added_to"),
            sort=valid.get("sort") if valid.get("sort") in SORTS else "newest",
            likely_repacks=bool(valid.get("repacks")),
        )


class PackageEditForm(forms.Form):
    creator = forms.CharField(required=False, max_length=255)
    tags = forms.CharField(required=False, help_text="Separated by commas.")

    def clean_tags(self) -> list[str]:
        return tags_split(self.cleaned_data["tags"])


class PackageBulkEditForm(forms.Form):
    packages = forms.TypedMultipleChoiceField(coerce=int, error_messages={"required": "Tick at least one package."})
    creator = forms.CharField(required=False, max_length=255, help_text="Empty leaves each creator as it is.")
    add_tags = forms.CharField(required=False)
    remove_tags = forms.CharField(required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Any id is a choice: ids of packages gone meanwhile are simply not edited.
        self.fields["packages"].valid_value = lambda value: str(value).isdecimal()

    def clean_add_tags(self) -> list[str]:
        return tags_split(self.cleaned_data["add_tags"])

    def clean_remove_tags(self) -> list[str]:
        return tags_split(self.cleaned_data["remove_tags"])

    def clean(self):
        cleaned = super().clean()
        if (
            not (cleaned.get("creator") or "").strip()
            and not cleaned.get("add_tags")
            and not cleaned.get("remove_tags")
        ):
            raise forms.ValidationError("Give a creator, or tags to add or remove.")
        return cleaned


class RepackDecisionForm(forms.Form):
    decision = forms.ChoiceField(choices=[("kept", "Keep both"), ("skip_copies", "Skip future copies")])
