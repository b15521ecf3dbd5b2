"""File transfers: upload.getFile, upload.saveFilePart / saveBigFilePart, and turning saved parts into a file.

Telegram's rules are kept where clients depend on them: parts of at most 512 KiB, big files at most
as many parts as the account may upload, downloads in 4 KiB-aligned requests that never cross a
1 MiB boundary, and file references that expire or die with their message.
"""

import hashlib
import shutil
from pathlib import Path

from telethon.tl import functions, types

from telegram.records import PART_SIZE
from telegram.sandbox import tl
from telegram.sandbox.faults import RpcAnswer
from telegram.sandbox.methods.common import Call, reference_fresh

ALIGN = 4096
KIB = 1024
WINDOW = 1024 * 1024
SMALL_FILE_MAX_PARTS = 20  # saveFilePart is for files up to 10 MB


def get_file(call: Call):
    request = call.request
    me = call.me()
    location = request.location
    if not isinstance(location, types.InputDocumentFileLocation | types.InputPhotoFileLocation):
        raise RpcAnswer(400, "LOCATION_INVALID")
    offset, limit = request.offset, request.limit
    if limit <= 0 or limit % ALIGN or WINDOW % limit:
        raise RpcAnswer(400, "LIMIT_INVALID")
    if offset < 0 or offset % ALIGN or offset // WINDOW != (offset + limit - 1) // WINDOW:
        raise RpcAnswer(400, "OFFSET_INVALID")
    document = call.world.document(location.id)
    if document is None or location.access_hash != tl.access_hash("document", me["phone"], location.id):
        raise RpcAnswer(400, "FILE_ID_INVALID")
    chat_id, message_id = reference_fresh(call, location.file_reference)
    if chat_id:
        message = call.world.message(chat_id, message_id)
        # A deleted message, or one the account cannot see any more, takes its file reference with it.
        if (
            message is None
            or message["document_id"] != document["id"]
            or call.world.membership(chat_id, me["phone"]) is None
        ):
            raise RpcAnswer(400, "FILE_REFERENCE_EXPIRED")
    data = call.world.document_read(document, offset=offset, length=limit) if offset < document["size"] else b""
    call.wait = call.world.bandwidth_wait(me["phone"], len(data))
    return types.upload.File(type=types.storage.FileUnknown(), mtime=0, bytes=data)


def _upload_dir(call: Call, file_id: int) -> Path:
    return call.world.path / "uploads" / f"{call.key['phone'].lstrip('+')}-{file_id}"


def _save_part(call: Call, *, file_id: int, part: int, data: bytes, total: int | None) -> bool:
    me = call.me()
    if len(data) > PART_SIZE:
        raise RpcAnswer(400, "FILE_PART_TOO_BIG")
    if not data:
        raise RpcAnswer(400, "FILE_PART_EMPTY")
    if total is not None and part < total - 1 and (len(data) % KIB or PART_SIZE % len(data)):
        # Every part of a big file but the last: a multiple of 1 KiB that divides 512 KiB (core.telegram.org/api/
        # files). A small file's parts (saveFilePart) say no total, so which is last is not known here.
        raise RpcAnswer(400, "FILE_PART_SIZE_INVALID")
    if total is not None and not 0 < total <= max_parts(call, me):
        raise RpcAnswer(400, "FILE_PARTS_INVALID")
    if part < 0 or (total is not None and part >= total) or (total is None and part >= SMALL_FILE_MAX_PARTS):
        raise RpcAnswer(400, "FILE_PART_INVALID")
    folder = _upload_dir(call, file_id)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{part:06d}").write_bytes(data)
    call.wait = call.world.bandwidth_wait(me["phone"], len(data))
    return True


def max_parts(call: Call, account: dict) -> int:
    limit = call.world.upload_max_bytes(account["phone"])
    return -(-limit // PART_SIZE)


def save_file_part(call: Call):
    request = call.request
    return _save_part(call, file_id=request.file_id, part=request.file_part, data=request.bytes, total=None)


def save_big_file_part(call: Call):
    request = call.request
    return _save_part(
        call, file_id=request.file_id, part=request.file_part, data=request.bytes, total=request.file_total_parts
    )


def uploaded_file(call: Call, input_file, *, mime_type: str = "") -> int:
    """The document made of an uploaded file's saved parts (FILE_PART_X_MISSING when one is not there)."""
    me = call.me()
    if not isinstance(input_file, types.InputFile | types.InputFileBig):
        raise RpcAnswer(400, "FILE_ID_INVALID")
    folder = _upload_dir(call, input_file.id)
    digest = hashlib.md5(usedforsecurity=False)
    with call.world.blob_writer() as blob:
        for part in range(input_file.parts):
            path = folder / f"{part:06d}"
            if not path.exists():
                raise RpcAnswer(400, f"FILE_PART_{part}_MISSING")
            data = path.read_bytes()
            digest.update(data)
            blob.write(data)
        if blob.size > call.world.upload_max_bytes(me["phone"]):
            raise RpcAnswer(400, "FILE_PARTS_INVALID")
        if isinstance(input_file, types.InputFile) and input_file.md5_checksum not in ("", digest.hexdigest()):
            raise RpcAnswer(400, "MD5_CHECKSUM_INVALID")
    shutil.rmtree(folder, ignore_errors=True)
    return call.world.document_create(name=input_file.name, sha256=blob.sha256, size=blob.size, mime_type=mime_type)


HANDLERS = {
    functions.upload.GetFileRequest: get_file,
    functions.upload.SaveFilePartRequest: save_file_part,
    functions.upload.SaveBigFilePartRequest: save_big_file_part,
}
