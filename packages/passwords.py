"""Archive passwords: those a poster wrote in a caption, and how a caption reads with them hidden.

Posters put the password next to a label: "pass: X", "password = X", "pw: X", "pwd - X", "пароль: X",
"passwort: X", "contraseña: X", "senha: X", or after a key emoji ("🔑 X", "🔐: X"). The value is the next word,
or a quoted run ("…", '…', `…`, «…») when it holds spaces. Found passwords are only offered to the archive
listing; wherever a viewer reads the caption (the package page, the API, the search index) they are masked.
"""

import re

_WORD_LABELS = r"pass(?:word|wort|wd)?|pwd?|парол[ья]|contraseña|senha|mot\s+de\s+passe"
_EMOJI_LABELS = "\U0001f511\U0001f510\U0001f5dd"  # 🔑 🔐 🗝
_VALUE = r"(?P<value>\"[^\"\n]+\"|'[^'\n]+'|`[^`\n]+`|«[^»\n]+»|\S+)"
_PASSWORD = re.compile(
    rf"(?:(?<![^\W_])(?:{_WORD_LABELS})\s*(?:[:=]|\s[-–—])|[{_EMOJI_LABELS}]\ufe0f?:?)[ \t]*{_VALUE}",
    re.IGNORECASE,
)
_QUOTES = {'"': '"', "'": "'", "`": "`", "«": "»"}
MASK = "••••••"


def caption_passwords(caption: str) -> list[str]:
    """The passwords a caption names, in order, each once."""
    found = []
    for match in _PASSWORD.finditer(caption):
        value = match.group("value")
        if value[0] in _QUOTES and value.endswith(_QUOTES[value[0]]) and len(value) > 2:
            value = value[1:-1]
        if value not in found:
            found.append(value)
    return found


def caption_masked(caption: str) -> str:
    """The caption with every password it names replaced by a mask: what a viewer may read."""
    return _PASSWORD.sub(lambda match: match.group(0)[: match.start("value") - match.start()] + MASK, caption)
