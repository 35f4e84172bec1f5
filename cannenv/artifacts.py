"""The inputs of an image build: CANN installer files from ``--artifacts DIR``, and cannenv's own wheel.

Installers are downloaded by the user from the vendor; cannenv never fetches them. Each one the
stack needs is looked up in the directory by its vendor file name — the name of its era
(versions.md §3.1), as the matrix gives it — and its sha256 is checked against the matrix before any
build step. Where the vendor publishes the digest of a ``.zip`` download only (CANN 8.1.RC1 and
later, from the vendor's ascend-deployer manifests), that zip is accepted: its digest is checked
first, then the ``.run`` is extracted from it. A mismatch refuses the build naming the file and both
digests. A file whose digest the matrix does not pin is refused unless ``allow_unpinned``; its digest
is then recorded in the lock.
"""

from __future__ import annotations

from pathlib import Path

from cannenv.errors import ExternalError, InputError, IntegrityError, NotFoundError, did_you_mean
from cannenv.fsutil import sha256_file
from cannenv.image.spec import ImageSpec, InstallerRef, VerifiedInstaller

__all__ = ["VerifiedInstaller", "build_cannenv_wheel", "locate", "source_checkout", "verify_installers"]


def _candidates(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith((".run", ".zip")))


def locate(ref: InstallerRef, directory: Path) -> Path:
    """The file for ``ref`` in ``directory``: the vendor's zip of it when the matrix knows the zip's
    digest and the zip is there, else the exact vendor ``.run`` file name; or NotFoundError with a hint."""
    if ref.archive is not None and (directory / ref.archive).is_file():
        return directory / ref.archive
    path = directory / ref.file
    if path.is_file():
        return path
    have = _candidates(directory)
    wanted = ref.file
    if ref.archive:
        wanted = f"{ref.archive} (the vendor's download, sha256-checked) or {ref.file}"
    near = did_you_mean(ref.file, have) or (did_you_mean(ref.archive, have) if ref.archive else None)
    same_case = [n for n in have if n.lower() in (ref.file.lower(), (ref.archive or "").lower())]
    if same_case:
        hint = f"{same_case[0]} differs only in letter case; rename it to {wanted}"
    elif near:
        hint = f"{near} The {ref.component} installer of CANN {ref.version} must be named exactly {wanted}"
    else:
        hint = f"download {wanted} from the vendor (versions.md §3.1 download layout) into {directory}" + (
            f"; the directory has: {', '.join(have)}" if have else ""
        )
    raise NotFoundError(f"{directory} has no {ref.component} installer {wanted}", hint=hint)


def _unpinned(spec: ImageSpec, unpinned: list[InstallerRef], directory: Path) -> IntegrityError:
    """The refusal of installers without a digest, naming each way forward."""
    with_zip = [ref.archive for ref in unpinned if ref.archive]
    nnal = next((r for r in unpinned if r.component == "nnal" and not r.archive), None)
    message = f"the matrix pins no sha256 for {', '.join(r.file for r in unpinned)} (stack {spec.stack_id})"
    if nnal is not None:
        message += f"; NNAL {nnal.version} is in the image because of --with-nnal"
    gaps = [r.digest_gap for r in unpinned if r.digest_gap]
    if gaps:
        message += ":\n  " + "\n  ".join(gaps)
    return IntegrityError(
        message,
        hint=(
            f"put the vendor's download {', '.join(with_zip)} (whose sha256 the matrix has) into "
            f"{directory} instead; or "
            if with_zip
            else ""
        )
        + "pass --allow-unpinned to build anyway; the digest of the file used is then recorded "
        "in the lock file as pinned: false (or add the digest to the stack's artifacts in your own "
        "matrix file, --matrix)"
        + ("; or leave NNAL out of the image (drop --with-nnal)" if nnal is not None else ""),
    )


def verify_installers(
    spec: ImageSpec,
    directory: Path,
    *,
    allow_unpinned: bool = False,
    extract_dir: Path | None = None,
) -> tuple[VerifiedInstaller, ...]:
    """Locate and verify every installer of ``spec`` in ``directory``; refuse on any problem.

    All files are located first (so a missing file is reported before hashing GBs). A vendor zip's
    sha256 is checked against the matrix's vendor digest before anything is read from it; only then
    is its ``.run`` extracted (:mod:`cannenv.vendorzip`) into ``extract_dir`` (default: a new
    temporary directory) and hashed. A bare ``.run`` is hashed and compared with the stack's pin.
    """
    from cannenv.vendorzip import check_digest, extract_member

    if not directory.is_dir():
        raise InputError(
            f"--artifacts {directory} is not a directory",
            hint="give the directory that holds the vendor's .zip downloads or .run installer files",
        )
    located = [(ref, locate(ref, directory)) for ref in spec.installers]
    zipped = [(ref, path) for ref, path in located if ref.archive is not None and path.name == ref.archive]
    unpinned = [ref for ref, path in located if ref.sha256 is None and (ref, path) not in zipped]
    if unpinned and not allow_unpinned:
        raise _unpinned(spec, unpinned, directory)
    for ref, path in zipped:  # every vendor digest first, before any extraction or build step
        assert ref.archive_sha256 is not None
        check_digest(path, ref.archive_sha256, source=ref.archive_source or "the matrix")
    out = []
    dest = extract_dir
    for ref, path in located:
        if (ref, path) in zipped:
            if dest is None:
                import tempfile

                dest = Path(tempfile.mkdtemp(prefix="cannenv-unzip-"))
            ex = extract_member(path, ref.file, dest / ref.component)
            out.append(VerifiedInstaller(ref, ex.path, ex.sha256, pinned=True, from_archive=True))
            continue
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
