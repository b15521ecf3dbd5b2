"""A picture of a model, drawn on the CPU with numpy: no display, no GPU, no system library.

A z-buffer rasteriser: triangles are grouped by the size of their box on screen and tested against the pixel
centres of that box all at once (edge functions), the nearest kept per pixel; flat Lambert shading lit from
the upper left. The angle is fixed and flattering (from the front right, a little above, Z up as slicers
show it), the colours are the console's. Drawn at twice the size and scaled down, for smooth edges.
"""

import io
import math

import numpy as np

RENDER_EDGE = 480
_SUPERSAMPLE = 2
_MARGIN = 0.86  # the model fills this share of the picture's longer free side
_AZIMUTH, _ELEVATION = math.radians(-35), math.radians(28)
_BACKGROUND = (238, 240, 255)  # --accent-soft
_MODEL = (99, 91, 240)  # --accent, a shade lighter so shading reads
_CHUNK_SAMPLES = 2_000_000  # pixel tests per step: bounds the memory a huge triangle can take


def render_jpeg(triangles) -> tuple[bytes, int, int]:
    """A JPEG of the triangles (n, 3, 3) and its size."""
    from PIL import Image

    pixels = render_pixels(triangles, RENDER_EDGE * _SUPERSAMPLE)
    image = Image.fromarray(pixels).resize((RENDER_EDGE, RENDER_EDGE), Image.Resampling.BOX)
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=85)
    return out.getvalue(), RENDER_EDGE, RENDER_EDGE


def render_pixels(triangles, edge: int):
    """An (edge, edge, 3) uint8 picture of the triangles."""
    (screen_x, screen_y), depth, shade = _project(np.asarray(triangles, dtype=np.float32), edge)
    zbuffer = np.full(edge * edge, np.inf, dtype=np.float32)
    face_at = np.full(edge * edge, -1, dtype=np.int64)
    low = np.stack([_corner(screen_x, np.minimum, np.ceil), _corner(screen_y, np.minimum, np.ceil)], axis=1)
    high = np.stack([_corner(screen_x, np.maximum, np.floor), _corner(screen_y, np.maximum, np.floor)], axis=1)
    np.clip(low, 0, edge - 1, out=low)
    np.clip(high, -1, edge - 1, out=high)
    span = high - low + 1
    drawn = (span > 0).all(axis=1)
    # Boxes rounded up to powers of two (wide and tall apart), so one bucket's tests are one array.
    powers = np.ceil(np.log2(np.maximum(span, 1))).astype(np.int32)
    buckets = powers[:, 0] * 64 + powers[:, 1]
    for bucket in np.unique(buckets[drawn]):
        faces = np.nonzero(drawn & (buckets == bucket))[0]
        box = (1 << int(bucket // 64), 1 << int(bucket % 64))
        step = max(1, _CHUNK_SAMPLES // (box[0] * box[1]))
        for start in range(0, len(faces), step):
            chunk = faces[start : start + step]
            screen = np.stack([screen_x[chunk], screen_y[chunk]], axis=2)
            _rasterise(screen, depth[chunk], low[chunk], span[chunk], chunk, box, edge, zbuffer, face_at)
    colours = (np.asarray(_MODEL, dtype=np.float32)[None, :] * shade[:, None]).clip(0, 255).astype(np.uint8)
    picture = np.empty((edge * edge, 3), dtype=np.uint8)
    picture[:] = _BACKGROUND
    hit = face_at >= 0
    picture[hit] = colours[face_at[hit]]
    return picture.reshape(edge, edge, 3)


def _corner(values, pick, rounding):
    """The first (or last) pixel whose centre lies within a triangle's box, on one axis."""
    return rounding(pick(pick(values[:, 0], values[:, 1]), values[:, 2]) - 0.5).astype(np.int32)


def _project(triangles, edge: int):
    """Screen positions (n, 3, 2) in pixels, depths (n, 3) and each face's brightness (n,). Coordinates are
    worked as separate (n, 3) arrays: numpy reduces those much faster than the interleaved (n, 3, 3)."""
    px, py, pz = (np.ascontiguousarray(triangles[:, :, axis]) for axis in range(3))
    centre = [(float(values.min()) + float(values.max())) / 2 for values in (px, py, pz)]
    px -= centre[0]
    py -= centre[1]
    pz -= centre[2]
    cos_a, sin_a = np.float32(math.cos(_AZIMUTH)), np.float32(math.sin(_AZIMUTH))
    cos_e, sin_e = np.float32(math.cos(_ELEVATION)), np.float32(math.sin(_ELEVATION))
    x = px * cos_a - py * sin_a
    y = px * sin_a + py * cos_a
    del px, py  # a million triangles' coordinates are 12 MB an array: kept no longer than needed
    up = y * sin_e + pz * cos_e
    depth = y * cos_e - pz * sin_e  # larger is farther from the camera
    del y, pz
    extent = max(float(x.max() - x.min()), float(up.max() - up.min()), 1e-9)
    scale = np.float32(edge * _MARGIN / extent)
    screen_x = edge / 2 + x * scale
    screen_y = edge / 2 - up * scale
    # The face's normal in view space (right, up, towards the camera), from two edges.
    e1 = (x[:, 1] - x[:, 0], up[:, 1] - up[:, 0], depth[:, 0] - depth[:, 1])
    e2 = (x[:, 2] - x[:, 0], up[:, 2] - up[:, 0], depth[:, 0] - depth[:, 2])
    nx = e1[1] * e2[2] - e1[2] * e2[1]
    ny = e1[2] * e2[0] - e1[0] * e2[2]
    nz = e1[0] * e2[1] - e1[1] * e2[0]
    length = np.sqrt(nx * nx + ny * ny + nz * nz)
    length[length == 0] = 1
    light = np.array([-0.45, 0.55, 0.70])
    light /= np.linalg.norm(light)
    lambert = np.abs(nx * light[0] + ny * light[1] + nz * light[2]) / length  # both sides lit: windings lie
    shade = (0.42 + 0.68 * lambert).astype(np.float32)
    return (screen_x, screen_y), depth, shade


def _rasterise(screen, depth, low, span, faces, box, edge, zbuffer, face_at) -> None:
    """Test every pixel centre in each triangle's box (box = wide × tall, at most) and keep the nearest per
    pixel."""
    offsets = np.arange(box[0] * box[1])
    ox, oy = offsets % box[0], offsets // box[0]
    inside_box = (ox[None, :] < span[:, 0:1]) & (oy[None, :] < span[:, 1:2])
    px = (low[:, 0:1] + ox[None, :]).astype(np.float32) + 0.5
    py = (low[:, 1:2] + oy[None, :]).astype(np.float32) + 0.5
    a, b, c = screen[:, 0], screen[:, 1], screen[:, 2]
    area = (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0])
    usable = np.abs(area) > 1e-12
    area = np.where(usable, area, 1)[:, None]
    w0 = ((b[:, 0:1] - px) * (c[:, 1:2] - py) - (b[:, 1:2] - py) * (c[:, 0:1] - px)) / area
    w1 = ((c[:, 0:1] - px) * (a[:, 1:2] - py) - (c[:, 1:2] - py) * (a[:, 0:1] - px)) / area
    w2 = 1 - w0 - w1
    eps = -1e-6
    inside = inside_box & usable[:, None] & (w0 >= eps) & (w1 >= eps) & (w2 >= eps)
    rows, cols = np.nonzero(inside)
    if len(rows) == 0:
        return
    z = w0[rows, cols] * depth[rows, 0] + w1[rows, cols] * depth[rows, 1] + w2[rows, cols] * depth[rows, 2]
    pixel = (low[rows, 1] + oy[cols]) * edge + (low[rows, 0] + ox[cols])
    order = np.lexsort((z, pixel))
    pixel, z, face = pixel[order], z[order], faces[rows[order]]
    first = np.ones(len(pixel), dtype=bool)
    first[1:] = pixel[1:] != pixel[:-1]
    pixel, z, face = pixel[first], z[first], face[first]
    nearer = z < zbuffer[pixel]
    zbuffer[pixel[nearer]] = z[nearer]
    face_at[pixel[nearer]] = face[nearer]
