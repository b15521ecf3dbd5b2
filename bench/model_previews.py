"""Model previews and one file out of an archive. No database needed.

Prints, for models of 10k, 100k and 1M triangles (binary STL in a zip, as ingestion reads them): the preview's
wall time in the listing child (listing, reading the member, drawing) and the drawing alone, and the child's peak
memory. Then the bytes read to serve one 5 MB STL out of a 2 GB zip (the member's local header and data, by
`zip_member_chunks`) against the member's compressed size, and the time to its first byte.

    .venv/bin/python -m bench.model_previews [--skip-2gb]
"""

import argparse
import io
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from packages.archives import read_archive
from packages.archives.members import zip_member_chunks
from packages.detection import ZIP

SIZES = (10_000, 100_000, 1_000_000)


def mesh_of(triangles: int):
    """Balls in a row, about `triangles` in all: a dense, closed surface like a sculpted figure's."""
    import numpy as np  # here: the processes that measure memory must not carry numpy's or trimesh's
    import trimesh

    ball = trimesh.creation.icosphere(subdivisions=int(np.floor(np.log(max(triangles, 80) / 20) / np.log(4))))
    count = max(1, round(triangles / len(ball.faces)))
    return trimesh.util.concatenate([ball.copy().apply_translation((i * 2.2, 0, 0)) for i in range(count)])


def draw_only(path: str) -> None:
    """In a fresh process: the drawing alone, and this process's peak memory."""
    from packages.archives.meshes import mesh_triangles
    from packages.archives.render import render_jpeg

    data = Path(path).read_bytes()
    started = time.process_time()
    render_jpeg(mesh_triangles("model.stl", data))
    print(f"{time.process_time() - started:.2f} {peak_mb()}")


def peak_mb() -> int:
    """This process's own peak (VmHWM): ru_maxrss would carry over the peak of the process that started it."""
    status = Path("/proc/self/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) // 1024


def listed_in_child(archive: str) -> None:
    """The listing's wall time, the child's CPU and peak memory (as it reports them), and the outcome."""
    started = time.monotonic()
    listing = read_archive(ZIP, [Path(archive)], model_preview=True)
    wall = time.monotonic() - started
    # On a machine this loaded the child's wall-time budget can run out: say so; the drawing is timed apart.
    drawn = any(t.kind == "render" for t in listing.thumbnails)
    outcome = "drawn" if drawn else listing.model_preview_refused
    print(f"{wall:.2f}, {listing.cpu_seconds:.2f}, {listing.peak_memory_bytes // 1024**2} ({outcome})")


def models_make(folder: Path) -> None:
    """In a process of its own, so the bench's own memory stays small and out of the children's figures."""
    for wanted in SIZES:
        mesh = mesh_of(wanted)
        stl = folder / f"model-{wanted}.stl"
        stl.write_bytes(mesh.export(file_type="stl"))
        with zipfile.ZipFile(folder / f"model-{wanted}.zip", "w", zipfile.ZIP_DEFLATED, compresslevel=1) as packed:
            packed.write(stl, "figure/model.stl")


def previews(folder: Path) -> None:
    print("triangles | STL MB | preview in the child: wall s, CPU s, peak MB | drawing alone: CPU s, process peak MB")
    subprocess.run([sys.executable, "-m", "bench.model_previews", "--make", str(folder)], check=True)
    for wanted in SIZES:
        stl = folder / f"model-{wanted}.stl"
        archive = folder / f"model-{wanted}.zip"
        triangles = (stl.stat().st_size - 84) // 50
        listed = subprocess.run(
            [sys.executable, "-m", "bench.model_previews", "--list", str(archive)],
            capture_output=True,
            check=True,
            text=True,
        ).stdout.strip()
        alone = subprocess.run(
            [sys.executable, "-m", "bench.model_previews", "--draw-only", str(stl)],
            capture_output=True,
            check=True,
            text=True,
            env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
        ).stdout.split()
        print(f"{triangles:,} | {stl.stat().st_size / 1e6:.0f} | {listed} | {alone[0]}, {alone[1]}")


class CountingReader(io.FileIO):
    read_bytes = 0

    def read(self, size=-1):
        data = super().read(size)
        self.read_bytes += len(data)
        return data


def one_file_out(folder: Path) -> None:
    archive = folder / "big.zip"
    model = mesh_of(200_000).export(file_type="stl")[: 5 * 1024**2]
    filler = os.urandom(1024**2)
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED, allowZip64=True) as packed:
        for half in ("a", "z"):
            with packed.open(f"{half}-filler.bin", "w", force_zip64=True) as sink:
                for _ in range(1000):  # 1,000 MiB each side: the model lies in the middle of 2 GB
                    sink.write(filler)
            if half == "a":
                packed.writestr(zipfile.ZipInfo("figure/model.stl"), model, compress_type=zipfile.ZIP_DEFLATED)
    with zipfile.ZipFile(archive) as packed:
        info = packed.getinfo("figure/model.stl")
    header = 30 + len(info.filename.encode()) + len(info.extra)
    with CountingReader(archive) as reader:
        started = time.monotonic()
        chunks = zip_member_chunks(
            reader,
            header_offset=info.header_offset,
            compressed_size=info.compress_size,
            size=info.file_size,
            crc32=info.CRC,
        )
        first = next(chunks)
        first_byte = time.monotonic() - started
        served = len(first) + sum(len(chunk) for chunk in chunks)
        whole = time.monotonic() - started
    assert served == len(model)
    print(
        f"archive {archive.stat().st_size / 1e9:.2f} GB; member {info.file_size:,} bytes, {info.compress_size:,} "
        f"compressed, local header {header} bytes; read {reader.read_bytes:,} bytes = "
        f"{reader.read_bytes / (info.compress_size + header):.4f} × (compressed + header); first byte after "
        f"{first_byte * 1000:.1f} ms, all of it after {whole * 1000:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--draw-only")
    parser.add_argument("--make")
    parser.add_argument("--list")
    parser.add_argument("--skip-2gb", action="store_true")
    options = parser.parse_args()
    if options.draw_only:
        draw_only(options.draw_only)
        return
    if options.list:
        listed_in_child(options.list)
        return
    if options.make:
        models_make(Path(options.make))
        return
    with tempfile.TemporaryDirectory(prefix="bench-previews-") as folder:
        previews(Path(folder))
        if not options.skip_2gb:
            one_file_out(Path(folder))


if __name__ == "__main__":
    main()
