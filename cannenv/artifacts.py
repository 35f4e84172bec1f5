"""The inputs of an image build: CANN installer files from ``--artifacts DIR``, and cannenv's own wheel.

Installers are downloaded by the user from the vendor; cannenv never fetches them. Each one the
stack needs is looked up in the directory by its vendor file name — the name of its era
(versions.md §3.1), as the matrix gives it — and its sha256 is checked against the matrix before any
build step. A mismatch refuses the build naming the file and both digests. A file whose digest the
matrix does not pin is refused unless ``allow_unpinned``; its digest is then recorded in the lock.
"""

from __future__ import annotations

from pathlib import Path

from cannenv.errors import ExternalError, InputError, IntegrityError, NotFoundError, did_you_mean
from cannenv.fsutil import sha256_file
from cannenv.image.spec import ImageSpec, InstallerRef, VerifiedInstaller

__all__ = ["VerifiedInstaller", "build_cannenv_wheel", "locate", "source_checkout", "verify_installers"]


def _candidates(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".run"))


def locate(ref: InstallerRef, directory: Path) -> Path:
    """The file for ``ref`` in ``directory`` (exact vendor file name), or NotFoundError with a hint."""
    path = directory / ref.file
    if path.is_file():
        return path
    have = _candidates(directory)
    near = did_you_mean(ref.file, have)
    same_case = [n for n in have if n.lower() == ref.file.lower()]
    if same_case:
        hint = f"{same_case[0]} differs only in letter case; rename it to {ref.file}"
    elif near:
        hint = f"{near} The {ref.component} installer of CANN {ref.version} must be named exactly {ref.file}"
    else:
        hint = f"download {ref.file} from the vendor (versions.md §3.1 download layout) into {directory}" + (
            f"; the directory has: {', '.join(have)}" if have else ""
        )
    raise NotFoundError(f"{directory} has no {ref.component} installer {ref.file}", hint=hint)


def verify_installers(
    spec: ImageSpec, directory: Path, *, allow_unpinned: bool = False
) -> tuple[VerifiedInstaller, ...]:
    """Locate and verify every installer of ``spec`` in ``directory``; refuse on any problem.

    All files are located first (so a missing file is reported before hashing GBs), then hashed.
    """
    if not directory.is_dir():
        raise InputError(
            f"--artifacts {directory} is not a directory",
            hint="give the directory that holds the vendor's .run installer files",
        )
    located = [(ref, locate(ref, directory)) for ref in spec.installers]
    unpinned = [ref.file for ref, _ in located if ref.sha256 is None]
    if unpinned and not allow_unpinned:
        raise IntegrityError(
            f"the matrix pins no sha256 for {', '.join(unpinned)} (stack {spec.stack_id})",
            hint="pass --allow-unpinned to build anyway; the digest of the file used is then recorded "
            "in the lock file (or add the digest to the stack's artifacts in the matrix)",
        )
    out = []
    for ref, path in located:
        digest = sha256_file(path)
        if ref.sha256 is not None and digest != ref.sha256:
            raise IntegrityError(
                f"{path}: sha256 {digest} does not match the digest pinned in the matrix for "
                f"{ref.file} ({ref.sha256})",
                hint="the file is corrupt, truncated or not the vendor's release: download it again "
                "and compare with the digest the vendor publishes",
            )
        out.append(VerifiedInstaller(ref, path, digest, pinned=ref.sha256 is not None))
    return tuple(out)


def source_checkout() -> Path | None:
    """The repository root when cannenv runs from a source checkout (pyproject.toml beside it)."""
    root = Path(__file__).resolve().parent.parent
    pyproject = root / "pyproject.toml"
    if pyproject.is_file() and 'name = "cannenv"' in pyproject.read_text(encoding="utf-8"):
        return root
    return None


def build_cannenv_wheel(dest: Path, *, source: Path | None = None, timeout: float = 300.0) -> Path:
    """Build a wheel of the cannenv checkout into ``dest`` (hatchling; reproducible timestamps)."""
    import importlib.util
    import sys

    from cannenv.host import run

    src = source or source_checkout()
    if src is None:
        raise InputError(
            "cannenv is not running from a source checkout, so there is no tree to build a wheel from",
            hint="give a wheel with --cannenv-wheel FILE, or let the image install cannenv from PyPI",
        )
    dest.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dest), str(src)]
    if importlib.util.find_spec("hatchling") is not None:
        argv.insert(4, "--no-build-isolation")
    result = run(argv, timeout=timeout)
    if not result.ok:
        raise ExternalError(
            f"building the cannenv wheel failed: {result.describe()}", hint=result.stderr[-2000:] or None
        )
    wheels = sorted(dest.glob("cannenv-*.whl"))
    if not wheels:
        raise ExternalError(f"pip wheel succeeded but left no cannenv wheel in {dest}")
    return wheels[-1]
