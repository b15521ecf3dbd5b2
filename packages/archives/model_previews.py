"""A preview of the package's main model, made in the listing child after the thumbnails: the 3MF's own picture
where it has one, else a picture drawn of its mesh (render.py). A model that cannot be drawn (hostile, huge,
empty, out of time or memory) leaves a reason, never a dead child."""

import base64
import signal
from pathlib import Path

from packages.archives.entries import Entry, reason_text
from packages.archives.meshes import (
    MESH_SOURCE_MAX_BYTES,
    MeshRefused,
    embedded_thumbnail,
    mesh_triangles,
    model_entries,
)
from packages.archives.thumbnails import members_read, thumbnail_make

MODEL_PREVIEW_SECONDS = 20  # after the listing and the thumbnails; the child's own limit still stands over all
MODELS_TRIED = 2  # the main model, and the next when the main one cannot be drawn
EMBEDDED, RENDER = "embedded", "render"


class _OutOfTime(Exception):
    pass


def model_preview_make(archive_type: str, volumes: list[Path], entries: list[Entry], seconds_left: float) -> dict:
    """{"made": [path, base64 JPEG, width, height, kind]} of the main model, or {"refused": why}; {} when the
    package holds no model to draw. It takes at most MODEL_PREVIEW_SECONDS, and never the child's last
    seconds (`seconds_left` of its limit): the listing must come back whatever the drawing does."""
    candidates = model_entries(entries)[:MODELS_TRIED]
    if not candidates:
        return {}
    budget = min(MODEL_PREVIEW_SECONDS, seconds_left - 10)  # the child started before its clock did
    if budget < 1:
        return {"refused": "No model preview: the listing took the time there was to draw it."}

    def out_of_time(*_):
        raise _OutOfTime

    signal.signal(signal.SIGALRM, out_of_time)
    signal.setitimer(signal.ITIMER_REAL, budget)
    reasons = []
    try:
        chosen = {entry.path for entry in candidates}
        read = dict(members_read(archive_type, volumes, chosen, MESH_SOURCE_MAX_BYTES))
        for entry in candidates:
            if entry.path not in read:
                reasons.append(f"{entry.path}: could not be read out of the archive")
                continue
            try:
                return {"made": _preview_of(entry.path, read.pop(entry.path))}
            except MeshRefused as refused:
                reasons.append(f"{entry.path}: {refused}")
    except _OutOfTime:
        reasons.append(f"drawing took longer than {budget:.0f} s")
    except MemoryError:
        reasons.append("drawing needed more memory than the reading child may take")
    except Exception as exc:  # a damaged archive, a reader that needs a tool: no picture, the listing stands
        reasons.append(f"{exc.__class__.__name__}: {str(exc)[:200]}")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return {"refused": reason_text("No model preview: " + "; ".join(reasons) + ".")}


def _preview_of(path: str, data: bytes) -> list:
    if path.lower().endswith(".3mf"):
        embedded = embedded_thumbnail(data)
        if embedded is not None:
            try:
                jpeg, width, height = thumbnail_make(embedded[1])
                return [path, base64.b64encode(jpeg).decode(), width, height, EMBEDDED]
            except ValueError:
                pass  # a broken picture: draw the mesh instead
    triangles = mesh_triangles(path, data)  # refuses a damaged STL before numpy is imported
    from packages.archives.render import render_jpeg  # numpy only where a model is drawn

    jpeg, width, height = render_jpeg(triangles)
    return [path, base64.b64encode(jpeg).decode(), width, height, RENDER]
