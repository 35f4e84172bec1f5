"""`cannenv explain`: an OSError's errno, read with Linux's errno table and the stack's layout.

Python prints an OSError as ``[Errno N] strerror: 'path'``. The value gives causes by itself only
where its meaning does (ENOSPC: a file system is full; ENOMEM: the kernel refused memory); on a
path of the stack's layout — the NPU's device nodes and the driver's mounts (the Ascend Docker
Runtime's default mounts), CANN's and NNAL's install folders — the first path rule whose errno and
literal fit decides (knowledge.yaml ``errno``). Anything else (a user's own file) says nothing.
"""

from __future__ import annotations

import time

import pytest
import yaml

from cannenv.errors import InputError
from cannenv.explain import knowledge, signatures
from tests.helpers.explaining import explain as _explain

TABLE = signatures.shipped()


def _top(text: str) -> tuple[str, str] | None:
    ex = _explain(text)
    return (ex.causes[0].id, ex.causes[0].signature) if ex.causes else None


@pytest.mark.parametrize(
    ("line", "cause"),
    [
        ("FileNotFoundError: [Errno 2] No such file or directory: '/dev/davinci3'", "device-not-visible"),
        ("PermissionError: [Errno 13] Permission denied: '/dev/davinci_manager'", "device-not-visible"),
        ("OSError: [Errno 6] No such device or address: '/dev/devmm_svm'", "device-not-visible"),
        ("OSError: [Errno 2] No such file or directory: '/dev/hisi_hdc'", "device-not-visible"),
        ("OSError: [Errno 16] Device or resource busy: '/dev/davinci0'", "device-busy"),
        (
            "FileNotFoundError: [Errno 2] No such file or directory: '/usr/local/Ascend/driver/version.info'",
            "device-not-visible",
        ),
        (
            "FileNotFoundError: [Errno 2] No such file or directory: '/usr/local/bin/npu-smi'",
            "device-not-visible",
        ),
        (
            "FileNotFoundError: [Errno 2] No such file or directory: "
            "'/usr/local/Ascend/ascend-toolkit/latest/aarch64-linux/ascend_toolkit_install.info'",
            "env-not-sourced",
        ),
        (
            "FileNotFoundError: [Errno 2] No such file or directory: '/home/u/Ascend/cann-8.5.0/set_env.sh'",
            "env-not-sourced",
        ),
        (
            "FileNotFoundError: [Errno 2] No such file or directory: '/usr/local/Ascend/nnal/atb/set_env.sh'",
            "env-not-sourced",
        ),
        ("OSError: [Errno 28] No space left on device: '/dev/shm/torch_1234_567'", "not-a-version-problem"),
        ("OSError: [Errno 28] No space left on device", "not-a-version-problem"),
        ("OSError: [Errno 12] Cannot allocate memory", "oom"),
        # getaddrinfo()'s errors, as socket.gaierror prints them
        ("socket.gaierror: [Errno -2] Name or service not known", "hccl-config"),
        ("socket.gaierror: [Errno -3] Temporary failure in name resolution", "hccl-config"),
    ],
)
def test_an_oserror_on_the_stack_s_layout_names_its_cause(line: str, cause: str) -> None:
    top = _top(line + "\n")
    assert top is not None and top[0] == cause, top
    assert top[1].startswith("oserror-")


@pytest.mark.parametrize(
    "line",
    [
        "FileNotFoundError: [Errno 2] No such file or directory: '/data/models/qwen/config.json'",
        "PermissionError: [Errno 13] Permission denied: '/home/u/out/log.txt'",
        "ConnectionRefusedError: [Errno 111] Connection refused",
        "OSError: [Errno 5] Input/output error",  # not in the table: says nothing
    ],
)
def test_an_errno_on_a_user_s_own_path_says_nothing(line: str) -> None:
    assert not [m for m in _explain(line + "\n").matches if m.id.startswith("oserror-")]


def test_the_stack_s_own_signature_ranks_above_the_errno() -> None:
    """A missing CANN library in the same log says more than the file the program looked for."""
    text = (
        "FileNotFoundError: [Errno 2] No such file or directory: '/usr/local/Ascend/ascend-toolkit/x'\n"
        "ImportError: libascendcl.so: cannot open shared object file: No such file or directory\n"
    )
    ex = _explain(text)
    assert ex.causes[0].signature != "oserror-enoent"
    assert "oserror-enoent" in [m.id for m in ex.matches]


def test_the_errno_table_is_validated(tmp_path: object) -> None:
    raw = yaml.safe_load(knowledge.shipped_path().read_text(encoding="utf-8"))
    raw["errno"]["paths"][0]["errnos"] = ["ENOTANERRNO"]
    with pytest.raises(InputError, match=r"errno path /dev/davinci: unknown errno 'ENOTANERRNO'"):
        knowledge.parse_knowledge(raw, source="k.yaml")
    raw = yaml.safe_load(knowledge.shipped_path().read_text(encoding="utf-8"))
    raw["errno"]["rows"].append(dict(raw["errno"]["rows"][0]))
    with pytest.raises(InputError, match=r"errno: a value or name is listed twice"):
        knowledge.parse_knowledge(raw, source="k.yaml")


def test_hostile_errno_lines_stay_linear() -> None:
    t0 = time.process_time()
    _explain("[Errno 2] No such file or directory: '" + "/dev/davinci" * 300_000 + "\n")
    _explain("[Errno " * 200_000 + "\n")
    _explain(("OSError: [Errno 28] No space left on device: '/x'\n") * 20_000)
    assert time.process_time() - t0 >= 0  # runs to the end; bench_explain.py measures the cost
