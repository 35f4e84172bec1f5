"""Facts: what the probes found on a host, as plain serialisable data.

Facts are the seam between gathering and judging: ``cannenv facts --json > host.json`` on an NPU
box, ``cannenv doctor --facts host.json`` anywhere. Every section is a frozen value dataclass
(:mod:`cannenv.values`), validated by pydantic when read back; the top-level :class:`Facts`
carries ``schema_version`` so a saved file from a newer cannenv is refused with a clear message
instead of being misread.

Paths in facts are spelled as on the probed host (``/usr/local/Ascend/...``), never as the local
path under ``--root``.
"""

from __future__ import annotations

from dataclasses import field
from pathlib import Path

from cannenv.compat import Literal
from cannenv.values import to_json, value

SCHEMA_VERSION = 1
"""Bump when a field changes meaning or is removed; adding optional fields keeps the version."""

IssueKind = Literal[
    "empty",
    "binary",
    "oversized",
    "permission-denied",
    "unreadable",
    "dangling-symlink",
    "symlink-loop",
    "not-a-file",
    "malformed",
    "command-failed",
    "command-timeout",
    "probe-crashed",
]


@value
class ProbeIssue:
    """Something a probe could not read or understand. Becomes a finding; the doctor carries on."""

    probe: str
    kind: IssueKind
    path: str | None = None
    message: str


@value
class DriverFacts:
    """``/usr/local/Ascend/driver/version.info`` (research §4.1)."""

    path: str
    version: str | None = None
    """``package_version`` when present, else ``Version`` (research §4.1 parsing note)."""
    innerversion: str | None = None
    compatible_version: tuple[str, ...] = ()
    """Entries like ``V100R001C18`` (brackets removed)."""
    compatible_version_fw: tuple[str, ...] = ()
    """Entries like ``7.0.0,7.2.99`` (brackets removed)."""
    lib64: bool = False


@value
class FirmwareFacts:
    """``/usr/local/Ascend/firmware/version.info`` (research §4.2)."""

    path: str
    version: str | None = None
    package_version: str | None = None
    compatible_version_drv: tuple[str, ...] = ()


@value
class ComponentInfo:
    """A per-component ``version.info`` (toolkit, opp, opp_kernel, runtime ...; research §4.5)."""

    name: str
    path: str
    version: str | None = None
    version_dir: str | None = None
    required: dict[str, str] = field(default_factory=dict)
    """``required_package_<name>_version`` values without quotes, keyed by ``<name>``."""


@value
class OpsPackage:
    """A chip ops/kernels package installed into a CANN version (research §3.1, §3.3, §4.5)."""

    path: str
    package_name: str | None = None
    version: str | None = None
    version_dir: str | None = None
    chips: tuple[str, ...] = ()
    """Chip series the kernels are built for, spelled as in package names: ``910b``, ``310p``, ``a3``."""
    chip_source: str | None = None

    @property
    def cann_version(self) -> str | None:
        """The package's CANN version from its version files: the install record's ``version=`` first
        (an ops-only upgrade keeps the ``cann-<version>`` directory name), then ``version_dir``."""
        if self.package_name and self.version:
            return self.version
        return self.version_dir or self.version


@value
class CannInstall:
    """One CANN toolkit version on disk."""

    path: str
    layout: Literal["toolkit", "cann"]
    """``toolkit``: ≤ 8.3 ``ascend-toolkit/<ver>``; ``cann``: ≥ 8.5 ``cann-<ver>`` (research §3.3)."""
    version: str | None = None
    version_source: str | None = None
    innerversion: str | None = None
    compatible_version: tuple[str, ...] = ()
    arch: str | None = None
    info_path: str | None = None
    user_install: bool = False
    components: tuple[ComponentInfo, ...] = ()
    ops: tuple[OpsPackage, ...] = ()
    set_env: str | None = None
    """The ``set_env.sh`` that selects this install."""
    name_version: str | None = None
    """The version the directory name says (``cann-9.0.0``): a hint only, never the version."""
    found_via: str | None = None
    """How the install was found when not under a standard base (``ASCEND_HOME_PATH=…``, pip, conda)."""


@value
class NnalFacts:
    """NNAL / ATB (research §3.3, §4.5, §5.3)."""

    path: str
    version: str | None = None
    versions: tuple[str, ...] = ()
    abis: tuple[str, ...] = ()
    set_env: str | None = None


@value
class MindieFacts:
    """MindIE as its ``.run`` installer records it (docs/doctor.md names the vendor sources).

    ``layout`` ``mindie``: ``<base>/latest/version.info`` with ``Ascend-mindie : <version>`` and one
    ``mindie-<part>: <version>`` line per part (Ascend/MindIE-Motor ``build/mindie/create_package.sh``,
    ``install.sh``); ``mindie-llm``: only ``<base>/mindie-llm/latest/version.info`` with
    ``MindIE-LLM Version : <version>`` (Ascend/MindIE-LLM ``scripts/install.sh``), which names no
    MindIE release."""

    path: str
    """the MindIE base directory (``/usr/local/Ascend/mindie``, or ``$HOME/Ascend/mindie``)"""
    version_file: str
    layout: Literal["mindie", "mindie-llm"] = "mindie"
    version: str | None = None
    """``Ascend-mindie`` as written, without the product name (``MindIE 2.1.RC2.B080`` ->
    ``2.1.RC2.B080``); None where the file names no MindIE release"""
    parts: dict[str, str] = field(default_factory=dict)
    """``mindie-service``, ``mindie-llm``, ``mindie-rt`` … -> the version each line names"""


@value
class CannFacts:
    installs: tuple[CannInstall, ...] = ()
    active: str | None = None
    """Path of the install in use, or None."""
    active_reason: str = ""
    links: dict[str, str] = field(default_factory=dict)
    """Selector links (``ascend-toolkit/latest``, ``cann``) -> the directory they resolve to."""
    install_record: dict[str, str] = field(default_factory=dict)
    install_record_path: str | None = None
    nnal: NnalFacts | None = None

    def active_install(self) -> CannInstall | None:
        for inst in self.installs:
            if inst.path == self.active:
                return inst
        return None


@value
class CommandOutcome:
    argv: tuple[str, ...]
    returncode: int | None = None
    timed_out: bool = False
    missing: bool = False
    duration_s: float = 0.0
    message: str = ""


@value
class NpuChip:
    """One row pair of ``npu-smi info`` (research §4.7)."""

    npu_id: int
    chip_id: int
    phy_id: int | None = None
    name: str
    health: str
    bus_id: str | None = None
    memory_mib: int | None = None
    """device memory total as the chip row shows it (HBM-Usage, or Memory-Usage where npu-smi has no
    HBM column: 310P), MiB"""


@value
class PciDevice:
    address: str
    vendor: str
    device: str
    subsystem: str | None = None
    """``subsystem_vendor:subsystem_device`` (``19e5:4003``), which tells some products apart"""


@value
class DeviceFacts:
    npu_smi_path: str | None = None
    npu_smi: CommandOutcome | None = None
    smi_version: str | None = None
    driver_version: str | None = None
    """the driver npu-smi's header names (``Version:``): the driver the running kernel has loaded"""
    module_version: str | None = None
    """the loaded driver kernel module's own version (``/sys/module/<module>/version``), where the
    module declares one and it reads as a driver version"""
    module_version_source: str | None = None
    chips: tuple[NpuChip, ...] = ()
    board: dict[str, str] = field(default_factory=dict)
    soc: str | None = None
    family: str | None = None
    family_source: str | None = None
    product: str | None = None
    """the product (hardware ``products``: atlas-350 …) where the host tells it"""
    product_source: str | None = None
    product_candidates: tuple[str, ...] = ()
    """where the product cannot be told: the family's products it may be"""
    pci: tuple[PciDevice, ...] = ()
    dev_nodes: tuple[str, ...] = ()


@value
class ContainerFacts:
    in_container: bool = False
    evidence: tuple[str, ...] = ()
    present: tuple[str, ...] = ()
    """Expected device nodes and driver mounts that exist."""
    absent: tuple[str, ...] = ()
    """Expected device nodes and driver mounts that do not exist."""


@value
class PythonFacts:
    source: Literal["interpreter", "site-packages", "none"] = "none"
    interpreter: str | None = None
    version: str | None = None
    site_dirs: tuple[str, ...] = ()
    packages: dict[str, str] = field(default_factory=dict)
    """Canonical distribution name (PEP 503) -> version."""
    torch_npu_dir: str | None = None
    torch_dir: str | None = None
    torch_cxx11_abi: bool | None = None
    error: str | None = None
    externally_managed: bool | None = None
    """The interpreter refuses ``pip install`` (PEP 668: an ``EXTERNALLY-MANAGED`` marker, not a venv,
    not allowed by pip's configuration or ``PIP_BREAK_SYSTEM_PACKAGES``); None: not asked."""


@value
class NeededLib:
    name: str
    found: str | None = None
    via: str | None = None


@value
class ElfLibrary:
    path: str
    needed: tuple[NeededLib, ...] = ()
    runpath: tuple[str, ...] = ()
    rpath: tuple[str, ...] = ()
    error: str | None = None


@value
class AbiFacts:
    checked: bool = False
    reason: str = ""
    libraries: tuple[ElfLibrary, ...] = ()
    search_ld_library_path: tuple[str, ...] = ()
    ld_cache: str | None = None
    ld_cache_entries: int = 0


@value
class EnvFacts:
    vars: dict[str, str] = field(default_factory=dict)
    """Stack-relevant variables; values of secret-looking names are ``<redacted>``."""
    redacted: tuple[str, ...] = ()
    ld_library_path: tuple[str, ...] = ()
    path: tuple[str, ...] = ()
    pythonpath: tuple[str, ...] = ()


@value
class OsFacts:
    distro_id: str | None = None
    distro_version: str | None = None
    pretty_name: str | None = None
    arch: str | None = None
    kernel: str | None = None
    glibc: str | None = None
    gcc: str | None = None
    cmake: str | None = None
    hwhiaiuser_user: bool = False
    hwhiaiuser_group: bool = False


@value
class HccnDevice:
    """One NPU device (a die on A3) as ``/etc/hccn.conf``, ``hccn_tool`` and ``npu-smi info -t
    spod-info`` describe it (research §5.1). The id is the physical device id (``address_<id>``)."""

    phy_id: int
    address: str | None = None
    """``address_<id>`` of hccn.conf: the device IP HCCL uses (rank table ``device_ip``)."""
    netmask: str | None = None
    gateway: str | None = None
    netdetect: str | None = None
    tls_conf: str | None = None
    """``tls_enable_<id>`` of hccn.conf, when written there."""
    ip: str | None = None
    """``hccn_tool -i <id> -ip -g`` ``ipaddr:`` (what the device really holds)."""
    ip_netmask: str | None = None
    ip_missing: bool = False
    """``Get ipconf failed, because no ip was preset there!``"""
    link: str | None = None
    """``hccn_tool -i <id> -link -g``: ``UP`` / ``DOWN``."""
    net_health: str | None = None
    """``hccn_tool -i <id> -net_health -g``: ``Success``, ``Fault``, ``Init`` ..."""
    tls: str | None = None
    """``hccn_tool -i <id> -tls -g``: the ``tls switch[N]`` value, ``0`` or ``1``."""
    sdid: str | None = None
    """``npu-smi info -t spod-info``: ``SDID`` (A3 ``super_device_id``)."""
    super_pod_id: str | None = None
    super_pod_size: str | None = None
    server_index: str | None = None
    source: str = ""
    """Where the hccn_tool/spod-info values came from: ``run``, a captured file, or empty."""
    errors: tuple[str, ...] = ()


@value
class MultinodeFacts:
    """What multi-node jobs (HCCL across servers) need from a host (research §5; docs/multinode.md)."""

    hccn_conf_path: str | None = None
    """``/etc/hccn.conf`` when present, else None."""
    hccn_conf: dict[str, str] = field(default_factory=dict)
    """Every ``key=value`` line of hccn.conf (``address_0`` ...), as written."""
    hccn_tool_path: str | None = None
    hccn_source: Literal["run", "captured", "none"] = "none"
    hccn_note: str = ""
    """Why no hccn_tool values were gathered (not found, a tree without a capture, a timeout)."""
    devices: tuple[HccnDevice, ...] = ()
    port_16666: Literal["free", "in-use", "unknown"] = "unknown"
    """HCCL's default device port (EI0019 when another process listens on it)."""
    port_source: str = ""
    topo_files: tuple[str, ...] = ()
    """Ascend 950 factory topology files in ``/usr/local/Ascend/driver/topo/`` (rank table v2.0)."""
    topo_ports: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """``<net_layer>:<local_id>`` -> the ``Die/port`` names of that NPU's links at that layer, from
    the topology files' ``edge_list`` (``local_a_ports`` / ``local_b_ports``)."""


@value
class Facts:
    """Everything the probes found. ``Facts.from_json(Facts.to_json())`` is the identity."""

    schema_version: int = SCHEMA_VERSION
    cannenv_version: str = ""
    collected_at: str = ""
    root: str = "/"
    live: bool = True
    hostname: str | None = None
    os: OsFacts = OsFacts()
    driver: DriverFacts | None = None
    firmware: FirmwareFacts | None = None
    install_record: dict[str, str] = field(default_factory=dict)
    cann: CannFacts = CannFacts()
    devices: DeviceFacts = DeviceFacts()
    container: ContainerFacts = ContainerFacts()
    python: PythonFacts = PythonFacts()
    abi: AbiFacts = AbiFacts()
    env: EnvFacts = EnvFacts()
    multinode: MultinodeFacts = MultinodeFacts()
    mindie: MindieFacts | None = None
    issues: tuple[ProbeIssue, ...] = ()

    def to_json(self, *, indent: int | None = 2) -> str:
        return to_json(self, indent=indent)

    @classmethod
    def from_json(cls, text: str, *, source: str = "<facts>", memo: dict[str, Facts] | None = None) -> Facts:
        """Parse saved facts; a bad file is an InputError naming the file and the field.

        ``memo`` (one per collection): facts that differ from one already read only in
        ``hostname`` and ``collected_at`` are that one's, with those two fields set — a fleet's
        nodes of one pool are validated once (every file is still read, parsed and scanned)."""
        from cannenv import records

        hint = "produce facts with `cannenv facts --json > host.json`; do not edit them by hand"
        raw = records.parse_json(text, source=source, hint=hint)
        # A template marker in a string value or key must be in the text itself unless a \u escape
        # spells one of its characters: text with neither holds none (no walk over every string).
        scan = "\\u" in text or any(m in text for m in _markers())
        where = records.find_string(raw, _template_like) if scan else None
        if where is not None:
            from cannenv.errors import InputError

            raise InputError(
                f"{source}: field {where or '(top level)'}: holds a template marker ({{{{, {{% or {{#); "
                "facts are data, and no host reports such a value",
                hint=hint,
            )
        records.check_schema_version(
            raw,
            source=source,
            supported=SCHEMA_VERSION,
            what="facts",
            hint="collect the facts again with this cannenv version, or upgrade cannenv",
        )
        key = None
        if memo is not None and isinstance(raw, dict):
            name, when = raw.get("hostname"), raw.get("collected_at", "")
            if (name is None or isinstance(name, str)) and isinstance(when, str):
                import json

                rest = {k: v for k, v in raw.items() if k not in ("hostname", "collected_at")}
                key = json.dumps(rest, sort_keys=True, separators=(",", ":"))
                seen = memo.get(key)
                if seen is not None:
                    from dataclasses import replace

                    return replace(seen, hostname=name, collected_at=when)
        facts = records.validate(cls, raw, source=source, hint=hint).redacted()
        if key is not None and memo is not None:
            memo[key] = facts
        return facts

    def redacted(self) -> Facts:
        """These facts with the redaction policy applied again (facts written by another tool or
        an older cannenv may carry secrets; no output of cannenv shows them)."""
        from dataclasses import replace

        from cannenv.redact import redact_kept

        kept, names = redact_kept(self.env.vars)
        if kept == self.env.vars:
            return self
        env = replace(self.env, vars=kept, redacted=tuple(sorted(set(self.env.redacted) | set(names))))
        return replace(self, env=env)

    @classmethod
    def load(cls, path: str | Path) -> Facts:
        from cannenv import records
        from cannenv.errors import NotFoundError

        text = records.read_text(path, what="facts file", missing=NotFoundError)
        return cls.from_json(text, source=str(path))


def _markers() -> tuple[str, ...]:
    from cannenv.sanitize import TEMPLATE_MARKERS

    return tuple(TEMPLATE_MARKERS)


def _template_like(text: str) -> bool:
    return any(m in text for m in _markers())
