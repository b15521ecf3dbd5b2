"""Reading a chat link as operators paste it: @name, t.me/name, t.me/+HASH, t.me/joinchat/HASH, tg:// links."""

import re
from urllib.parse import parse_qs, urlsplit

from telegram.records import ChatLink

# Telegram usernames: a letter first, then letters, digits or underscores; 4 to 32 characters in all.
USERNAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{3,31}")
INVITE_HASH = re.compile(r"[A-Za-z0-9_-]{8,64}")
HOSTS = ("t.me", "telegram.me", "telegram.dog")


class ChatLinkInvalid(ValueError):
    """The text is no @username or Telegram link; the message says what is accepted."""


def chat_link_parse(text: str) -> ChatLink:
    text = text.strip()
    if not text:
        raise ChatLinkInvalid("Paste a @username or a t.me link of the channel or group.")
    if text.startswith("tg://"):
        return _tg_link(text)
    if text.startswith("@"):
        return _username(text[1:], text)
    url = urlsplit(text if "://" in text else f"https://{text}")
    host = (url.hostname or "").lower().removeprefix("www.")
    if host not in HOSTS:
        if "/" not in text and "." not in text:
            return _username(text, text)
        raise ChatLinkInvalid(f"{text!r} is not a Telegram link; paste a @username or a link starting with t.me/.")
    parts = [part for part in url.path.split("/") if part]
    if not parts:
        raise ChatLinkInvalid(f"{text!r} names no chat; paste the whole link, e.g. t.me/channel_name.")
    if parts[0].startswith("+"):
        return _invite(parts[0][1:], text)
    if parts[0] == "joinchat" and len(parts) > 1:
        return _invite(parts[1], text)
    if parts[0] == "s" and len(parts) > 1:  # the web preview of a public channel
        return _username(parts[1], text)
    return _username(parts[0], text)


def _tg_link(text: str) -> ChatLink:
    url = urlsplit(text)
    query = parse_qs(url.query)
    if url.netloc == "join" and query.get("invite"):
        return _invite(query["invite"][0], text)
    if url.netloc == "resolve" and query.get("domain"):
        return _username(query["domain"][0], text)
    raise ChatLinkInvalid(f"{text!r} is not a join or resolve link; paste a @username or a t.me link instead.")


def _username(name: str, text: str) -> ChatLink:
    if not USERNAME.fullmatch(name):
        raise ChatLinkInvalid(
            f"{text!r} is not a valid @username: 4 to 32 letters, digits or underscores, starting with a letter."
        )
    return ChatLink(username=name)


def _invite(invite_hash: str, text: str) -> ChatLink:
    if not INVITE_HASH.fullmatch(invite_hash):
        raise ChatLinkInvalid(f"{text!r} is not a whole invite link; copy it again from Telegram.")
    return ChatLink(invite_hash=invite_hash)
