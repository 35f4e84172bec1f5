"""HCCL's own error-log messages, imported from its source (matrices/explain/hccl_messages.yaml).

The importer reads real source text (excerpts of hicann/hcomm at the table's commit, verbatim);
every HCCL ERROR line of the explain corpus whose message the imported source still has is matched
by a row of the file the line names; the errNo an HCCL line carries is decoded to its HcclResult.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from cannenv.explain import logsource, signatures, tables
from cannenv.resources import matrices_dir
from tests.helpers.explaining import explain as _explain

TABLE = signatures.shipped()
K = tables.shipped()
LM = K.log_messages
DATA = Path(__file__).resolve().parents[1] / "data" / "errors"

# hicann/hcomm src/legacy/ascend910/framework/common/src/topo/topoinfo_ranktableConcise.cc, lines
# 176-188 at cb4898bb184a2fe9f2b0bed22e8a57a34897e8e4 (verbatim)
CONCISE = """\
    u32 devId = rankTable.rankList[rankId].deviceInfo.devicePhyId;
    CHK_RET(hrtGetDevice(&params.logicDevId));

    u32 phyId = 0;
    CHK_RET(hrtGetDevicePhyIdByIndex(static_cast<u32>(params.logicDevId), phyId));
    RPT_ENV_ERR(
        phyId != static_cast<u32>(devId), "EI0014", std::vector<std::string>({"value", "variable", "expect"}),
        std::vector<std::string>({std::to_string(phyId), "devicePhyId", std::to_string(static_cast<u32>(devId))}));
    CHK_PRT_RET(
        phyId != static_cast<u32>(devId),
        HCCL_ERROR(
            "[%s][%s]ranktable config devId[%d],but local devId[%u]", LOG_KEYWORDS_INIT_GROUP.c_str(),
            LOG_KEYWORDS_RANKTABLE_CHECK.c_str(), devId, phyId),
        HCCL_E_UNAVAIL);
"""  # noqa: E501 (the vendor's lines, verbatim)

# the same file, lines 204-210 (a message split over two literals, the code in its argument; the
# vendor's spelling kept)
CONCISE_HOSTIP = """\
        CHK_PRT_RET(
            // 因为部分场景下，网卡部署在device侧，但是允许deviceIP无效，所以不检测该场景，只检测使用HOST但是hostIp无效
            (deploy == NICDeployment::NIC_DEPLOYMENT_HOST && it.hostIp.IsInvalid()),
            HCCL_ERROR(
                "[Get][RanktableInfo]errNo"
                "[0x%016llx] hostIp config bettewn ranks is different.",
                HCOM_ERROR_CODE(HCCL_E_PARA)),
            HCCL_E_PARA);
"""  # noqa: E501 (the vendor's lines, verbatim)

# hicann/hcomm src/legacy/ascend910/platform/common/sal.cc, lines 503-507 (a message built as a
# string first, logged through %s)
SAL_IFNAME = """\
            std::string errormessage = "set ifname to [" + hcclSocketIfnameStr
                                       + "] by HCCL_SOCKET_IFNAME, but not found in the environment, ifnames in the "
                                         "environment is as follows";
            HCCL_ERROR(
                "[%s][%s]%s", LOG_KEYWORDS_INIT_GROUP.c_str(), LOG_KEYWORDS_ENV_CONFIG.c_str(), errormessage.c_str());
"""  # noqa: E501 (the vendor's lines, verbatim)

# hicann/hcomm src/legacy/ascend910/pub_inc/log.h, lines 144-149: the error number's layout
LOG_H_ERRNO = """\
#define HCCL_ERROR_CODE(error)                             \\
    ((SYSTEM_RESERVE_ERROR << 32) + (HCCL_MODULE_ID << 24) \\
     + ((static_cast<u64>(HcclSubModuleID::LOG_SUB_MODULE_ID_HCCL)) << 16) + static_cast<u64>(error))
"""

# hicann/hcomm src/legacy/ascend910/framework/cluster_maintenance/recovery/operator_retry/
# opretry_connection.cc, lines 104-118 at cb4898bb184a2fe9f2b0bed22e8a57a34897e8e4 (verbatim): the
# operator-retry connection's own reasons
OPRETRY_INIT = """\
    if (conn->Init(rankId, rankSize, serverIp, serverPort, serverInfo.devId, localIp, rootRank) != HCCL_SUCCESS) {
        HCCL_ERROR(
            "[OpRetryConnection][Init] group[%s] rankId [%u] rankSize [%u] serverIp [%s] localIp [%s] rootRank [%u] "
            "failed",
            group.c_str(), rankId, rankSize, serverIp.GetReadableIP(), localIp.GetReadableIP(), rootRank);
        HCCL_ERROR("There maybe some reasons to cause this error:");
        HCCL_ERROR(
            "1. The port may have been used so we will bind error. OpRetry used port range [%u-%u]", serverPort,
            serverPort + OP_RETRY_CONN_PORT_MAX_RANGE);
        HCCL_ERROR("2. Somebody may have already listen on those ports, so we connect to wrong server "
                   "and we will meet 'Recv unmatched ack' error");
        HCCL_ERROR("You may can set system reserved port to avoid this error by:");
        HCCL_ERROR(
            "sysctl -w net.ipv4.ip_local_reserved_ports=%u-%u", serverPort, serverPort + OP_RETRY_CONN_PORT_MAX_RANGE);
        return HCCL_E_INTERNAL;
"""  # noqa: E501 (the vendor's lines, verbatim)

# hicann/hcomm src/legacy/ascend910/pub_inc/log.h, lines 94-142 at cb4898bb (verbatim): HCCL's logging macros
LOG_H_MACROS = """\
#define HCCL_DEBUG(format, ...)                                          \\
    do {                                                                 \\
        if (UNLIKELY(HcclCheckLogLevel(HCCL_LOG_DEBUG))) {               \\
            HCCL_LOG_PRINT(HCCL, HCCL_LOG_DEBUG, format, ##__VA_ARGS__); \\
        }                                                                \\
    } while (0)

#define HCCL_INFO(format, ...)                                          \\
    do {                                                                \\
        if (UNLIKELY(HcclCheckLogLevel(HCCL_LOG_INFO))) {               \\
            HCCL_LOG_PRINT(HCCL, HCCL_LOG_INFO, format, ##__VA_ARGS__); \\
        }                                                               \\
    } while (0)

#define HCCL_WARNING(format, ...)                                       \\
    do {                                                                \\
        if (UNLIKELY(HcclCheckLogLevel(HCCL_LOG_WARN))) {               \\
            HCCL_LOG_PRINT(HCCL, HCCL_LOG_WARN, format, ##__VA_ARGS__); \\
        }                                                               \\
    } while (0)

#define HCCL_ERROR(format, ...)                          \\
    do {                                                 \\
        if (LIKELY(HcclCheckLogLevel(HCCL_LOG_ERROR))) { \\
            HCCL_ERROR_LOG_PRINT(format, ##__VA_ARGS__); \\
        }                                                \\
    } while (0)

/* 运行日志 */
#define HCCL_RUN_INFO(format, ...)                                     \\
    do {                                                               \\
        if (LIKELY(HcclCheckLogLevel(HCCL_LOG_INFO, HCCL_LOG_MASK))) { \\
            HCCL_RUN_LOG_PRINT(format, ##__VA_ARGS__);                 \\
        }                                                              \\
    } while (0)

#define HCCL_RUN_WARNING(format, ...)                                            \\
    do {                                                                         \\
        if (LIKELY(HcclCheckLogLevel(HCCL_LOG_WARN, HCCL_LOG_MASK))) {           \\
            HCCL_LOG_PRINT(HCCL_LOG_MASK, HCCL_LOG_WARN, format, ##__VA_ARGS__); \\
        }                                                                        \\
    } while (0)

#define HCCL_USER_CRITICAL_LOG(format, ...)                            \\
    do {                                                               \\
        if (LIKELY(HcclCheckLogLevel(HCCL_LOG_INFO, HCCL_LOG_MASK))) { \\
            HCCL_RUN_LOG_PRINT(format, ##__VA_ARGS__);                 \\
        }                                                              \\
    } while (0)
"""

# hicann/hcomm src/base_comm/hcomm_res_mgr.cc line 121 and
# src/base_comm/primitives/api_c_adpt/nic_plugin/nic_plugin_manager.cc line 68 at cb4898bb (verbatim)
WARNINGS = """\
            HCCL_WARNING("[OnDeviceResetPre] hrtGetDevicePhyIdByIndex failed, deviceId[%d] ret[%d]", deviceId, ret);
            HCCL_RUN_WARNING("[NicPlugin] %s version[%u] mismatch, expected[%u].", opsName, header.version, version);
"""  # noqa: E501 (the vendor's lines, verbatim)

PLOG = [re.compile(e.regex) for e in K.extractors if e.kind == "hccl-log"]


# --- the table ----------------------------------------------------------------------------------
def test_table_schema_is_in_sync() -> None:
    shipped = json.loads((matrices_dir() / "explain" / "hccl_messages.schema.json").read_text())
    assert shipped == logsource.json_schema(), (
        "regenerate: python -m cannenv.explain.logsource --schema"
        " > matrices/explain/hccl_messages.schema.json"
    )


def test_the_table_is_whole_and_each_row_has_its_source_url() -> None:
    whole = logsource.load(logsource.shipped_path(), keep_all=True)
    assert {m.repo for m in whole.messages} == {"hicann/hcomm", "hicann/hccl"}
    assert whole.total == len(whole.messages) > 10_000  # every HCCL_ERROR a log can tell apart
    assert LM is not None and LM.total == whole.total and LM.files == whole.files
    assert {m.source_id for m in LM.messages} == {m.source_id for m in whole.messages if m.causes}
    for m in LM.messages:  # each row is its own source, resolved by id
        assert LM.source(m.source_id) == (m.source_title, m.url)
    for m in whole.messages:
        assert re.fullmatch(r"https://github\.com/hicann/hc\w+/blob/[0-9a-f]{40}/src/\S+#L[0-9]+", m.url)
        assert m.literals or m.parts
        assert all(len(x) >= logsource.MIN_LITERAL for x in m.literals)
        if m.causes:
            assert m.module and m.reason
    # the reviewed mapping gives causes to some modules only; the rest name HCCL's file alone
    assert 0 < len(LM.messages) < whole.total


def test_every_mapped_cause_is_a_cause_of_the_signature_file() -> None:
    assert LM is not None
    assert {c for m in LM.messages for c in m.causes} <= set(TABLE.causes)


def test_source_rows_rank_below_every_hand_written_signature() -> None:
    # helper processes reporting their parent gone at exit are no error: they rank below HCCL's messages
    noise = ("worker-parent-exited", "pip-scripts-not-on-path")  # no errors: helpers at exit, pip's warning
    hand = [s.priority for s in TABLE.signatures if not s.derived and s.id not in noise]
    assert min(hand) > signatures.SOURCE_PRIORITY > signatures.ERRNO_PRIORITY


# --- the importer on real source text -------------------------------------------------------------
def test_import_reads_format_result_and_reported_code() -> None:
    (call,) = logsource.extract(
        CONCISE, "src/legacy/ascend910/framework/common/src/topo/topoinfo_ranktableConcise.cc"
    )
    assert call.format == "[%s][%s]ranktable config devId[%d],but local devId[%u]"
    assert call.result == "HCCL_E_UNAVAIL"
    assert call.code == "EI0014"
    assert logsource.fragments(call.format) == [
        "[",
        "][",
        "]ranktable config devId[",
        "],but local devId[",
        "]",
    ]
    (hostip,) = logsource.extract(CONCISE_HOSTIP, "topoinfo_ranktableConcise.cc")
    assert hostip.format == "[Get][RanktableInfo]errNo[0x%016llx] hostIp config bettewn ranks is different."
    assert hostip.result == "HCCL_E_PARA"


def test_import_expands_a_message_built_before_the_call() -> None:
    (call,) = logsource.extract(SAL_IFNAME, "src/legacy/ascend910/platform/common/sal.cc")
    assert call.format == (
        "[%s][%s]set ifname to [%s] by HCCL_SOCKET_IFNAME, but not found in the environment, ifnames in the "
        "environment is as follows"
    )


def test_a_macro_body_is_not_a_message() -> None:
    text = (
        LOG_H_ERRNO
        + '#define CHK_X(x) \\\n    HCCL_ERROR("[%s]call trace: hcclRet -> %d", __func__, x); \\\n'
    )
    assert logsource.extract(text, "log.h") == []


def test_refresh_diff_names_rows_lacking_changed_and_gone() -> None:
    old = [
        {"path": "a.cc", "line": 1, "format": "x", "result": "HCCL_E_PARA"},
        {"path": "a.cc", "line": 2, "format": "gone"},
    ]
    new = [
        {"path": "a.cc", "line": 9, "format": "x", "result": "HCCL_E_UNAVAIL"},
        {"path": "b.cc", "line": 1, "format": "new"},
    ]
    d = logsource.diff(old, new)
    assert [r["format"] for r in d["lacks"]] == ["new"]
    assert [r["format"] for r in d["gone"]] == ["gone"]
    assert d["changed"][0]["was"]["result"] == "HCCL_E_PARA"


def test_a_generic_literal_is_not_an_identity() -> None:
    files = [f"src/f{i}.cc" for i in range(logsource.MAX_SHARED + 1)]
    lits = logsource.literals([("[%s] executor kernel run failed, tag[%s]", f) for f in files])
    assert lits["[%s] executor kernel run failed, tag[%s]"] == ()


# --- real HCCL log lines of the corpus ------------------------------------------------------------
def _corpus_lines() -> list[tuple[str, str, str]]:
    out = []
    for f in sorted(DATA.glob("*.txt")):
        for line in f.read_text(encoding="utf-8", errors="replace").splitlines():
            for rx in PLOG:
                m = rx.search(line)
                if m:
                    out.append((f.name, m.group(1), m.group(2)))
    return out


def test_corpus_hccl_lines_are_matched_by_rows_of_their_own_file() -> None:
    """Every HCCL ERROR line of the working corpus whose message the imported source still has (a
    literal of a row of its file is in it) is matched by that file's rows, never another's; the
    lines of the HCCL fault guide's cases are matched."""
    whole = logsource.load(logsource.shipped_path(), keep_all=True)
    lines = _corpus_lines()
    assert len(lines) > 30
    matched = {}
    for name, file, text in lines:
        hits = whole.match(file, text)
        assert all(h.file == file for h in hits), (name, text)
        if hits:
            matched[(name, text[:40])] = hits
    files = {n for n, _ in matched}
    assert {
        "hccl-ug-50-ei0006-socket-timeout.txt",
        "hcclfd-ei0001-ip-family.txt",
        "hcclfd-ei0001-rdma-sl.txt",
        "hcclfd-ei0001-socket-ifname.txt",
        "hcclfd-ei0004-ranktable-path.txt",
        "hcclfd-ei0004-super-device-id.txt",
        "hcclfd-ei0005-cmd-tag.txt",
        "hcclfd-ei0015-agent-timeout.txt",
        "hcclfd-ei0015-ranks-not-connected.txt",
        "hcclfd-ei0016-tls-inconsistent.txt",
        "hcclfd-ei0019-device-port-16666.txt",
        "va-4725-hccl-listen-16666.txt",
    } <= files


def test_matched_rows_point_to_the_cause_the_corpus_established() -> None:
    """The module mapping is reviewed, not fitted: on the corpus lines it maps, it agrees with the
    cause each thread established."""
    import yaml

    cases = {c["file"]: c["cause"] for c in yaml.safe_load((DATA / "cases.yaml").read_text(encoding="utf-8"))}
    assert LM is not None
    checked = 0
    for name, file, text in _corpus_lines():
        for h in LM.match(file, text):
            if h.causes and name in cases:
                assert cases[name] in h.causes, (name, h.path, h.line, h.module)
                checked += 1
    assert checked >= 15


def test_the_ranktable_device_id_message_names_the_rank_table() -> None:
    """HCCL's own words for a rank table written with physical device ids where the process sees
    logical ones (a container with part of the cards): the rank-table module, hccl-config."""
    line = (
        "[ERROR] HCCL(164818,python):2025-08-27-20:10:17:012.780 [topoinfo_ranktableConcise.cc:169][166173]"
        "[Parse][ClusterInfo]ranktable config devId[1], but local devId[3]\n"
    )
    ex = _explain(line)
    assert ex.causes[0].id == "hccl-config"
    match = ex.matches[0]
    assert match.id.startswith("hccl-src-rank-table-topoinfo-ranktableconcise-")
    assert "github.com/hicann/hcomm/blob/cb4898bb" in ex.causes[0].sources[0].url


def test_an_unknown_message_of_a_known_file_is_not_guessed() -> None:
    assert LM is not None
    assert LM.match("hccl_socket_manager.cc", "[60570][ServerInit]call trace: hcclRet -> 7") == []


# --- errNo ----------------------------------------------------------------------------------------
def test_errno_layout_decodes_module_submodule_and_result() -> None:
    layout = K.hccl_errno
    assert layout is not None
    assert layout.decode(0x0000000005000007) == ("HCCL", 7)
    assert layout.decode(0x0000000005010001) == ("HCOM", 1)
    assert layout.decode(0x0000000007010003) is None  # a runtime code, not HCCL's
    assert K.hccl_results[7].name == "HCCL_E_UNAVAIL"


def test_an_info_line_is_not_looked_up() -> None:
    """The extractors' anchors are HCCL's ERROR lines: its INFO lines (most of a plog) cost no
    regex, and a message logged at INFO is not an error."""
    assert LM is not None
    info = (
        "[INFO] HCCL(164818,python):2025-08-27-20:10:17:012.780 [topoinfo_ranktableConcise.cc:169][166173]"
        "[Parse][ClusterInfo]ranktable config devId[1], but local devId[3]\n"
    )
    assert not [m for m in _explain(info).matches if m.id.startswith("hccl-src-")]
    nospace = info.replace("[INFO] HCCL(", "[ERROR]HCCL(")
    assert _explain(nospace).causes[0].id == "hccl-config"


def test_errno_of_a_timeout_points_to_the_link() -> None:
    line = (
        "[ERROR] HCCL(17528,python3):2026-03-18-10:34:43.142.156 [hcom.cc:515] [18111][AllReduce][Result]"
        "errNo[0x0000000005010009] hcclComm AllReduce error, tag[HcomAllReduce_6629421139219749105_0]\n"
    )
    ex = _explain(line)
    ids = [m.id for m in ex.matches]
    assert "hccl-errno-hccl-e-timeout" in ids
    assert ex.causes[0].id == "hccl-link"


# --- every macro that writes an error or a warning; HCCL's own words for a port in use ----------------
def test_the_imported_macros_are_log_h_s_error_and_warning_ones() -> None:
    """The macros imported are exactly those of HCCL's log.h whose body writes at the error or
    warning level (HCCL_LOG_ERROR through HCCL_ERROR_LOG_PRINT, HCCL_LOG_WARN), none of the info or
    debug ones."""
    bodies = re.findall(r"#define (HCCL_[A-Z_]+)\(format, \.\.\.\)((?:[^\n]*\\\n)+[^\n]*)", LOG_H_MACROS)
    writes = {name for name, body in bodies if re.search(r"HCCL_LOG_WARN|HCCL_ERROR_LOG_PRINT", body)}
    assert len(bodies) == 7
    assert writes == set(logsource.LOG_CALLS)


def test_import_reads_the_warning_macros_and_names_them() -> None:
    calls = logsource.extract(WARNINGS, "x.cc")
    assert [(c.macro, c.format) for c in calls] == [
        ("HCCL_WARNING", "[OnDeviceResetPre] hrtGetDevicePhyIdByIndex failed, deviceId[%d] ret[%d]"),
        ("HCCL_RUN_WARNING", "[NicPlugin] %s version[%u] mismatch, expected[%u]."),
    ]
    rows = logsource.rows(calls)
    assert [r.get("macro") for r in rows] == ["HCCL_WARNING", "HCCL_RUN_WARNING"]
    (err,) = logsource.rows(logsource.extract(CONCISE, "topoinfo_ranktableConcise.cc"))
    assert "macro" not in err  # HCCL_ERROR, most rows: left out


def test_the_table_holds_warnings_beside_errors() -> None:
    whole = logsource.load(logsource.shipped_path(), keep_all=True)
    macros = {m.macro for m in whole.messages}
    assert macros == set(logsource.LOG_CALLS)
    assert sum(m.macro != "HCCL_ERROR" for m in whole.messages) > 1_000
    assert LM is not None
    w = [m for m in LM.messages if m.macro == "HCCL_WARNING"]
    assert w and all(m.source_title.startswith(f"{m.repo} {m.path}:{m.line}") for m in w)
    assert all('HCCL_WARNING("' in m.source_title for m in w)


def test_import_reads_the_op_retry_reasons() -> None:
    calls = logsource.extract(OPRETRY_INIT, "opretry_connection.cc")
    assert [c.format for c in calls][2:4] == [
        "1. The port may have been used so we will bind error. OpRetry used port range [%u-%u]",
        "2. Somebody may have already listen on those ports, so we connect to wrong server and we will meet "
        "'Recv unmatched ack' error",
    ]
    assert calls[-1].result == "HCCL_E_INTERNAL"


def _module(name: str) -> logsource.Module:
    from cannenv.explain.models import LogMessagesFile
    from cannenv.explain.rowtable import load_validated

    model = load_validated(
        logsource.shipped_path(), LogMessagesFile, what="t", hint="t", max_bytes=logsource.MAX_TABLE_BYTES
    )
    (m,) = [x for x in model.modules if x.name == name]
    return logsource.Module(m.name, m.paths, m.causes, m.reason, m.words)


def test_port_in_use_is_hccl_s_own_words_in_any_file() -> None:
    """The port-in-use mapping's words are HCCL's own (each in a row of the table), it covers every
    file, and every row holding them points to hccl-port whatever its module would be."""
    mod = _module("port-in-use")
    assert mod.paths == ("*",) and mod.causes == ("hccl-port",)
    whole = logsource.load(logsource.shipped_path(), keep_all=True)
    for w in mod.words:
        holders = [m for m in whole.messages if w.lower() in m.format.lower()]
        assert holders, f"{w!r} is in no HCCL message"
        assert all(m.module == "port-in-use" and m.causes == ("hccl-port",) for m in holders)
    files = {m.file for m in whole.messages if m.module == "port-in-use"}
    assert {"opretry_connection.cc", "hccl_socket.cc", "preempt_port_manager.cc"} <= files


def test_every_row_a_port_mapping_covers_is_readable_without_its_prefix() -> None:
    anchors = [e.anchor for e in K.extractors if e.kind == "hccl-message"]
    assert LM is not None
    covered = [m for m in LM.messages if m.module in ("port-in-use", "op-retry-connection")]
    assert len(covered) >= 8
    for m in covered:
        assert any(a in m.format for a in anchors), f"{m.file}:{m.line} has no hccl-message anchor"


def test_a_port_message_pasted_without_its_prefix_points_to_the_port() -> None:
    text = (
        "[OpRetryConnection][Init] group[hccl_world_group] rankId [3] rankSize [8] serverIp [10.0.0.1] "
        "localIp [10.0.0.4] rootRank [0] failed\n"
        "There maybe some reasons to cause this error:\n"
        "1. The port may have been used so we will bind error. OpRetry used port range [60000-60015]\n"
    )
    ex = _explain(text)
    assert ex.causes[0].id == "hccl-port"
    assert "hccl-src-port-in-use-opretry-connection-110" in [m.id for m in ex.matches]


def test_a_plog_warning_line_is_read_and_a_retried_connect_names_no_cause() -> None:
    timeout = (
        "[ERROR] HCCL(2107,python):2026-01-05-10:00:00.000.001 [opretry_connection.cc:206] [2200]"
        "[OpRetryConnection][Init] Connect to server timeout [120 s], serverIp_[10.0.0.1] "
        "serverPort_[60001]\n"
    )
    assert _explain(timeout).causes[0].id == "hccl-port"
    # the retried attempt's line holds the final failure's literal: neither names a cause
    failed = (
        "[ERROR] HCCL(2107,python):2026-01-05-10:00:00.000.001 [opretry_connection.cc:222] [2200]"
        "[OpRetryConnection][Init] Connect to server failed, serverIp_[10.0.0.1] serverPort_[60001]\n"
    )
    retried = failed.replace("serverPort_[60001]", "serverPort_[60001], we try again").replace(
        ":222]", ":215]"
    )
    for line in (failed, retried):
        assert not [m for m in _explain(line).matches if m.id.startswith("hccl-src-")]
    warn = (
        "[WARNING] HCCL(2107,python):2026-01-05-10:00:00.000.001 [hccl_socket.cc:146] [2200][InitGroup]"
        "[RanktableDetect] socket type[1], listen on ip[10.0.0.1] and specific port[60000] fail. "
        "Please check the port status and whether the port is being used by other process.\n"
    )
    assert _explain(warn).causes[0].id == "hccl-port"


def test_hostile_port_lines_huge_and_many() -> None:
    """A huge line and many lines holding the anchors are read in bounded time and memory (the
    scanner's line bound), and give one signature per message, not one per line."""
    line = "1. The port may have been used so we will bind error. OpRetry used port range [60000-60015]"
    huge = line + " x" * 2_000_000 + "\n"
    ex = _explain(huge)
    assert [m.id for m in ex.matches if m.id.startswith("hccl-src-")] in (
        [],
        ["hccl-src-port-in-use-opretry-connection-110"],
    )
    many = (line + "\n") * 50_000 + "[OpRetryConnection][" * 1000 + "\n"
    ex = _explain(many)
    assert [m.id for m in ex.matches if m.id.startswith("hccl-src-")] == [
        "hccl-src-port-in-use-opretry-connection-110"
    ]
    assert ex.causes[0].id == "hccl-port"
