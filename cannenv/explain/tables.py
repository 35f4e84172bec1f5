"""The shipped knowledge, whole: ``knowledge.yaml`` with the vendors' FAQ entries (``faq.yaml``),
HCCL's log messages (``hccl_messages.yaml``), the aclnn operators' parameter checks
(``aclnn_messages.yaml``), the headers the packages install (``filelists.yaml``), the error tables
of the libraries around the stack (``libtables.yaml``, and msaicerr's conclusions, ``aicerr.yaml``,
one more table of that engine), the runtime's and GE's messages (``rtge_messages.yaml``),
MindSpore's (``mindspore_messages.yaml``), the printed forms of a failed check
(``failed_checks.yaml``) and who ships a command (``commands.yaml``), composed here so that the
table modules need not import each other (:mod:`.knowledge` holds the engine values, :mod:`.faq`,
:mod:`.logsource`, :mod:`.opapi`, :mod:`.aicerr`, :mod:`.rtge`, :mod:`.msascend`,
:mod:`.failedchecks` and :mod:`.commands` read their own files)."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

from cannenv.explain import (
    aicerr,
    commands,
    drvinstall,
    failedchecks,
    faq,
    knowledge,
    libtables,
    logsource,
    msascend,
    opapi,
    rtge,
)


@cache
def shipped() -> knowledge.Knowledge:
    """The shipped tables; each FAQ entry is a source of its own (the page at its commit, with the
    entry's anchor)."""
    k = knowledge.load(knowledge.shipped_path())
    rows = faq.shipped()
    sources = dict(k.sources)
    sources.update({r.id: (f"{r.page_title}: {r.label}", r.url) for r in rows})
    lib, lib_sources = libtables.shipped()
    sources.update(lib_sources)
    conclusions = aicerr.shipped()
    if conclusions is not None:  # msaicerr's conclusions: one more table of the same engine
        lib = (*lib, conclusions[0])
        sources.update(conclusions[1])
    checks, check_sources = failedchecks.shipped()
    sources.update(check_sources)
    drv_install = drvinstall.shipped() if drvinstall.shipped_path().is_file() else None
    if drv_install is not None:  # the driver installer's messages: a source per script
        sources.update(drvinstall.sources(drv_install))
    k = replace(k, faq=rows, sources=sources, lib_tables=lib, headers=_headers(sources), failed_checks=checks)
    if commands.shipped_path().is_file():  # who ships a command the shell does not find (commands.yaml)
        command_table, command_sources = commands.shipped()
        sources.update(command_sources)
        k = replace(k, commands=command_table)
    messages = logsource.shipped_path()
    if messages.is_file():
        k = knowledge.with_log_messages(k, logsource.load(messages))
    aclnn = opapi.shipped_path()
    if aclnn.is_file():
        k = knowledge.with_op_messages(k, opapi.load(aclnn).data)
    runtime_ge = rtge.shipped_path()
    if runtime_ge.is_file():
        k = knowledge.with_rtge_messages(k, rtge.load(runtime_ge).data)
    ms = msascend.shipped_path()
    k = replace(k, drv_install=drv_install)
    return knowledge.with_ms_messages(k, msascend.load(ms).data) if ms.is_file() else k


def _headers(sources: dict[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """The headers the packages install (filelists.yaml's ``headers``): name → (package, list id);
    each list becomes a source of its own. Read with the file lists' model here, not through
    :mod:`.filelists`, whose refresh diff reads these tables."""
    from cannenv.explain.models import FileListsFile, read_yaml, validate

    path = knowledge.shipped_path().with_name("filelists.yaml")
    if not path.is_file():
        return {}
    p, raw = read_yaml(path, what="file lists", max_bytes=4 * 1024 * 1024)
    model = validate(
        FileListsFile, raw, source=str(p), what="file lists", hint="see docs/explain.md (Knowledge tables)"
    )
    out: dict[str, tuple[str, str]] = {}
    for fl in model.lists:
        if fl.headers:
            sources.setdefault(fl.id, (fl.title, fl.url))
        for h in fl.headers:
            out.setdefault(h, (fl.package, fl.id))
    return out
