"""Real small 3D models for the sandbox's archives, made at build time by a mesh library (trimesh): a few named
shapes, as STL (binary) or 3MF, the same bytes every build (the 3MF is zipped with pinned timestamps), so
previews and the viewer have something true to show."""

import io
import math
import zipfile

import numpy as np
import trimesh

_STAMP = (2024, 1, 1, 0, 0, 0)


def _moved(mesh: trimesh.Trimesh, x=0.0, y=0.0, z=0.0, scale=(1.0, 1.0, 1.0), turn_z=0.0, turn_y=0.0):
    mesh = mesh.copy()
    mesh.apply_scale(1)  # a copy with its caches cleared
    mesh.vertices = mesh.vertices * np.array(scale)
    if turn_y:
        mesh.apply_transform(trimesh.transformations.rotation_matrix(turn_y, (0, 1, 0)))
    if turn_z:
        mesh.apply_transform(trimesh.transformations.rotation_matrix(turn_z, (0, 0, 1)))
    mesh.apply_translation((x, y, z))
    return mesh


def _dragon():
    ball = trimesh.creation.icosphere(subdivisions=3)
    body = _moved(ball, z=14, scale=(16, 9, 9))
    head = _moved(ball, x=20, z=27, scale=(6, 4.5, 4.5))
    neck = _moved(trimesh.creation.cylinder(radius=3.5, height=16), x=14, z=20, turn_y=math.radians(50))
    wing = trimesh.creation.box(extents=(18, 1.5, 14))
    wings = [_moved(wing, y=side * 12, z=26, turn_z=math.radians(side * 20), scale=(1, 1, 1)) for side in (-1, 1)]
    tail = _moved(trimesh.creation.cone(radius=4, height=22), x=-18, z=12, turn_y=math.radians(-100))
    legs = [_moved(trimesh.creation.cylinder(radius=2.5, height=10), x=x, y=y, z=5) for x in (-8, 8) for y in (-5, 5)]
    base = trimesh.creation.cylinder(radius=26, height=3, sections=64)
    return trimesh.util.concatenate([body, head, neck, *wings, tail, *legs, base])


def _tower():
    wall = trimesh.creation.cylinder(radius=12, height=40, sections=48)
    merlons = [
        _moved(trimesh.creation.box(extents=(5, 4, 5)), x=11 * math.cos(a), y=11 * math.sin(a), z=22.5)
        for a in np.linspace(0, 2 * math.pi, 10, endpoint=False)
    ]
    roof = _moved(trimesh.creation.cone(radius=9, height=16, sections=48), z=20)
    door = _moved(trimesh.creation.box(extents=(2, 7, 11)), x=12, z=-14.5)
    rubble = [
        _moved(trimesh.creation.icosphere(subdivisions=1, radius=2 + i % 3), x=16 + 3 * i, y=-6, z=-18)
        for i in range(4)
    ]
    return trimesh.util.concatenate([wall, *merlons, roof, door, *rubble])


def _rover():
    body = trimesh.creation.box(extents=(36, 20, 8))
    cab = _moved(trimesh.creation.box(extents=(12, 16, 8)), x=6, z=8)
    mast = _moved(trimesh.creation.cylinder(radius=1, height=14), x=-10, z=11)
    dish = _moved(trimesh.creation.cone(radius=5, height=3), x=-10, z=18)
    wheel = trimesh.creation.cylinder(radius=5, height=4, sections=40)
    wheels = [
        _moved(wheel, x=x, y=y, z=-4, turn_y=0).apply_transform(
            trimesh.transformations.rotation_matrix(math.pi / 2, (1, 0, 0), (x, y, -4))
        )
        for x in (-12, 0, 12)
        for y in (-12, 12)
    ]
    return trimesh.util.concatenate([body, cab, mast, dish, *wheels])


def _serpent():
    rings = [
        _moved(
            trimesh.creation.torus(major_radius=8, minor_radius=3, major_sections=48, minor_sections=16),
            x=x,
            z=z,
            turn_y=0,
        ).apply_transform(trimesh.transformations.rotation_matrix(math.pi / 2, (1, 0, 0), (x, 0, z)))
        for x, z in ((-20, 6), (0, 8), (20, 6))
    ]
    head = _moved(trimesh.creation.icosphere(subdivisions=3), x=32, z=14, scale=(7, 4, 4))
    sea = trimesh.creation.box(extents=(80, 24, 2))
    return trimesh.util.concatenate([*rings, head, sea])


def _tile():
    hexagon = trimesh.creation.cylinder(radius=20, height=4, sections=6)
    hill = _moved(trimesh.creation.icosphere(subdivisions=3), z=2, scale=(13, 11, 7))
    rocks = [_moved(trimesh.creation.icosphere(subdivisions=1, radius=2.5), x=x, y=-10, z=3) for x in (-8, 9)]
    return trimesh.util.concatenate([hexagon, hill, *rocks])


SHAPES = {"dragon": _dragon, "tower": _tower, "rover": _rover, "serpent": _serpent, "tile": _tile}


def model_bytes(shape: str, name: str) -> bytes:
    """The named shape as the file `name` says (.3mf, else a binary STL)."""
    if shape not in SHAPES:
        raise ValueError(f"unknown model shape {shape!r}: one of {', '.join(sorted(SHAPES))}")
    mesh = SHAPES[shape]()
    mesh.apply_translation(-mesh.bounds[0])  # on the build plate, as slicers place it
    if name.lower().endswith(".3mf"):
        return _threemf(mesh)
    return mesh.export(file_type="stl")


def _threemf(mesh: trimesh.Trimesh) -> bytes:
    """A minimal 3MF (one object, millimetres), zipped with pinned timestamps so every build is the same."""
    vertices = "".join(f'<vertex x="{x:.4f}" y="{y:.4f}" z="{z:.4f}"/>' for x, y, z in mesh.vertices)
    triangles = "".join(f'<triangle v1="{a}" v2="{b}" v3="{c}"/>' for a, b, c in mesh.faces)
    model = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<model unit="millimeter" xmlns="http://schemas.microsoft.com/3dmanufacturing/core/2015/02">'
        f'<resources><object id="1" type="model"><mesh><vertices>{vertices}</vertices>'
        f"<triangles>{triangles}</triangles></mesh></object></resources>"
        '<build><item objectid="1"/></build></model>'
    )
    parts = {
        "[Content_Types].xml": '<?xml version="1.0" encoding="UTF-8"?>'
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="model" ContentType="application/vnd.ms-package.3dmanufacturing-3dmodel+xml"/>'
        "</Types>",
        "_rels/.rels": '<?xml version="1.0" encoding="UTF-8"?>'
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Target="/3D/3dmodel.model" Id="rel0" '
        'Type="http://schemas.microsoft.com/3dmanufacturing/2013/01/3dmodel"/></Relationships>',
        "3D/3dmodel.model": model,
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        for name, text in parts.items():
            package.writestr(zipfile.ZipInfo(name, date_time=_STAMP), text)
    return out.getvalue()
