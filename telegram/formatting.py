"""A message's text as written (plain, Markdown or HTML) made into what Telegram takes: the text and its
formatting entities, with Telethon's parsers, checked against Telegram's limits counted the way Telegram
counts (UTF-16 code units). Refusals say where the problem is, as line and column of the text as written.

Markdown is Telethon's: **bold**, __italic__, ~~strike~~, ||spoiler||, `code`, ```pre```, [text](url).
HTML is Telegram's: b/strong, i/em, u/ins, s/strike/del, tg-spoiler (or span class="tg-spoiler"), code, pre,
a href, blockquote, tg-emoji emoji-id.
"""

import re
from dataclasses import dataclass
from html import escape

from telethon.extensions import html as telethon_html
from telethon.extensions import markdown as telethon_markdown
from telethon.helpers import add_surrogate, del_surrogate, strip_text
from telethon.tl import types

from telegram.records import CAPTION_MAX, ENTITIES_MAX, PREMIUM_CAPTION_MAX, TEXT_MAX, MessageEntity, utf16_units

PLAIN, MARKDOWN, HTML = "plain", "markdown", "html"
FORMATS = (PLAIN, MARKDOWN, HTML)

_MARKDOWN_DELIMITERS = {**telethon_markdown.DEFAULT_DELIMITERS, "||": types.MessageEntitySpoiler}
_MARKDOWN_DELIMITER_RE = re.compile("|".join(re.escape(d) for d in sorted(_MARKDOWN_DELIMITERS, key=len, reverse=True)))
_HTML_ALIASES = {"ins": "u", "strike": "s"}
_HTML_TAGS = {"b", "strong", "i", "em", "u", "s", "del", "tg-spoiler", "span", "code", "pre", "a", "blockquote"}
_HTML_TAGS |= {"tg-emoji", *_HTML_ALIASES}

# TL entity class <-> the record's type name
_ENTITY_TYPES = {
    types.MessageEntityBold: "bold",
    types.MessageEntityItalic: "italic",
    types.MessageEntityUnderline: "underline",
    types.MessageEntityStrike: "strike",
    types.MessageEntitySpoiler: "spoiler",
    types.MessageEntityCode: "code",
    types.MessageEntityPre: "pre",
    types.MessageEntityTextUrl: "text_url",
    types.MessageEntityUrl: "url",
    types.MessageEntityEmail: "email",
    types.MessageEntityMention: "mention",
    types.MessageEntityMentionName: "mention_name",
    types.MessageEntityBlockquote: "blockquote",
    types.MessageEntityCustomEmoji: "custom_emoji",
}
_ENTITY_CLASSES = {name: cls for cls, name in _ENTITY_TYPES.items()}


class FormatError(ValueError):
    """Text Telegram would refuse or show wrong; the message says where and what to change."""


@dataclass(frozen=True)
class FormattedText:
    text: str
    entities: tuple[MessageEntity, ...] = ()

    @property
    def length(self) -> int:
        return utf16_units(self.text)


def text_format(text: str, *, format: str = PLAIN, caption: bool = False, premium: bool = False) -> FormattedText:
    """Parse text written as `format` and check it against Telegram's limits for a message (or a media caption,
    longer on Premium); custom emoji only on Premium. Raises FormatError saying where the problem is."""
    if format not in FORMATS:
        raise FormatError(f"Unknown format “{format}”: choose one of {', '.join(FORMATS)}.")
    if format == MARKDOWN:
        _markdown_check(text)
        parsed, tl_entities = telethon_markdown.parse(text, delimiters=_MARKDOWN_DELIMITERS)
    elif format == HTML:
        parsed, tl_entities = _html_parse(text)
    else:
        parsed, tl_entities = text, []
    formatted = FormattedText(text=parsed, entities=tuple(entity_from_tl(e) for e in tl_entities))
    _limits_check(formatted, caption=caption, premium=premium)
    return formatted


def _place(text: str, index: int) -> str:
    """'line L, column C (near “…”)' of a character index, 1-based."""
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    near = text[index : index + 20].split("\n", 1)[0]
    return f"line {line}, column {column}" + (f" (near “{near}”)" if near.strip() else "")


def _markdown_check(text: str) -> None:
    """Find a delimiter Telethon's parser would leave in the text (opened, never closed), walking the text the
    way the parser does: it would arrive with its asterisks."""
    closers: dict[int, str] = {}
    i = 0
    while i < len(text):
        if i in closers:
            i += len(closers.pop(i))
            continue
        match = _MARKDOWN_DELIMITER_RE.match(text, i)
        if match is None:
            link = telethon_markdown.DEFAULT_URL_RE.match(text, i)
            i = link.end() if link else i + 1
            continue
        delimiter = match.group(0)
        end = text.find(delimiter, i + len(delimiter) + 1)
        while end in closers:
            end = text.find(delimiter, end + len(delimiter))
        if end == -1:
            raise FormatError(
                f"Markdown: “{delimiter}” at {_place(text, i)} is opened but never closed; close it or write it"
                f" as plain text."
            )
        if _MARKDOWN_DELIMITERS[delimiter] in (types.MessageEntityCode, types.MessageEntityPre):
            i = end + len(delimiter)  # nothing is formatted inside code
        else:
            closers[end] = delimiter
            i += len(delimiter)


class _HtmlParser(telethon_html.HTMLToTelegramParser):
    """Telethon's HTML parser, with Telegram's spoiler and tag aliases, refusing what Telegram's HTML refuses
    (an unknown tag, a tag closed out of order or never) with its place."""

    def __init__(self, source: str):
        super().__init__()
        self.source = source  # as fed: surrogated, so offsets count UTF-16 units
        self.opened: list[tuple[str, tuple[int, int]]] = []

    def _where(self) -> str:
        line, offset = self.getpos()
        lines = self.source.split("\n")
        index = sum(len(text) + 1 for text in lines[: line - 1]) + offset
        return _place(del_surrogate(self.source), len(del_surrogate(self.source[:index])))

    def handle_starttag(self, tag, attrs):
        if tag not in _HTML_TAGS:
            raise FormatError(
                f"HTML: <{tag}> at {self._where()} is not one of Telegram's tags (b, i, u, s, tg-spoiler, code,"
                f" pre, a, blockquote, tg-emoji); remove it."
            )
        where = self._where()
        tag = _HTML_ALIASES.get(tag, tag)
        if tag == "span":
            if ("class", "tg-spoiler") not in attrs:
                raise FormatError(f'HTML: <span> at {where} needs class="tg-spoiler"; Telegram knows no other.')
            tag = "tg-spoiler"
        self.opened.append((tag, where))
        if tag == "tg-spoiler":
            self._open_tags.appendleft(tag)
            self._open_tags_meta.appendleft(None)
            if tag not in self._building_entities:
                self._building_entities[tag] = types.MessageEntitySpoiler(offset=len(self.text), length=0)
            return
        super().handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        tag = _HTML_ALIASES.get(tag, "tg-spoiler" if tag == "span" else tag)
        if not self.opened or self.opened[-1][0] != tag:
            expected = f"</{self.opened[-1][0]}> first" if self.opened else "nothing: no tag is open"
            raise FormatError(f"HTML: </{tag}> at {self._where()} closes out of order; expected {expected}.")
        self.opened.pop()
        super().handle_endtag(tag)


def _html_parse(source: str) -> tuple[str, list]:
    surrogated = add_surrogate(source)
    parser = _HtmlParser(surrogated)
    parser.feed(surrogated)
    parser.close()
    if parser.opened:
        tag, where = parser.opened[-1]
        raise FormatError(f"HTML: <{tag}> at {where} is never closed; add </{tag}>.")
    text = strip_text(parser.text, parser.entities)
    parser.entities.sort(key=lambda entity: entity.offset)
    return del_surrogate(text), parser.entities


def _limits_check(formatted: FormattedText, *, caption: bool, premium: bool) -> None:
    limit = (PREMIUM_CAPTION_MAX if premium else CAPTION_MAX) if caption else TEXT_MAX
    what = "caption" if caption else "text"
    if formatted.length > limit:
        units, index = 0, 0
        for index, char in enumerate(formatted.text):  # noqa: B007 (the index where the limit is passed)
            units += utf16_units(char)
            if units > limit:
                break
        raise FormatError(
            f"The {what} is {formatted.length:,} characters as Telegram counts them (an emoji counts 2); Telegram"
            f" allows {limit:,}{' on this account' if caption else ''}: shorten it by {formatted.length - limit:,}."
            f" It runs over at {_place(formatted.text, index)} of the message as sent."
        )
    if len(formatted.entities) > ENTITIES_MAX:
        entity = formatted.entities[ENTITIES_MAX]
        raise FormatError(
            f"The {what} has {len(formatted.entities)} formatted spans; Telegram keeps {ENTITIES_MAX}: the"
            f" {ENTITIES_MAX + 1}st starts at {_place(formatted.text, _char_index(formatted.text, entity.offset))}."
        )
    if not premium:
        emoji = next((e for e in formatted.entities if e.type == "custom_emoji"), None)
        if emoji is not None:
            raise FormatError(
                f"Custom emoji at {_place(formatted.text, _char_index(formatted.text, emoji.offset))} need a"
                f" Premium account; use a plain emoji."
            )


def _char_index(text: str, utf16_offset: int) -> int:
    """The character index of a UTF-16 offset."""
    return len(del_surrogate(add_surrogate(text)[:utf16_offset]))


def entity_from_tl(entity) -> MessageEntity:
    return MessageEntity(
        type=_ENTITY_TYPES.get(type(entity), type(entity).__name__),
        offset=entity.offset,
        length=entity.length,
        url=getattr(entity, "url", "") or "",
        language=getattr(entity, "language", "") or "",
        document_id=getattr(entity, "document_id", 0) or 0,
    )


def entity_to_tl(entity: MessageEntity):
    cls = _ENTITY_CLASSES[entity.type]
    extra = {"text_url": {"url": entity.url}, "pre": {"language": entity.language}}.get(entity.type, {})
    if entity.type == "custom_emoji":
        extra = {"document_id": entity.document_id}
    return cls(offset=entity.offset, length=entity.length, **extra)


def entity_as_json(entity: MessageEntity) -> dict:
    """The `sandbox_dump --json` and API shape: type, offset, length, and url / language when set."""
    shown = {"type": entity.type, "offset": entity.offset, "length": entity.length}
    return shown | {key: getattr(entity, key) for key in ("url", "language", "document_id") if getattr(entity, key)}


_PREVIEW_TAGS = {
    "bold": ("<b>", "</b>"),
    "italic": ("<i>", "</i>"),
    "underline": ("<u>", "</u>"),
    "strike": ("<s>", "</s>"),
    "spoiler": ('<span class="tg-spoiler">', "</span>"),
    "code": ("<code>", "</code>"),
    "pre": ("<pre>", "</pre>"),
    "blockquote": ("<blockquote>", "</blockquote>"),
}


def formatted_html(formatted: FormattedText) -> str:
    """Safe HTML showing the text as Telegram will (for the compose page's preview): every character escaped,
    entities as tags; links open nothing (rel, target) and only http(s)/tg links are links."""
    text = add_surrogate(formatted.text)
    opens: dict[int, list[str]] = {}
    closes: dict[int, list[str]] = {}
    for entity in formatted.entities:
        start, end = _PREVIEW_TAGS.get(entity.type, ("", ""))
        if entity.type == "text_url" and re.match(r"(https?|tg)://", entity.url):
            start, end = f'<a href="{escape(entity.url)}" rel="noopener noreferrer" target="_blank">', "</a>"
        opens.setdefault(entity.offset, []).append(start)
        closes.setdefault(entity.offset + entity.length, []).insert(0, end)
    bounds = sorted({0, len(text), *opens, *closes})
    out = []
    for here, following in zip(bounds, bounds[1:] + [None], strict=True):
        out += closes.get(here, []) + opens.get(here, [])
        if following is not None:
            out.append(escape(del_surrogate(text[here:following])))
    return "".join(out)
