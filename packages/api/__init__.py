"""The packages API, one module per resource: packages (search and filters over file names and the paths inside
archives, one package with its listing and previews, creator and tags edited one by one or in bulk, the answer to
"likely the same as …", download links), one file's link out of its archive, collections (create, rename, merge,
dissolve) and sends to Telegram. The URLs wire these."""

from packages.api.collections import CollectionViewSet
from packages.api.file_links import PackageFileLinkView
from packages.api.packages import PackageViewSet
from packages.api.sends import PackageSendViewSet

__all__ = ["CollectionViewSet", "PackageFileLinkView", "PackageSendViewSet", "PackageViewSet"]
