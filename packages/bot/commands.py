"""What the bot answers: each command and button press becomes replies (text, buttons) and deliveries, decided
here with the database; runner.py sends them. Button data (≤ 64 bytes): `p:<package>` a card, `d:<package>` send
it, `c:<collection>` a collection, `w:<collection>` send the whole collection, `s:<page>:<words>` a search page."""

from dataclasses import dataclass, field

from core.numbers import whole_number
from core.sizes import size_text
from packages.bot import services
from packages.models import BotPerson, Package

PAGE_SIZE = 5
LATEST_COUNT = 5
COLLECTION_SHOWN = 10
QUERY_BYTES_MAX = 48  # what of the words fits in a button's 64 bytes beside "s:<page>:"
HELP = (
    "I search the archive and send you its packages.\n"
    "/search <words> — find packages by name, caption or the files inside\n"
    "/latest — the newest packages\n"
    "/package <number> — a package's card\n"
    "/collection <number> — a collection, and sending all of it\n"
    "/subscribe <words> — be told when a matching package lands\n"
    "/subscriptions, /unsubscribe <words>\n"
    "/stop — end every subscription"
)
# Leaving is never refused: whoever the bot no longer lets in may still see and end their subscriptions.
ALWAYS_ANSWERED = ("/subscriptions", "/unsubscribe", "/stop")


@dataclass
class Reply:
    text: str
    buttons: list[list[tuple[str, bytes]]] | None = None
    edit_message_id: int | None = None  # edit this message of the bot's instead of sending a new one
    picture: bytes | None = None  # sent as a picture with the text as its caption (a card's preview)


@dataclass
class Answer:
    """Everything one message or press gets: a few words for the press, replies, deliveries to send."""

    press_text: str = ""
    replies: list[Reply] = field(default_factory=list)
    deliveries: list[services.Delivery] = field(default_factory=list)


def _button(package: Package) -> list[tuple[str, bytes]]:
    return [(f"{package.file_name[:40]} · {size_text(package.file_size)}", f"p:{package.pk}".encode())]


def _search(words: str, page: int, *, edit: int | None = None) -> Reply:
    words = words.encode()[:QUERY_BYTES_MAX].decode(errors="ignore").strip()
    page = max(page, 0)
    found = services.bot_search(words=words, offset=page * PAGE_SIZE, limit=PAGE_SIZE)
    if found.total and not found.packages:  # a page gone (fewer matches since): the last one
        page = (min(found.total, services.SEARCH_COUNTED) - 1) // PAGE_SIZE
        found = services.bot_search(words=words, offset=page * PAGE_SIZE, limit=PAGE_SIZE)
    if not found.packages:
        return Reply(f"Nothing in the archive matches “{words}”.", edit_message_id=edit)
    buttons = [_button(package) for package in found.packages]
    nav = []
    if page > 0:
        nav.append(("‹ Previous", f"s:{page - 1}:{words}".encode()))
    if found.more:
        nav.append(("Next ›", f"s:{page + 1}:{words}".encode()))
    if nav:
        buttons.append(nav)
    if found.total > services.SEARCH_COUNTED:
        text = f"More than {services.SEARCH_COUNTED} packages match “{words}” (page {page + 1}). Pick one:"
    else:
        pages = (found.total + PAGE_SIZE - 1) // PAGE_SIZE
        text = f"{found.total} packages match “{words}” (page {page + 1} of {pages}). Pick one:"
    return Reply(text, buttons, edit_message_id=edit)


def _preview(package: Package) -> bytes | None:
    """The card's picture: the package's chosen preview, when its file can be read."""
    if not package.preview_id:
        return None
    try:
        with package.preview.image.open("rb") as image:
            return image.read()
    except (OSError, ValueError):
        return None


def _card(package: Package) -> Reply:
    lines = [package.file_name, f"Size: {size_text(package.file_size)}", f"Files: {package.file_count}"]
    buttons = [[("Send me", f"d:{package.pk}".encode())]]
    if package.collection_id:
        lines.append(f"Collection: {package.collection.name}")
        buttons.append([(f"Collection: {package.collection.name[:40]}", f"c:{package.collection_id}".encode())])
    return Reply("\n".join(lines), buttons, picture=_preview(package))


def _package(pk: int) -> Package | None:
    return Package.objects.select_related("collection", "preview", "destination_chat").filter(pk=pk).first()


def _collection(collection_id: int) -> Reply:
    packages = services.bot_collection_packages(collection_id=collection_id)
    if not packages:
        return Reply("There is no such collection.")
    name = packages[0].collection.name
    buttons = [_button(package) for package in packages[:COLLECTION_SHOWN]]
    buttons.append([("Send the whole collection", f"w:{collection_id}".encode())])
    more = f" (the first {COLLECTION_SHOWN} shown)" if len(packages) > COLLECTION_SHOWN else ""
    return Reply(f"{name}: {len(packages)} packages{more}.", buttons)


def _deliver(person: BotPerson, packages: list[Package], answer: Answer) -> Answer:
    for package in packages:
        claimed = services.bot_delivery_claim(person=person, package=package)
        if isinstance(claimed, str):
            answer.replies.append(Reply(claimed))
            if "24 hours" in claimed:
                break
        else:
            answer.deliveries.append(claimed)
    return answer


def _command(text: str) -> tuple[str, str]:
    """ "/search@stash_bot dragon" → ("/search", "dragon")."""
    command, _, rest = text.strip().partition(" ")
    return command.split("@", 1)[0].lower(), rest.strip()


def answer_refused(*, person: BotPerson, text: str, refusal: str) -> Answer:
    """A person the bot's rules keep out is told why, unless they are leaving (ALWAYS_ANSWERED)."""
    if _command(text)[0] in ALWAYS_ANSWERED:
        return answer_message(person=person, text=text)
    return Answer(replies=[Reply(refusal)])


def answer_message(*, person: BotPerson, text: str) -> Answer:
    command, rest = _command(text)
    services.bot_activity_add(person=person, kind="command", text=text)
    if command == "/search":
        if not rest:
            return Answer(replies=[Reply("Say what to look for: /search dragon bust")])
        return Answer(replies=[_search(rest, 0)])
    if command == "/latest":
        latest = services.bot_latest(count=LATEST_COUNT)
        if not latest:
            return Answer(replies=[Reply("The archive has no packages yet.")])
        return Answer(replies=[Reply("The newest packages:", [_button(package) for package in latest])])
    if command == "/package":
        package = _package(whole_number(rest) or 0)
        return Answer(replies=[_card(package) if package else Reply("There is no such package.")])
    if command == "/collection":
        return Answer(replies=[_collection(whole_number(rest) or 0)])
    if command == "/subscribe":
        return Answer(replies=[Reply(services.bot_subscribe(person=person, words=rest))])
    if command == "/unsubscribe":
        return Answer(replies=[Reply(services.bot_unsubscribe(person=person, words=rest))])
    if command == "/stop":
        return Answer(replies=[Reply(services.bot_stop(person=person))])
    if command == "/subscriptions":
        words = [f"• {s.words}" for s in person.subscriptions.all()]
        text = (
            "You are subscribed to:\n" + "\n".join(words) if words else "You have no subscriptions. /subscribe <words>"
        )
        return Answer(replies=[Reply(text)])
    return Answer(replies=[Reply(HELP)])


def answer_press(*, person: BotPerson, message_id: int, data: bytes) -> Answer:
    kind, _, value = data.decode(errors="ignore").partition(":")
    if kind == "s":
        page, _, words = value.partition(":")
        return Answer(replies=[_search(words, whole_number(page) or 0, edit=message_id)])
    if kind == "p":
        package = _package(whole_number(value) or 0)
        return Answer(replies=[_card(package) if package else Reply("That package is gone.")])
    if kind == "c":
        return Answer(replies=[_collection(whole_number(value) or 0)])
    if kind == "d":
        package = _package(whole_number(value) or 0)
        if package is None:
            return Answer(press_text="That package is gone.")
        services.bot_activity_add(person=person, kind="command", text=f"Send me {package.file_name}")
        return _deliver(person, [package], Answer(press_text="Sending…"))
    if kind == "w":
        packages = [_package(p.pk) for p in services.bot_collection_packages(collection_id=whole_number(value) or 0)]
        services.bot_activity_add(person=person, kind="command", text=f"Send the whole collection {value}")
        return _deliver(person, packages, Answer(press_text="Sending the collection…"))
    return Answer(press_text="This button is no longer in use.")
