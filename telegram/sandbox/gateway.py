"""The TelegramGateway of the simulated Telegram: every call reads and writes the shared sandbox world.

Where the project depends on Telegram's behaviour, this behaves like it: one counted request
per history page and per 512 KiB file part, per-account access hashes, upload limits and
Premium, RANDOM_ID_DUPLICATE, slow mode (admins are exempt, as in Telegram), expiring file
references and media handles, and the world's injected faults.
"""

import asyncio
import math
import os
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Self

from django.views.decorators.debug import sensitive_variables

from telegram.errors import (
    AuthRequired,
    CodeExpired,
    CodeInvalid,
    FileReferenceExpired,
    FileTooLarge,
    NotFound,
    PasswordInvalid,
    PasswordRequired,
    PhoneInvalid,
    TargetForbidden,
    TransientError,
)
from telegram.gateway import HISTORY_PAGE, LAST_MESSAGE_BATCH, PART_SIZE, TOPICS_PAGE
from telegram.records import (
    CHANNEL,
    GENERAL_TOPIC_ID,
    GROUP,
    AccountInfo,
    ChatInfo,
    ChatRef,
    DocumentInfo,
    DocumentMessage,
    MediaHandle,
    SentMessage,
    TopicInfo,
)
from telegram.sandbox import world as sandbox_world
from telegram.sandbox.world import World, WorldMissing, chat_access_hash

SESSION_PREFIX = "sandbox"


def _batches(items: Sequence, size: int) -> list[Sequence]:
    return [items[start : start + size] for start in range(0, len(items), size)]


def _date(timestamp: float) -> datetime:
    return datetime.fromtimestamp(timestamp, UTC)


class SandboxGateway:
    def __init__(self, *, phone: str, session: str = "", path: str | os.PathLike):
        self.phone = phone
        self._session = session
        self._path = Path(path)
        self._world: World | None = None

    async def __aenter__(self) -> Self:
        self.world  # noqa: B018 -- open now, so a missing world fails at the door
        return self

    async def __aexit__(self, *exc_info) -> None:
        if self._world is not None:
            self._world.close()
            self._world = None

    @property
    def world(self) -> World:
        if self._world is None:
            try:
                self._world = World(self._path)
            except WorldMissing as exc:
                raise TransientError(str(exc)) from None
        return self._world

    def export_session(self) -> str:
        return self._session

    # plumbing

    def _token(self) -> str:
        prefix = f"{SESSION_PREFIX}:{self.phone}:"
        return self._session[len(prefix) :] if self._session.startswith(prefix) else ""

    def _session_in(self, state: str) -> dict | None:
        session = self.world.session(self._token())
        return session if session and session["phone"] == self.phone and session["state"] == state else None

    def _authorized(self) -> None:
        if self._session_in("authorized") is None:
            raise AuthRequired(rpc="AUTH_KEY_UNREGISTERED")

    def _request(self, method: str, op: str | None, *, chats=(), messages=()) -> None:
        self.world.request(phone=self.phone, method=method, op=op, chats=chats, messages=messages)

    def _chat(self, ref: ChatRef) -> dict:
        """The chat row (with `admin`), if this account is in it and addresses it with its own access hash."""
        chat = self.world.chat(ref.id)
        membership = self.world.membership(ref.id, self.phone)
        # basic groups are addressed by id alone in Telegram
        if (
            chat is None
            or membership is None
            or (
                chat["type"] != GROUP
                and ref.access_hash != chat_access_hash(phone=self.phone, chat_id=chat["id"], type=chat["type"])
            )
        ):
            raise TargetForbidden(f"Chat {ref.id} is private to this account.", rpc="CHANNEL_PRIVATE")
        return chat | {"admin": membership == "admin"}

    @staticmethod
    def _can_post(chat: dict) -> bool:
        return bool(chat["admin"] or (chat["type"] != CHANNEL and chat["members_can_post"]))

    def _check_can_post(self, chat: dict) -> None:
        if not self._can_post(chat):
            rpc = "CHAT_ADMIN_REQUIRED" if chat["type"] == CHANNEL else "CHAT_WRITE_FORBIDDEN"
            raise TargetForbidden(f"This account cannot post in chat {chat['id']}.", rpc=rpc)

    def _post_topic(self, chat: dict, topic_id: int | None) -> int | None:
        if not chat["forum"]:
            if topic_id is not None:
                raise TargetForbidden(f"Chat {chat['id']} is not a forum.", rpc="TOPIC_ID_INVALID")
            return None
        topic = topic_id or GENERAL_TOPIC_ID
        if not self.world.topic_exists(chat["id"], topic):
            raise TargetForbidden(f"Topic {topic} of chat {chat['id']} is gone.", rpc="TOPIC_DELETED")
        return topic

    def _account(self) -> dict:
        account = self.world.account(self.phone)
        if account is None:
            raise PhoneInvalid(rpc="PHONE_NUMBER_INVALID")
        return account

    def _info(self, account: dict) -> AccountInfo:
        return AccountInfo(
            user_id=account["user_id"],
            phone=account["phone"],
            first_name=account["first_name"],
            last_name=account["last_name"],
            username=account["username"],
            premium=bool(account["premium"]),
            upload_max_bytes=self.world.upload_max_bytes(self.phone),
        )

    def _expired(self, issued_at) -> bool:
        ttl = self.world.meta("file_reference_ttl_seconds")
        return not isinstance(issued_at, int | float) or sandbox_world.clock() - issued_at > ttl

    def _message(self, chat_id: int, row: dict) -> DocumentMessage:
        document = None
        if row["kind"] == "document":
            location = {
                "chat": chat_id,
                "message": row["id"],
                "document": row["document_id"],
                "issued_at": sandbox_world.clock(),
            }
            document = DocumentInfo(
                id=row["document_id"],
                name=row["document_name"],
                size=row["document_size"],
                mime_type=row["document_mime_type"],
                location=location,
            )
        return DocumentMessage(
            chat_id=chat_id,
            id=row["id"],
            date=_date(row["date"]),
            topic_id=row["topic"],
            text=row["text"],
            document=document,
        )

    async def _throttle(self, size: int) -> None:
        bandwidth = self._account()["bandwidth_bytes_per_s"]
        if bandwidth:
            await asyncio.sleep(size / bandwidth)

    async def _upload(self, method: str, path: str) -> tuple[str, int]:
        """Upload a file in counted parts; returns the stored blob's (sha256, size)."""
        size = os.path.getsize(path)
        limit = self.world.upload_max_bytes(self.phone)
        if size > limit:
            raise FileTooLarge(f"{Path(path).name} is {size} bytes; this account may upload at most {limit}.")
        with self.world.blob_writer() as blob, open(path, "rb") as handle:
            for _ in range(max(1, math.ceil(size / PART_SIZE))):
                self._request(method, "upload")
                chunk = handle.read(PART_SIZE)
                blob.write(chunk)
                await self._throttle(len(chunk))
        return blob.sha256, blob.size

    def _post(self, chat: dict, *, random_id: int, **message) -> SentMessage:
        message_id, date = self.world.post(
            chat["id"],
            sender=self.phone,
            random_id=random_id,
            slow_mode_seconds=0 if chat["admin"] else chat["slow_mode_seconds"],
            **message,
        )
        if message_id is None:
            return SentMessage(chat_id=chat["id"], id=None, random_id=random_id, duplicate=True)
        return SentMessage(chat_id=chat["id"], id=message_id, random_id=random_id, date=_date(date))

    # login

    async def send_code(self) -> str:
        self._account()
        self._request("send_code", None)
        token, phone_code_hash = self.world.session_start(self.phone)
        self._session = f"{SESSION_PREFIX}:{self.phone}:{token}"
        return phone_code_hash

    async def sign_in_code(self, *, code: str, phone_code_hash: str) -> AccountInfo:
        account = self._account()
        self._request("sign_in_code", None)
        session = self._session_in("code_sent")
        if session is None or session["phone_code_hash"] != phone_code_hash:
            raise CodeExpired("This code was not sent to this session; ask for a new one.", rpc="PHONE_CODE_EXPIRED")
        if code.strip() != account["code"]:
            raise CodeInvalid(rpc="PHONE_CODE_INVALID")
        if account["password"] is not None:
            self.world.session_set_state(session["token"], "password_needed")
            raise PasswordRequired(rpc="SESSION_PASSWORD_NEEDED")
        self.world.session_set_state(session["token"], "authorized")
        return self._info(account)

    @sensitive_variables("password", "account")  # the world's account row holds the password too
    async def sign_in_password(self, *, password: str) -> AccountInfo:
        account = self._account()
        self._request("sign_in_password", None)
        session = self._session_in("password_needed")
        if session is None:
            raise CodeExpired("No two-step verification is pending; ask for a new code.", rpc="PHONE_CODE_EXPIRED")
        if password != account["password"]:
            raise PasswordInvalid(rpc="PASSWORD_HASH_INVALID")
        self.world.session_set_state(session["token"], "authorized")
        return self._info(account)

    async def get_me(self) -> AccountInfo:
        self._authorized()
        self._request("get_me", "any")
        return self._info(self._account())

    async def list_chats(self) -> list[ChatInfo]:
        self._authorized()
        chats = self.world.account_chats(self.phone)
        for _ in range(max(1, math.ceil(len(chats) / HISTORY_PAGE))):  # dialogs come 100 a page
            self._request("list_chats", "any")
        return [
            ChatInfo(
                id=chat["id"],
                access_hash=chat_access_hash(phone=self.phone, chat_id=chat["id"], type=chat["type"]),
                title=chat["title"],
                type=chat["type"],
                forum=bool(chat["forum"]),
                slow_mode_seconds=chat["slow_mode_seconds"],
                can_post=self._can_post(chat),
            )
            for chat in chats
        ]

    # reading

    async def get_last_message_ids(self, chats: Sequence[ChatRef]) -> dict[int, int]:
        self._authorized()
        last = {}
        for batch in _batches(list(chats), LAST_MESSAGE_BATCH):
            self._request("get_last_message_ids", "history", chats=[ref.id for ref in batch])
            for ref in batch:
                last[self._chat(ref)["id"]] = self.world.last_message_id(ref.id)
        return last

    async def list_topics(self, chat: ChatRef, *, offset_topic_id: int = 0) -> list[TopicInfo]:
        self._authorized()
        self._request("list_topics", "history", chats=[chat.id])
        if not self._chat(chat)["forum"]:
            return []
        return [TopicInfo(**topic) for topic in self.world.topics(chat.id, after=offset_topic_id, limit=TOPICS_PAGE)]

    async def search_documents(
        self, chat: ChatRef, *, min_id: int, max_id: int = 0, topic_id: int | None = None
    ) -> list[DocumentMessage]:
        self._authorized()
        self._request("search_documents", "history", chats=[chat.id])
        forum = self._chat(chat)["forum"]
        if topic_id is not None and not forum:
            return []  # no topics, so no message is in one
        rows = self.world.search_documents(chat.id, min_id=min_id, max_id=max_id, topic=topic_id, limit=HISTORY_PAGE)
        return [self._message(chat.id, row) for row in rows]

    async def get_messages(self, chat: ChatRef, ids: Sequence[int]) -> dict[int, DocumentMessage | None]:
        self._authorized()
        found: dict[int, DocumentMessage | None] = {}
        for batch in _batches(list(ids), HISTORY_PAGE):
            self._request("get_messages", "history", chats=[chat.id], messages=batch)
            self._chat(chat)
            for message_id in batch:
                row = self.world.message(chat.id, message_id)
                found[message_id] = None if row is None else self._message(chat.id, row)
        return found

    async def iter_download(self, chat: ChatRef, document: DocumentInfo, *, offset: int = 0) -> AsyncIterator[bytes]:
        self._authorized()
        self._chat(chat)
        location = document.location
        for part_offset in range(offset, document.size, PART_SIZE):
            self._request("iter_download", "download", chats=[chat.id], messages=[location.get("message")])
            stored = self._located(chat.id, document)
            data = self.world.document_read(stored, offset=part_offset, length=PART_SIZE)
            await self._throttle(len(data))
            yield data

    def _located(self, chat_id: int, document: DocumentInfo) -> dict:
        """The stored document a download's location points at, while its file reference is fresh."""
        location = document.location
        if location.get("chat") != chat_id or location.get("document") != document.id:
            raise FileReferenceExpired("This document has no file reference here; re-fetch its message.")
        message = self.world.message(chat_id, location.get("message"))
        if message is None:
            raise NotFound(f"Message {location.get('message')} of chat {chat_id} is gone.", rpc="MESSAGE_ID_INVALID")
        if message["document_id"] != document.id or self._expired(location.get("issued_at")):
            raise FileReferenceExpired(rpc="FILE_REFERENCE_EXPIRED")
        return self.world.document(document.id)

    # writing

    async def upload_document(
        self,
        chat: ChatRef,
        *,
        path: str,
        file_name: str,
        random_id: int,
        caption: str = "",
        topic_id: int | None = None,
    ) -> SentMessage:
        self._authorized()
        target = self._chat(chat)
        topic = self._post_topic(target, topic_id)
        sha256, size = await self._upload("upload_document", path)
        self._request("upload_document", "send", chats=[chat.id])
        self._check_can_post(target)
        document_id = self.world.document_create(name=file_name, sha256=sha256, size=size)
        return self._post(
            target, random_id=random_id, text=caption, topic=topic, kind="document", document_id=document_id
        )

    async def upload_media(self, *, path: str, file_name: str, mime_type: str) -> MediaHandle:
        self._authorized()
        sha256, size = await self._upload("upload_media", path)
        self._request("upload_media", "upload")  # the UploadMedia call after the parts
        document_id = self.world.document_create(name=file_name, sha256=sha256, size=size, mime_type=mime_type)
        kind = "photo" if mime_type.startswith("image/") else "document"
        return MediaHandle(
            kind=kind,
            payload={"media_id": document_id, "phone": self.phone, "issued_at": sandbox_world.clock()},
        )

    async def send_message(
        self,
        chat: ChatRef,
        *,
        random_id: int,
        text: str = "",
        media: MediaHandle | None = None,
        topic_id: int | None = None,
    ) -> SentMessage:
        if not text and media is None:
            raise ValueError("send_message needs text, media or both")
        self._authorized()
        self._request("send_message", "send", chats=[chat.id])
        target = self._chat(chat)
        topic = self._post_topic(target, topic_id)
        self._check_can_post(target)
        kind = document_id = None
        if media is not None:
            kind, document_id = media.kind, self._media_document(media)
        return self._post(target, random_id=random_id, text=text, topic=topic, kind=kind, document_id=document_id)

    def _media_document(self, media: MediaHandle) -> int:
        """The uploaded document behind a handle of this account that has not expired."""
        payload = media.payload
        document = self.world.document(payload.get("media_id")) if payload.get("phone") == self.phone else None
        if document is None or media.kind not in ("photo", "document") or self._expired(payload.get("issued_at")):
            raise FileReferenceExpired(
                "This media handle expired; upload the media again.", rpc="FILE_REFERENCE_EXPIRED"
            )
        return document["id"]
