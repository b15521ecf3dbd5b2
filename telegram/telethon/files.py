"""Downloads and uploads of the gateway: a document's bytes read whole or in a range, and files uploaded to post
or to reuse, over the parts machinery of transfers.py."""

import mimetypes
import os
from collections.abc import AsyncIterator
from contextlib import aclosing

from telethon import errors, functions, types

from telegram.errors import FileTooLarge
from telegram.records import PART_SIZE, ChatRef, DocumentInfo, MediaHandle, SentMessage
from telegram.telethon import transfers
from telegram.telethon.errors import mapped_errors, maps_errors
from telegram.telethon.peers import input_peer, reply_to

PHOTO_MIME_TYPES = ("image/jpeg", "image/png")  # what Telegram accepts as a photo; other images go as documents


class TransferCalls:
    async def iter_download(
        self, chat: ChatRef, document: DocumentInfo, *, offset: int = 0
    ) -> AsyncIterator[memoryview]:
        # Requests start on PART_SIZE boundaries (upload.getFile must not cross a 1 MiB boundary);
        # a resume from the middle of a part drops the bytes already held.
        if offset >= document.size:
            return  # all bytes held already
        skip = offset % PART_SIZE
        parts = transfers.download(
            self._client,
            self._senders,
            _file_location(document),
            dc_id=document.location["dc_id"],
            size=document.size,
            first_part=offset // PART_SIZE,
            parts_in_flight=self._parts_in_flight,
        )
        with mapped_errors():
            async with aclosing(parts):
                async for data in parts:
                    if skip:
                        data, skip = data[skip:], 0
                    if data:
                        yield data

    @maps_errors
    async def read_range(self, chat: ChatRef, document: DocumentInfo, *, offset: int, length: int) -> bytes:
        offset = max(0, offset)
        if offset >= document.size or length <= 0:
            return b""
        return await transfers.read_range(
            self._client,
            self._senders,
            _file_location(document),
            dc_id=document.location["dc_id"],
            offset=offset,
            length=min(length, document.size - offset),
        )

    @maps_errors
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
        size = os.path.getsize(path)
        limit = (self._me or await self.get_me()).upload_max_bytes
        if size > limit:
            raise FileTooLarge(f"{file_name} is {size} bytes, above this account's upload limit of {limit} bytes.")
        uploaded = await self._upload_file(path, file_name)

        def request(uploaded):
            media = types.InputMediaUploadedDocument(
                file=uploaded,
                mime_type=mimetypes.guess_type(file_name)[0] or "application/octet-stream",
                attributes=[types.DocumentAttributeFilename(file_name)],
                force_file=True,
            )
            return functions.messages.SendMediaRequest(
                peer=input_peer(chat), media=media, message=caption, random_id=random_id, reply_to=reply_to(topic_id)
            )

        return await self._with_missing_parts(path, uploaded, lambda: self._send(chat, request(uploaded)))

    @maps_errors
    async def upload_media(self, *, path: str, file_name: str, mime_type: str) -> MediaHandle:
        uploaded = await self._upload_file(path, file_name)
        if mime_type in PHOTO_MIME_TYPES:
            media = types.InputMediaUploadedPhoto(file=uploaded)
        else:
            media = types.InputMediaUploadedDocument(
                file=uploaded, mime_type=mime_type, attributes=[types.DocumentAttributeFilename(file_name)]
            )
        # Uploaded to the account's own Saved Messages peer: the result can be sent to any chat.
        request = functions.messages.UploadMediaRequest(peer=types.InputPeerSelf(), media=media)
        result = await self._with_missing_parts(path, uploaded, lambda: self._client(request))
        if isinstance(result, types.MessageMediaPhoto):
            return MediaHandle(kind="photo", payload=_handle_payload(result.photo))
        return MediaHandle(kind="document", payload=_handle_payload(result.document))

    async def _upload_file(self, path: str, file_name: str) -> types.InputFile | types.InputFileBig:
        return await transfers.upload(
            self._client, self._senders, path, file_name=file_name, parts_in_flight=self._parts_in_flight
        )

    async def _with_missing_parts(self, path: str, uploaded, send):
        """Send what refers to an uploaded file; a part Telegram says is missing (FILE_PART_X_MISSING) is sent
        again, once per part, then the send is tried again."""
        resent = set()
        while True:
            try:
                return await send()
            except errors.FilePartMissingError as exc:
                if exc.which in resent:
                    raise
                resent.add(exc.which)
                await transfers.resave(self._client, self._senders, path, uploaded, exc.which)


def _file_location(document: DocumentInfo) -> types.InputDocumentFileLocation | types.InputPhotoFileLocation:
    # A photo is read at its largest size (thumb_size names it); a document whole ("").
    location = document.location
    location_class = types.InputPhotoFileLocation if location.get("photo") else types.InputDocumentFileLocation
    return location_class(
        id=location["id"],
        access_hash=location["access_hash"],
        file_reference=bytes.fromhex(location["file_reference"]),
        thumb_size=location.get("thumb_size", ""),
    )


def _handle_payload(media: types.Photo | types.Document) -> dict:
    return {"id": media.id, "access_hash": media.access_hash, "file_reference": media.file_reference.hex()}
