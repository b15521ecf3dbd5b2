"""Which documents are archives, and which volumes belong to one archive set.

Volumes of one set are grouped by their normalized base name:
`name.zip`, `name.zip.001`…, `name.z01`…+`name.zip`, `name.part1.rar`…,
`name.r00`…+`name.rar`, `name.7z`, `name.7z.001`…; model documents are
single-file packages.
"""

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

MODEL_EXTENSIONS = frozenset(
    {"stl", "obj", "3mf", "step", "stp", "blend", "gcode", "pdf", "fbx", "ply", "lys", "chitubox", "ctb", "amf"}
)

ZIP, RAR, SEVEN_ZIP, MODEL = "zip", "rar", "7z", "model"

# (regex, archive type, scheme); the first match wins, so specific forms come first.
_PATTERNS = [
    (re.compile(r"^(?P<base>.+)\.(?P<ext>zip|7z|rar)\.(?P<index>\d{3})$", re.I), None, "numbered"),
    (re.compile(r"^(?P<base>.+)\.part(?P<index>\d{1,3})\.rar$", re.I), RAR, "part"),
    (re.compile(r"^(?P<base>.+)\.z(?P<index>\d{2,3})$", re.I), ZIP, "spanned"),
    (re.compile(r"^(?P<base>.+)\.r(?P<index>\d{2,3})$", re.I), RAR, "old-rar"),
    (re.compile(r"^(?P<base>.+)\.(?P<ext>zip|7z|rar)$", re.I), None, "single"),
]


@dataclass(frozen=True)
class Volume:
    """One document's place in an archive set."""

    file_name: str
    base: str  # normalized base name: what groups volumes
    archive_type: str
    scheme: str  # single, numbered, part, spanned, old-rar, model
    order: int  # position inside the set once complete

    @property
    def key(self) -> tuple[str, str]:
        return (self.archive_type, self.base)


def classify(file_name: str) -> Volume | None:
    """The volume a file name describes, or None for a document that is not ingested."""
    name = file_name.strip()
    for pattern, archive_type, scheme in _PATTERNS:
        match = pattern.match(name)
        if not match:
            continue
        kind = archive_type or _type_of(match.group("ext"))
        base = match.group("base").strip().lower()
        if scheme == "single":
            # A lone .zip closes a spanned set (order last); a lone .rar opens an old-style one.
            order = {ZIP: 10_000, RAR: -1, SEVEN_ZIP: 0}[kind]
            return Volume(name, base, kind, scheme, order)
        return Volume(name, base, kind, scheme, int(match.group("index")))
    extension = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if extension in MODEL_EXTENSIONS:
        return Volume(name, name.lower(), MODEL, "model", 0)
    return None


def _type_of(extension: str) -> str:
    return {"zip": ZIP, "7z": SEVEN_ZIP, "rar": RAR}[extension.lower()]


@dataclass
class ArchiveSet:
    """Volumes (with their message ids) that form one package."""

    archive_type: str
    base: str
    members: list[tuple[Volume, object]] = field(default_factory=list)
    missing: str = ""  # why the set is incomplete, empty when complete
    whole_by: str = ""  # what told that a multi-volume set was whole (its bytes, or time), shown on its package

    @property
    def volumes(self) -> list[Volume]:
        return [volume for volume, _ in self.members]

    @property
    def items(self) -> list:
        return [item for _, item in self.members]

    @property
    def file_name(self) -> str:
        """The name the operator knows the set by: the first volume's."""
        return self.volumes[0].file_name

    @property
    def is_multipart(self) -> bool:
        return len(self.members) > 1

    @property
    def is_complete(self) -> bool:
        return not self.missing


def group_sets(items: Iterable, *, name_of=lambda item: item.document.name, topic_of=lambda item: None):
    """Group items (document messages) into archive sets, in order of their first item.

    `items` must be in ascending message order. Items that are not archives or
    models are left out.
    """
    groups: dict[tuple, list[tuple[Volume, object]]] = defaultdict(list)
    first_seen: dict[tuple, int] = {}
    for position, item in enumerate(items):
        volume = classify(name_of(item))
        if volume is None:
            continue
        family = _family(volume)
        if volume.archive_type == MODEL:
            key = (topic_of(item), MODEL, volume.base, position)
        else:
            key = (topic_of(item), volume.archive_type, volume.base, family)
        groups[key].append((volume, item))
        first_seen.setdefault(key, position)
    sets = []
    for key in sorted(groups, key=first_seen.__getitem__):
        members = _dedupe_names(groups[key])
        members.sort(key=lambda member: member[0].order)
        archive_set = ArchiveSet(archive_type=key[1], base=key[2], members=members)
        archive_set.missing = _missing(archive_set)
        sets.append(archive_set)
    return sets


def _family(volume: Volume) -> str:
    """Schemes that combine into one set share a family."""
    if volume.scheme in {"spanned"} or (volume.scheme == "single" and volume.archive_type == ZIP):
        return "zip-spanned"
    if volume.scheme in {"old-rar"} or (volume.scheme == "single" and volume.archive_type == RAR):
        return "rar-old"
    if volume.scheme == "single":
        return "single"
    return volume.scheme


def _dedupe_names(members: list[tuple[Volume, object]]) -> list[tuple[Volume, object]]:
    # The same volume posted twice: keep the first copy.
    seen, kept = set(), []
    for volume, item in members:
        if volume.file_name.lower() in seen:
            continue
        seen.add(volume.file_name.lower())
        kept.append((volume, item))
    return kept


def _missing(archive_set: ArchiveSet) -> str:
    volumes = archive_set.volumes
    schemes = {volume.scheme for volume in volumes}
    if schemes <= {"single", "model"}:
        return ""
    if schemes == {"numbered"} or schemes == {"part"}:
        return _gaps([volume.order for volume in volumes], start=1)
    if "spanned" in schemes or (archive_set.archive_type == ZIP and schemes == {"single"}):
        if not any(volume.scheme == "single" for volume in volumes):
            return f"the closing volume {archive_set.base}.zip has not been posted"
        return _gaps([volume.order for volume in volumes if volume.scheme == "spanned"], start=1)
    if "old-rar" in schemes:
        if not any(volume.scheme == "single" for volume in volumes):
            return f"the first volume {archive_set.base}.rar has not been posted"
        return _gaps([volume.order for volume in volumes if volume.scheme == "old-rar"], start=0)
    return ""


def _gaps(orders: list[int], *, start: int) -> str:
    present = sorted(orders)
    expected = list(range(start, start + len(present)))
    if present == expected:
        return ""
    missing = sorted(set(range(start, max(present) + 1)) - set(present))
    shown = ", ".join(str(number) for number in missing[:5])
    return f"volume {shown} missing" if len(missing) == 1 else f"volumes {shown} missing"


def set_may_grow(archive_set: ArchiveSet, *, sizes: list[int]) -> bool:
    """Whether more volumes may still follow: a numbered set (.001…, .partN.rar, .r00…) whose last volume is
    as big as its first, so it was not cut short the way a last volume is. A spanned zip is closed by
    its .zip; a single archive or model never grows."""
    schemes = {volume.scheme for volume in archive_set.volumes}
    if not schemes & {"numbered", "part", "old-rar"}:
        return False
    if len(sizes) == 1:
        return True
    return sizes[-1] >= sizes[0]


def same_family(archive_set: ArchiveSet, file_name: str) -> bool:
    """Whether `file_name` is a volume of the same set (by name), wherever it was posted."""
    volume = classify(file_name)
    return (
        volume is not None
        and volume.archive_type == archive_set.archive_type
        and volume.base == archive_set.base
        and _family(volume) == _family(archive_set.volumes[0])
    )
