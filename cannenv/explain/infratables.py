"""The error tables of the infrastructure an Ascend job runs on — gRPC, MPICH, CMake, Gloo — read
from the projects' own sources into ``matrices/explain/libtables.yaml`` (docs/explain.md, "The
infrastructure's own errors").

* **gRPC** (tables ``grpc-status`` and ``grpc-core``): the status codes of ``include/grpc/status.h``
  (``GRPC_STATUS_OK`` 0 … ``GRPC_STATUS_UNAUTHENTICATED`` 16, each with the header's comment) with
  the text Python's ``grpc.StatusCode`` pairs with each (``src/python/grpcio/grpc/__init__.py``:
  ``RESOURCE_EXHAUSTED = (…resource_exhausted, "resource exhausted")``), in the forms a log shows them
  (``StatusCode.UNAVAILABLE``, ``(8, 'resource exhausted')``, the core's ``grpc_status:14``); and the
  core's own messages whose meaning gRPC's documents state (:data:`GRPC_MESSAGES`: the message size
  limits of ``message_size_filter.cc``, the 4 GiB message length ``byte_stream.cc`` asserts,
  pick_first's ``failed to connect to all addresses``).
* **MPICH** (table ``mpich``): every message of every ``errnames.txt`` of the tree (the files MPICH's
  ``maint/extracterrmsgs`` reads into its message table: ``**gethostbyname %s %d:gethostbyname
  failed, %s (errno %d)``), read as that script reads them (``#`` comments, a trailing ``\\``
  continues the text on the next line, the first definition of a name wins).
* **CMake** (table ``cmake-messages``): the configure step's messages whose meaning CMake's source
  states (:data:`CMAKE_MESSAGES`: the list-file parser's ``Parse error.  Expected a command name``,
  ``does not contain a CMakeLists.txt file``, ``Unknown CMake command`` …), each found in its file.
* **Gloo** (table ``gloo``): the messages of Gloo's TCP transport that torch.distributed's gloo
  backend raises (:data:`GLOO_MESSAGES`).

Causes are reviewed per row, each with its reason (:data:`MPICH_CAUSES`, the ``causes`` of each
message): a row whose text names no cause still belongs to the table (MPICH's ``channel
initialization failed``) and is not looked for; a message table's rows each have their own form.

    python -m cannenv.explain.infratables --import grpc TREE [--write]
    python -m cannenv.explain.infratables --import mpich TREE [--write]
    python -m cannenv.explain.infratables --import cmake TREE [--write]
    python -m cannenv.explain.infratables --import gloo TREE [--write]

(``TREE``: a checkout or ``git archive`` of the project at the commits the table's sources name.)
Without ``--write`` it prints the refresh diff (rows and forms the table lacks, has changed and no
longer has; exit 1 while there is something to review); ``--write`` replaces the table's rows and
forms in libtables.yaml (and adds the table and its sources where the file lacks them).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_SOURCE_BYTES = 4 << 20
_NP = "not-a-version-problem"


@dataclass(frozen=True)
class Message:
    """A message of a project's source whose meaning its documents state: ``literal`` is found in
    ``file`` as the source writes it (a C string's escapes kept); each form finds the printed line."""

    key: str
    file: str
    literal: str
    name: str
    meaning: str
    forms: tuple[tuple[str, str], ...]
    """(anchor, regex) pairs: the row's printed forms (linear, no capture group)."""
    causes: tuple[str, ...]
    reason: str
    source: str


@dataclass(frozen=True)
class Table:
    id: str
    title: str
    component: str


# --- the sources (title, url at a commit) --------------------------------------------------------
GRPC = "https://github.com/grpc/grpc/blob"
MPICH = "https://github.com/pmodels/mpich/blob/6a79bf6575c3b5b41cabbd3d59340634d6f9412d"
CMAKE = "https://github.com/Kitware/CMake/blob/03676b051d5a1302c8b17bb6b3325ee38acab914"
GLOO = "https://github.com/pytorch/gloo/blob"

SOURCES: dict[str, tuple[str, str]] = {
    "grpc-status-h": (
        "gRPC's status codes: enum grpc_status_code, GRPC_STATUS_OK 0 … GRPC_STATUS_UNAUTHENTICATED 16, with"
        " the header's comment per code (include/grpc/status.h)",
        f"{GRPC}/8312a63a46a8b8b18e6dbaf9bbf34594489ed6cd/include/grpc/status.h",
    ),
    "grpc-python-statuscode": (
        "gRPC Python's enum StatusCode: each code as (the core's value, its text), 'RESOURCE_EXHAUSTED ="
        " (_cygrpc.StatusCode.resource_exhausted, \"resource exhausted\")', printed as (8, 'resource"
        " exhausted') and StatusCode.RESOURCE_EXHAUSTED (src/python/grpcio/grpc/__init__.py)",
        f"{GRPC}/7f77c65c33e7bb6a12245d2d4f5d2ab068ca377b/src/python/grpcio/grpc/__init__.py",
    ),
    "grpc-status-helper": (
        "gRPC core's StatusToString: a status's integer properties printed as 'name:value', the code as"
        " 'grpc_status:14' (src/core/util/status_helper.cc; the JSON of older releases printed"
        " '\"grpc_status\":14')",
        f"{GRPC}/b70c1c67a7df415b7b1370cf4be635fbaf358fd7/src/core/util/status_helper.cc",
    ),
    "grpc-statuscodes-md": (
        "gRPC's 'Status codes and their use in gRPC': the cases in which the library itself returns each"
        " code ('Sent or received message was larger than configured limit: RESOURCE_EXHAUSTED'; the"
        " codes it never generates) (doc/statuscodes.md)",
        f"{GRPC}/02760600f45e74e18777dc249ceef165a7f5837a/doc/statuscodes.md",
    ),
    "grpc-message-size-filter": (
        "gRPC core's message size filter: 'Received message larger than max (%u vs. %d)' when a message"
        " exceeds the channel's max receive length (GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,"
        " grpc.max_receive_message_length) and 'Sent message larger than max (%u vs. %d)' over the max"
        " send length, both RESOURCE_EXHAUSTED (src/core/ext/filters/message_size/message_size_filter.cc;"
        " 1.76 prefixes 'CLIENT: '/'SERVER: ')",
        f"{GRPC}/f3a362cc0de64d5402818ed704f6d41dc538f5ed/src/core/ext/filters/message_size/message_size_filter.cc",
    ),
    "grpc-pick-first": (
        "gRPC core's pick_first load-balancing policy: after a connection attempt to every address of the"
        " target failed, UNAVAILABLE 'failed to connect to all addresses; last error: …'"
        " (src/core/load_balancing/pick_first/pick_first.cc)",
        f"{GRPC}/5cfd4aea189a15e8810c8e1c98d89003a349d2d4/src/core/load_balancing/pick_first/pick_first.cc",
    ),
    "grpc-byte-stream": (
        "gRPC core's byte stream of a message to send: grpc_slice_buffer_stream_init asserts"
        " GPR_ASSERT(slice_buffer->length <= UINT32_MAX) before keeping the length as a uint32_t, printed"
        " 'assertion failed: slice_buffer->length <= UINT32_MAX' (src/core/lib/transport/byte_stream.cc)",
        f"{GRPC}/7f2c67d5a837672d6d425e268ccf75b58ad23d2d/src/core/lib/transport/byte_stream.cc",
    ),
    "mpich-errnames": (
        "MPICH's error messages: '**name[ %fmt…]:text' per message, the table MPICH_Error_string prints"
        " from (src/mpi/errhan/errnames.txt and every errnames.txt of the tree, read by"
        " maint/extracterrmsgs)",
        f"{MPICH}/src/mpi/errhan/errnames.txt",
    ),
    "mpich-extracterrmsgs": (
        "MPICH's maint/extracterrmsgs: ReadErrnamesFile reads each errnames.txt ('#' comments, '\\' at the"
        " end of a line continues the text, the first definition of a name wins) into the message table",
        f"{MPICH}/maint/extracterrmsgs",
    ),
    "mpich-errutil": (
        "MPICH's error stack: each level printed as 'FUNC(LINE)....: message' under 'Fatal error in"
        " MPI_X: <class>, error stack:' (src/mpi/errhan/errutil.c)",
        f"{MPICH}/src/mpi/errhan/errutil.c",
    ),
    "gloo-device-cc": (
        "Gloo's TCP device: lookupAddrForIface / lookupAddrForHostname, GLOO_ENFORCE(…,"
        ' "Unable to find address for: ", iface|hostname) (gloo/transport/tcp/device.cc)',
        "https://github.com/pytorch/gloo/blob/70dc360272dfc57e3617184c78ff9b06f8cd4757/gloo/transport/tcp/device.cc",
    ),
    "gloo-pair-cc": (
        'Gloo\'s TCP pair: GLOO_ERROR_MSG("Connection closed by peer ", peer, "This is typically caused by a'
        ' remote worker crashing"), "Read error ", "Read timeout ", each prefixed \'[FILE:LINE] \''
        " (gloo/transport/tcp/pair.cc, gloo/common/error.h)",
        "https://github.com/pytorch/gloo/blob/70dc360272dfc57e3617184c78ff9b06f8cd4757/gloo/transport/tcp/pair.cc",
    ),
    "cmake-list-file-cache": (
        "CMake's list-file parser: 'Parse error.  Expected a command name, got <token type> with text"
        ' "…".\' and the other parse errors of a CMakeLists.txt or .cmake file (Source/cmListFileCache.cxx)',
        f"{CMAKE}/Source/cmListFileCache.cxx",
    ),
    "cmake-makefile": (
        "CMake's cmMakefile: 'Unknown CMake command \"X\".' (ExecuteCommand) and add_subdirectory's 'The"
        " source directory … does not contain a CMakeLists.txt file.' (Source/cmMakefile.cxx)",
        f"{CMAKE}/Source/cmMakefile.cxx",
    ),
    "cmake-add-subdirectory": (
        "CMake's add_subdirectory: 'given source \"X\" which is not an existing directory.'"
        " (Source/cmAddSubDirectoryCommand.cxx)",
        f"{CMAKE}/Source/cmAddSubDirectoryCommand.cxx",
    ),
    "cmake-cmake-cxx": (
        "CMake's pre-configure check: 'The source directory \"X\" does not appear to contain"
        " CMakeLists.txt.' (Source/cmake.cxx, DoPreConfigureChecks)",
        f"{CMAKE}/Source/cmake.cxx",
    ),
    "cmake-source-file": (
        "CMake's source file lookup: 'Cannot find source file:' followed by the path a target lists"
        " (Source/cmSourceFile.cxx)",
        f"{CMAKE}/Source/cmSourceFile.cxx",
    ),
    "cmake-include": (
        "CMake's include(): 'include could not find requested file:' followed by the file or module"
        " (Source/cmIncludeCommand.cxx)",
        f"{CMAKE}/Source/cmIncludeCommand.cxx",
    ),
    "cmake-find-package": (
        "CMake's find_package: 'By not providing \"FindX.cmake\" in CMAKE_MODULE_PATH …' and 'Could not"
        ' find a package configuration file provided by "X" …\' (Source/cmFindPackageCommand.cxx)',
        f"{CMAKE}/Source/cmFindPackageCommand.cxx",
    ),
}

# --- gRPC ----------------------------------------------------------------------------------------
GRPC_STATUS = Table("grpc-status", "gRPC", "gRPC (status codes)")
GRPC_CORE = Table("grpc-core", "gRPC core", "gRPC (the core library's messages)")
GRPC_STATUS_H = "include/grpc/status.h"
GRPC_PYTHON = "src/python/grpcio/grpc/__init__.py"

# Reviewed per code: a code gives a cause only where the header's meaning says so.
GRPC_STATUS_CAUSES: dict[str, tuple[tuple[str, ...], str]] = {
    "INVALID_ARGUMENT": (
        (_NP,),
        "the header: the client specified an invalid argument, problematic regardless of the state of the"
        " system (and gRPC's own library never generates it, doc/statuscodes.md: the application's"
        " server refused what its client passed) — the caller's input, the same on any release",
    ),
}
GRPC_NO_CAUSE = (
    "gRPC's code alone names no cause (the library returns it in several cases, doc/statuscodes.md,"
    " and an application for its own reasons): the message beside it says which"
)

_RECV = "Received message larger than max ("
_SENT = "Sent message larger than max ("
GRPC_MESSAGES: tuple[Message, ...] = (
    Message(
        "received-message-larger-than-max",
        "src/core/ext/filters/message_size/message_size_filter.cc",
        _RECV,
        "Received message larger than max (N vs. M)",
        "a message received was larger than the channel's max receive message length (RESOURCE_EXHAUSTED)",
        (
            (
                "message larger than max (",
                r"Received message larger than max \([0-9]{1,20} vs\. -?[0-9]{1,20}\)",
            ),
        ),
        (_NP,),
        "gRPC's filter checks each message against the limit the application configured for the channel"
        " (GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, grpc.max_receive_message_length; 4 MB by default), and"
        " gRPC's status table lists 'message larger than configured limit' as RESOURCE_EXHAUSTED: the"
        " application's message size or its limit, no version changes either",
        "grpc-message-size-filter",
    ),
    Message(
        "sent-message-larger-than-max",
        "src/core/ext/filters/message_size/message_size_filter.cc",
        _SENT,
        "Sent message larger than max (N vs. M)",
        "a message to send was larger than the channel's max send message length (RESOURCE_EXHAUSTED)",
        (("message larger than max (", r"Sent message larger than max \([0-9]{1,20} vs\. -?[0-9]{1,20}\)"),),
        (_NP,),
        "gRPC's filter checks each message sent against the limit the application configured"
        " (GRPC_ARG_MAX_SEND_MESSAGE_LENGTH, grpc.max_send_message_length), and gRPC's status table lists"
        " 'message larger than configured limit' as RESOURCE_EXHAUSTED: the application's message size"
        " or its limit, no version changes either",
        "grpc-message-size-filter",
    ),
    Message(
        "message-over-uint32-max",
        "src/core/lib/transport/byte_stream.cc",
        "GPR_ASSERT(slice_buffer->length <= UINT32_MAX);",
        "assertion failed: slice_buffer->length <= UINT32_MAX",
        "a message to send is longer than a 32-bit length holds (4 GiB): the core asserts and aborts",
        (
            (
                "slice_buffer->length <= UINT32_MAX",
                r"assertion failed: slice_buffer->length <= UINT32_MAX",
            ),
        ),
        (_NP,),
        "the core keeps a message's length as a uint32_t and asserts that the message fits: no message of"
        " 4 GiB or more can be sent, on any release — the application's message must be smaller (split it)",
        "grpc-byte-stream",
    ),
    Message(
        "failed-to-connect-to-all-addresses",
        "src/core/load_balancing/pick_first/pick_first.cc",
        "failed to connect to all addresses; last error: ",
        "failed to connect to all addresses",
        "every address the target resolved to refused or failed the connection (UNAVAILABLE); the last"
        " error follows",
        (("failed to connect to all addresses", "failed to connect to all addresses"),),
        (_NP,),
        "pick_first reports it after a connection attempt to every address of the target failed: the"
        " server is not listening there (not started, gone, the wrong address or port) or not reachable"
        " (a firewall, a proxy the client's environment names) — the deployment's addresses and network,"
        " not a version",
        "grpc-pick-first",
    ),
)


def _read(path: Path) -> str:
    if path.stat().st_size > MAX_SOURCE_BYTES:
        raise ValueError(f"{path}: larger than {MAX_SOURCE_BYTES} bytes")
    return path.read_text(encoding="utf-8", errors="replace")


_GRPC_ENUMERATOR = re.compile(r"^\s*GRPC_STATUS_([A-Z_]+)\s*=\s*([0-9]+)\s*,")
_GRPC_PY = re.compile(r"""\b([A-Z_]+) = \(\s*_cygrpc\.StatusCode\.[a-z_]+,\s*["']([a-z ]+)["'],?\s*\)""")


def _grpc_enum(header: str) -> list[tuple[str, str, str]]:
    """(comment, name, value) of each ``/** comment */ GRPC_STATUS_NAME = N,`` of the header."""
    out: list[tuple[str, str, str]] = []
    comment: list[str] = []
    inside = False
    for line in header.splitlines():
        text = line.strip()
        if text.startswith("/**"):
            inside, comment = True, []
            text = text[3:]
        if inside:
            end = text.find("*/")
            comment.append(text if end < 0 else text[:end])
            inside = end < 0
            continue
        m = _GRPC_ENUMERATOR.match(line)
        if m:
            out.append((" ".join(" ".join(comment).split()), m.group(1), m.group(2)))
            comment = []
    return out


def read_grpc_status(tree: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """gRPC's status codes: rows (key: the value, name and printed: the code's name) and forms."""
    texts = {m.group(1): m.group(2) for m in _GRPC_PY.finditer(_read(tree / GRPC_PYTHON))}
    rows: list[dict[str, Any]] = []
    for comment, name, value in _grpc_enum(_read(tree / GRPC_STATUS_H)):
        if name not in texts:
            raise ValueError(f"{GRPC_PYTHON}: no StatusCode.{name}")
        causes, reason = GRPC_STATUS_CAUSES.get(name, ((), GRPC_NO_CAUSE))
        if name == "OK":
            reason = "not an error (the success value)"
        row: dict[str, Any] = {"key": value, "name": name}
        if len(name) >= 3:
            row["printed"] = name
        row |= {"meaning": f"{comment} (Python: '{texts[name]}')", "causes": list(causes), "reason": reason}
        row["source"] = "grpc-status-h"
        rows.append(row)
    names = {r["name"] for r in rows}
    if len(rows) != 17 or set(GRPC_STATUS_CAUSES) - names or set(texts) - names:
        raise ValueError(f"{GRPC_STATUS_H}: {len(rows)} codes, Python's {sorted(texts)}")
    rows.sort(key=lambda r: int(r["key"]))
    forms: list[dict[str, Any]] = [
        {
            "id": "grpc-statuscode",
            "anchor": "StatusCode",
            "regex": r"\bStatusCode(?:\.|::)([A-Z][A-Z_]{1,24})\b",
            "source": "grpc-python-statuscode",
        },
        {
            "id": "grpc-status-int",
            "anchor": "grpc_status",
            "regex": r'\bgrpc_status"?: ?([0-9]{1,2})\b',
            "source": "grpc-status-helper",
        },
    ]
    for r in rows:  # Python's StatusCode.value, as str() of the exception's code shows it
        text = texts[r["name"]]
        forms.append(
            {
                "id": f"grpc-python-value-{r['key']}",
                "anchor": f", '{text}')",
                "regex": rf"\(([0-9]{{1,2}}), '{re.escape(text)}'\)",
                "source": "grpc-python-statuscode",
            }
        )
    return rows, forms


def read_messages(
    tree: Path, messages: Sequence[Message]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A table of reviewed messages: each found in its file (an error if the source no longer has it)."""
    rows: list[dict[str, Any]] = []
    forms: list[dict[str, Any]] = []
    for m in messages:
        if m.literal not in _read(tree / m.file):
            raise ValueError(f"{m.file}: no longer has {m.literal!r} (row {m.key})")
        rows.append(
            {
                "key": m.key,
                "name": m.name,
                "meaning": m.meaning,
                "causes": list(m.causes),
                "reason": m.reason,
                "source": m.source,
            }
        )
        for i, (anchor, regex) in enumerate(m.forms):
            suffix = f"-{i + 1}" if len(m.forms) > 1 else ""
            forms.append(
                {"id": f"{m.key}{suffix}", "anchor": anchor, "regex": regex, "row": m.key, "source": m.source}
            )
    return rows, forms


# --- MPICH ---------------------------------------------------------------------------------------
MPICH_TABLE = Table("mpich", "MPICH", "MPICH (MPI: its error stack's messages)")
_MPI_NAME = re.compile(r"^\s*(\*\*[^:]*):(.*)\Z")
MPICH_STACK_LEVEL = r"\([0-9]{1,9}\)\.{0,200}: "
"""How MPIR_Err_print_stack_string prints a level of the stack: its location ``FUNC(LINE)`` padded
with dots, then ``: `` and the message (errutil.c)."""
_MPI_SPEC = re.compile(r"(%[-+ #0-9.]*(?:l{1,2}|z|h)?[a-zA-Z])")

_RESOLVE = (
    (_NP,),
    "MPICH's text: the host name (this node's, or a peer's as the hostfile and the peers' business cards"
    " give it) does not resolve on this node — /etc/hosts or DNS lacks it: the hosts' naming, which no"
    " version changes",
)
_REFUSED = (
    (_NP,),
    "MPICH's text: connection refused — nothing listens at the peer's address and port (the peer process"
    " not started or already gone, a firewall, an address on the wrong interface): the job's processes"
    " and network, not a version",
)
_OOM = (("oom",), "MPICH's text: out of memory — the host's memory (or the process's limit) ran out")
_ORDER = (
    (_NP,),
    "MPICH's text: the program called MPI out of order (before MPI_Init, after MPI_Finalize, MPI_Init"
    " twice): the program's own calls, the same on any release",
)
_DISK = (
    (_NP,),
    "MPICH's text: the file system is full or over its quota (as ENOSPC/EDQUOT): the disk, not a version",
)
_IFACE = (
    (_NP,),
    "MPICH's text: the job's settings name a network interface this node does not have, or both the"
    " interface and the host-name settings: the job's environment, not a version",
)
# Reviewed per message name (all its forms, with or without format arguments): the causes its text
# names, and why. A name absent here names no cause (an argument check, an internal step, a generic
# failure such as 'channel initialization failed', whose cause is the stack's deeper line).
MPICH_CAUSES: dict[str, tuple[tuple[str, ...], str]] = {
    "**gethostbyname": _RESOLVE,
    "**ch3|sock|hostlookup": _RESOLVE,
    "**sock|connrefused": _REFUSED,
    "**sock|poll|connrefused": _REFUSED,
    "**ch3|sock|connrefused": _REFUSED,
    "**ch3|sock|addrinuse": (
        (_NP,),
        "MPICH's text: the TCP port is already in use — another process on the node holds it: the node's"
        " processes, not a version",
    ),
    "**iface_notfound": _IFACE,
    "**ifname_and_hostname": _IFACE,
    "**nomem": _OOM,
    "**nomem2": _OOM,
    "**sock|osnomem": _OOM,
    "**nomemreq": _OOM,
    "**allocmem": _OOM,
    "**initialized": _ORDER,
    "**inittwice": _ORDER,
    "**finalized": _ORDER,
    "**filenospace": _DISK,
    "**filequota": _DISK,
}
MPICH_NO_CAUSE = "names no cause by itself; not looked for"
"""An argument check, an internal step, or a failure whose reason is the error stack's deeper line."""


def _mpich_key(name: str) -> str:
    key = name[2:].replace("|", ".").replace(" %", "-").replace("%", "-")
    return re.sub(r"[^A-Za-z0-9_.-]", "_", key)[:60]


def _esc(text: str) -> str:
    """``text`` as a regex literal (only the metacharacters escaped: the form stays readable)."""
    return re.sub(r"([\\.^$*+?{}\[\]|()])", r"\\\1", text)


def message_form(text: str) -> tuple[str, str] | None:
    """(anchor: its longest literal kept, regex) of a printf-style message: literal text,
    ``%d``/``%x``… as digits, ``%s`` as anything but the character that follows it; the regex
    stops before a ``%s`` that a space, another argument or under three characters follow (where
    the argument's end cannot be told), and a message with no argument must end its line (so the
    generic form of a name is not found in the line of its specific one). None where that literal
    is under 12 characters."""
    text = " ".join(text.split())
    if "%%" in text:
        return None
    parts = _MPI_SPEC.split(text)
    out = [_esc(parts[0])]
    kept = [parts[0]]
    for i in range(1, len(parts), 2):
        spec, after = parts[i], parts[i + 1]
        conv = spec[-1]
        if conv in "diu":
            if not after or after[0] in "0123456789":
                break
            cls = "-?[0-9]{1,20}"
        elif conv in "xXp":
            if not after or after[0] in "0123456789abcdefABCDEFxX":
                break
            cls = "[0-9a-fA-FxX]{1,20}"
        else:
            if len(after) < 3 or after[0] in " \\":
                break
            cls = f"[^{_esc(after[0])}\\n]{{0,300}}"
        out += [cls, _esc(after)]
        kept.append(after)
    anchor = max(kept, key=len)
    if len(anchor.strip()) < 12:
        return None
    regex = "".join(out)
    if len(parts) == 1:
        regex += "[ \\t]*$"
    return anchor, regex


def read_mpich(tree: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every message of every errnames.txt under ``tree`` (sorted by path), as extracterrmsgs reads them."""
    rows: list[dict[str, Any]] = []
    forms: list[dict[str, Any]] = []
    seen: set[str] = set()
    bases: set[str] = set()
    for path in sorted(tree.rglob("errnames.txt")):
        rel = path.relative_to(tree).as_posix()
        lines = _read(path).splitlines()
        i = 0
        while i < len(lines):
            line = lines[i]
            i += 1
            at = i
            if re.match(r"^\s*#", line):
                continue
            m = _MPI_NAME.match(line)
            if not m:
                continue
            name, text = m.group(1), m.group(2).rstrip("\r\n")
            while re.search(r"\\\s*\Z", text) and i < len(lines):
                text = re.sub(r"\\\s*\Z", "", text) + lines[i].lstrip()
                i += 1
            text = text.replace('\\"', '"')  # the text becomes a C string literal: \" prints "
            if name in seen:
                continue
            seen.add(name)
            base = name.split(" ", 1)[0]
            bases.add(base)
            causes, reason = MPICH_CAUSES.get(base, ((), MPICH_NO_CAUSE))
            key = _mpich_key(name)
            row: dict[str, Any] = {
                "key": key,
                "name": name,
                "meaning": " ".join(text.split()) or "(empty)",
                "causes": list(causes),
                "reason": reason,
                "source": f"mpich-{_mpich_file_id(rel)}",
                "line": at,
            }
            rows.append(row)
            form = message_form(text) if causes else None
            if causes and form is None:
                raise ValueError(f"{rel}:{at}: {name} has causes but no distinctive text to look for")
            if form:  # a level of the error stack: 'MPID_nem_tcp_init(379)......: gethostbyname failed, …'
                regex = MPICH_STACK_LEVEL + form[1]
                forms.append({"id": f"mpich-{_slug(key)}", "anchor": form[0], "regex": regex, "row": key})
                forms[-1]["source"] = "mpich-errutil"
    unknown = sorted(set(MPICH_CAUSES) - bases)
    if unknown:
        raise ValueError(f"reviewed MPICH names the tree no longer has: {', '.join(unknown)}")
    return rows, forms


def _mpich_file_id(rel: str) -> str:
    """The source id of an errnames.txt: its folder under src/ (``mpi-errhan``, ``mpid-ch3``)."""
    folder = rel.rsplit("/", 1)[0]
    folder = folder.removeprefix("src/").removesuffix("/src")
    return "errnames" if folder == "mpi/errhan" else _slug(folder)


def mpich_sources(tree: Path) -> dict[str, tuple[str, str]]:
    """The source of each errnames.txt of the tree (the main one is ``mpich-errnames``)."""
    out: dict[str, tuple[str, str]] = {}
    for path in sorted(tree.rglob("errnames.txt")):
        rel = path.relative_to(tree).as_posix()
        sid = f"mpich-{_mpich_file_id(rel)}"
        if sid == "mpich-errnames":
            out[sid] = SOURCES[sid]
            continue
        out[sid] = (
            f"MPICH's error messages of {rel.rsplit('/', 1)[0]} ({rel}, read with the main table)",
            f"{MPICH}/{rel}",
        )
    return out


def _slug(text: str) -> str:
    return "-".join(s for s in re.split(r"[^a-z0-9]+", text.lower()) if s)


# --- CMake ---------------------------------------------------------------------------------------
CMAKE_TABLE = Table("cmake-messages", "CMake", "CMake (the configure step's messages)")
_SYNTAX = (
    "CMake's parser found a token its grammar does not allow there: the file is not CMake code as it"
    " stands — its own syntax, or a file that is not what the project holds (a symbolic link checked out"
    " as a text file holding its target's path, a submodule's file missing or empty, a conflict marker):"
    " the source tree, not a version"
)
_TREE = (
    "a directory or file the project's CMake code names is not in the source tree (a submodule not"
    " cloned or an empty one, a download that did not finish): the checkout, not a version"
)
CMAKE_MESSAGES: tuple[Message, ...] = (
    Message(
        "parse-expected-command-name",
        "Source/cmListFileCache.cxx",
        "Parse error.  Expected a command name, got ",
        "Parse error.  Expected a command name, got <token> with text …",
        "the list-file parser expected a command name and read something else",
        (("Parse error.  Expected a command name", r"Parse error\.  Expected a command name, got "),),
        (_NP,),
        _SYNTAX,
        "cmake-list-file-cache",
    ),
    Message(
        "parse-expected-newline",
        "Source/cmListFileCache.cxx",
        "Parse error.  Expected a newline, got ",
        "Parse error.  Expected a newline, got <token> with text …",
        "the list-file parser expected the end of a command's line",
        (("Parse error.  Expected a newline", r"Parse error\.  Expected a newline, got "),),
        (_NP,),
        _SYNTAX,
        "cmake-list-file-cache",
    ),
    Message(
        "parse-expected-paren",
        "Source/cmListFileCache.cxx",
        'Parse error.  Expected \\"(\\", got ',
        'Parse error.  Expected "(", got <token> with text …',
        "the list-file parser expected the opening parenthesis of a command's arguments",
        (('Parse error.  Expected "(", got ', r'Parse error\.  Expected "\(", got '),),
        (_NP,),
        _SYNTAX,
        "cmake-list-file-cache",
    ),
    Message(
        "parse-missing-opening-paren",
        "Source/cmListFileCache.cxx",
        'Parse error.  Function missing opening \\"(\\".',
        'Parse error.  Function missing opening "(".',
        "a command name not followed by its arguments' parenthesis before the end of the file",
        (('Parse error.  Function missing opening "("', r'Parse error\.  Function missing opening "\("'),),
        (_NP,),
        _SYNTAX,
        "cmake-list-file-cache",
    ),
    Message(
        "parse-missing-ending-paren",
        "Source/cmListFileCache.cxx",
        'Parse error.  Function missing ending \\")\\".',
        'Parse error.  Function missing ending ")".',
        "a command's arguments not closed before the end of the file or an invalid token",
        (('Parse error.  Function missing ending ")"', r'Parse error\.  Function missing ending "\)"'),),
        (_NP,),
        _SYNTAX,
        "cmake-list-file-cache",
    ),
    Message(
        "no-cmakelists-in-subdirectory",
        "Source/cmMakefile.cxx",
        "does not contain a CMakeLists.txt file.",
        "The source directory … does not contain a CMakeLists.txt file.",
        "add_subdirectory names a directory without its CMakeLists.txt",
        (("does not contain a CMakeLists.txt file", r"does not contain a CMakeLists\.txt file"),),
        (_NP,),
        _TREE,
        "cmake-makefile",
    ),
    Message(
        "subdirectory-not-a-directory",
        "Source/cmAddSubDirectoryCommand.cxx",
        '\\" which is not an existing directory.',
        'add_subdirectory given source "X" which is not an existing directory.',
        "add_subdirectory names a directory the tree does not have",
        (
            (
                "which is not an existing directory",
                r'given source "[^"\n]{0,400}" which is not an existing directory',
            ),
        ),
        (_NP,),
        _TREE,
        "cmake-add-subdirectory",
    ),
    Message(
        "source-dir-without-cmakelists",
        "Source/cmake.cxx",
        '\\" does not appear to contain ',
        'The source directory "X" does not appear to contain CMakeLists.txt.',
        "cmake was given a source directory without a CMakeLists.txt",
        (
            (
                "does not appear to contain CMakeLists.txt",
                r'The source directory "[^"\n]{0,400}" does not appear to contain CMakeLists\.txt',
            ),
        ),
        (_NP,),
        "cmake was pointed at a directory that is not the project's (or a checkout that lacks its top"
        " CMakeLists.txt): the command line or the checkout, not a version",
        "cmake-cmake-cxx",
    ),
    Message(
        "cannot-find-source-file",
        "Source/cmSourceFile.cxx",
        "Cannot find source file:",
        "Cannot find source file: PATH",
        "a target lists a source file that is not in the tree (nor generated)",
        (("Cannot find source file:", r"Cannot find source file:"),),
        (_NP,),
        _TREE,
        "cmake-source-file",
    ),
    Message(
        "unknown-command",
        "Source/cmMakefile.cxx",
        'Unknown CMake command \\"',
        'Unknown CMake command "X".',
        "a command no loaded module or file defines, nor CMake itself",
        (('Unknown CMake command "', r'Unknown CMake command "[A-Za-z_][A-Za-z0-9_]{0,100}"'),),
        (),
        "names no cause by itself: a function or macro of a file the project did not include (or one that"
        " is missing: a submodule), or a command only a newer CMake has — the message does not tell which",
        "cmake-makefile",
    ),
    Message(
        "include-could-not-find-file",
        "Source/cmIncludeCommand.cxx",
        "could not find requested file:",
        "include could not find requested file: X",
        "include() found neither the file nor a module of that name",
        (("include could not find requested file", r"include could not find requested file"),),
        (),
        "names no cause by itself: a file of the tree that is missing, or a module this CMake does not ship"
        " — the name under it decides",
        "cmake-include",
    ),
    Message(
        "find-package-config-not-found",
        "Source/cmFindPackageCommand.cxx",
        "Could not find a package configuration file ",
        'Could not find a package configuration file provided by "X" …',
        "find_package found neither a FindX.cmake module nor the package's configuration file",
        (
            (
                "Could not find a package configuration file",
                r'Could not find a package configuration file (?:named|provided by) "',
            ),
            (
                'By not providing "Find',
                r'By not providing "Find[A-Za-z0-9_.+-]{1,100}\.cmake" in CMAKE_MODULE_PATH',
            ),
        ),
        (),
        "names no cause by itself: the package is not installed, or not where CMake looks (CMAKE_PREFIX_PATH,"
        " X_DIR) — which package it is decides",
        "cmake-find-package",
    ),
)

# --- Gloo ----------------------------------------------------------------------------------------
GLOO_TABLE = Table("gloo", "Gloo", "Gloo (torch.distributed's gloo backend)")
_GLOO_AT = r"\.(?:cc|h):[0-9]{1,6}\] "
"""GLOO_ERROR_MSG's prefix before the message: ``[gloo/transport/tcp/pair.cc:554] `` (common/error.h)."""
_PEER = (
    "names no cause by itself: Gloo's own text says the peer failed (a remote worker that crashed or hangs,"
    " or the application's bug): the peer's log decides"
)
GLOO_MESSAGES: tuple[Message, ...] = (
    Message(
        "unable-to-find-address",
        "gloo/transport/tcp/device.cc",
        '"Unable to find address for: "',
        "Unable to find address for: IFACE|HOST",
        "the TCP device found no address for the network interface (GLOO_SOCKET_IFNAME) or the host name"
        " it was given, or could not bind one",
        (("Unable to find address for", r"Unable to find address for:? [^ \n]"),),
        (_NP,),
        "Gloo's device looks up the interface the job names (torch.distributed: GLOO_SOCKET_IFNAME) or the"
        " host's name and binds its address: the node has no such interface with an address, or the name"
        " does not resolve to a local address — the job's network settings or /etc/hosts, not a version",
        "gloo-device-cc",
    ),
    Message(
        "connection-closed-by-peer",
        "gloo/transport/tcp/pair.cc",
        '"Connection closed by peer "',
        "Connection closed by peer [ADDR]:PORT",
        "the peer closed the connection (EOF); Gloo: typically caused by a remote worker crashing",
        (("] Connection closed by peer", _GLOO_AT + "Connection closed by peer "),),
        (),
        _PEER,
        "gloo-pair-cc",
    ),
    Message(
        "read-error",
        "gloo/transport/tcp/pair.cc",
        '"Read error "',
        "Read error [ADDR]:PORT: strerror",
        "reading from the peer failed; Gloo: typically caused by a remote worker hanging or bugs in the"
        " application",
        (("] Read error ", _GLOO_AT + "Read error "),),
        (),
        _PEER,
        "gloo-pair-cc",
    ),
    Message(
        "read-timeout",
        "gloo/transport/tcp/pair.cc",
        '"Read timeout "',
        "Read timeout [ADDR]:PORT",
        "the peer sent nothing within the timeout",
        (("] Read timeout ", _GLOO_AT + "Read timeout "),),
        (),
        "names no cause by itself: the peer is slow, hangs or is gone — the peer's log decides",
        "gloo-pair-cc",
    ),
)

IMPORTS: dict[str, tuple[Table, ...]] = {
    "grpc": (GRPC_STATUS, GRPC_CORE),
    "mpich": (MPICH_TABLE,),
    "cmake": (CMAKE_TABLE,),
    "gloo": (GLOO_TABLE,),
}


def read(what: str, tree: Path) -> dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """The rows and forms of each table an import reads, by table id."""
    if what == "grpc":
        return {GRPC_STATUS.id: read_grpc_status(tree), GRPC_CORE.id: read_messages(tree, GRPC_MESSAGES)}
    if what == "mpich":
        return {MPICH_TABLE.id: read_mpich(tree)}
    if what == "cmake":
        return {CMAKE_TABLE.id: read_messages(tree, CMAKE_MESSAGES)}
    if what == "gloo":
        return {GLOO_TABLE.id: read_messages(tree, GLOO_MESSAGES)}
    raise ValueError(f"unknown import {what!r}")


def sources_for(what: str, tree: Path) -> dict[str, tuple[str, str]]:
    """The sources an import's rows and forms cite."""
    if what == "mpich":
        return {**mpich_sources(tree), **{k: SOURCES[k] for k in ("mpich-extracterrmsgs", "mpich-errutil")}}
    prefix = {"grpc": "grpc-", "cmake": "cmake-", "gloo": "gloo-"}[what]
    return {k: v for k, v in SOURCES.items() if k.startswith(prefix)}


def main(argv: Sequence[str] | None = None) -> int:
    import yaml

    from cannenv.explain import libtables
    from cannenv.records import load_yaml

    args = list(sys.argv[1:] if argv is None else argv)
    write = "--write" in args
    rest = [a for a in args if a != "--write"]
    if len(rest) != 3 or rest[0] != "--import" or rest[1] not in IMPORTS:
        print(
            f"usage: python -m cannenv.explain.infratables --import {{{','.join(IMPORTS)}}} TREE [--write]",
            file=sys.stderr,
        )
        return 2
    what, tree = rest[1], Path(rest[2])
    table_file = libtables.shipped_path()
    raw = load_yaml(table_file.read_text(encoding="utf-8"))
    found = read(what, tree)
    sources = sources_for(what, tree)
    pending = False
    old_sources = raw.get("sources", {})
    changed_sources = {
        k: {"title": t, "url": u}
        for k, (t, u) in sources.items()
        if old_sources.get(k) != {"title": t, "url": u}
    }
    if changed_sources:
        pending = True
        print(f"# sources: {len(changed_sources)} to add or change")
        print(yaml.safe_dump(changed_sources, sort_keys=False, width=200, allow_unicode=True), end="")
    for table in IMPORTS[what]:
        rows, forms = found[table.id]
        old: dict[str, Any] = next(
            (t for t in raw["tables"] if t["id"] == table.id), {"rows": [], "forms": []}
        )
        d = libtables.diff_rows(old["rows"], rows)
        f = libtables.diff_rows(old["forms"], forms, by="id")
        pending = pending or any(d.values()) or any(f.values())
        print(
            f"# {table.id}: {len(rows)} rows ({len(old['rows'])} in the table): "
            + ", ".join(f"{len(d[w])} {w}" for w in ("lacks", "changed", "gone"))
            + f"; {len(forms)} forms: "
            + ", ".join(f"{len(f[w])} {w}" for w in ("lacks", "changed", "gone"))
        )
        print(yaml.safe_dump({"rows": d, "forms": f}, sort_keys=False, width=200, allow_unicode=True), end="")
        if write:
            libtables.write_rows(
                table_file,
                table.id,
                rows,
                forms=forms,
                header={"title": table.title, "component": table.component},
                sources={k: {"title": t, "url": u} for k, (t, u) in sources.items()},
            )
    return 1 if pending and not write else 0


if __name__ == "__main__":
    raise SystemExit(main())
