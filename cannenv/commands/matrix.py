"""`cannenv matrix …`: list, show, lint, query, resolve, schema, and the importers
(import-torch-npu, import-deployer, import-index, refresh).

Human output with rich, ``--json`` for machines. Core work lives in :mod:`cannenv.matrix`,
:mod:`cannenv.resolve` and :mod:`cannenv.torch_npu_import`; this module only renders.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cannenv.commands.options import QUIET
from cannenv.errors import ExitCode, InputError, NotFoundError

if TYPE_CHECKING:
    from rich.console import Console

    from cannenv.matrix import Matrix, Stack
    from cannenv.resolve import Resolution


def _console() -> Console:
    """Rich output for matrix data, which may come from anyone's matrix or an importer's artefact:
    markup is off (``[link=…]`` or ``[/x]`` in a manifest is text, never a hyperlink or a
    MarkupError) and every string printed or put in a table has its control characters made
    visible (:func:`cannenv.sanitize.text`). Styled labels go through :func:`_say`."""
    from rich.console import Console

    from cannenv.sanitize import text

    class _DataConsole(Console):
        def print(self, *objects: Any, **kwargs: Any) -> None:
            super().print(*(text(o) if isinstance(o, str) else o for o in objects), **kwargs)

    return _DataConsole(
        file=sys.stdout, markup=False, highlight=False, width=None if sys.stdout.isatty() else 160
    )


def _say(con: Console, style: str, label: str, rest: str) -> None:
    """``label`` in ``style``, then data as plain text (never markup)."""
    from rich.text import Text

    from cannenv.sanitize import text

    con.print(Text.assemble((label, style), " " + text(rest)))


def _line(value: str) -> str:
    """One terminal line of matrix data (an answer, a statement, a problem): every control
    character, newline included, made visible (:func:`cannenv.sanitize.line`)."""
    from cannenv.sanitize import line

    return line(value)


def _text(value: str) -> str:
    from cannenv.sanitize import text

    return text(value)


def _row(table: Any, *cells: str) -> None:
    """A table row of data: each cell plain text with its control characters made visible."""
    from cannenv.sanitize import text

    table.add_row(*(text(c) for c in cells))


def _matrix(ctx: click.Context) -> Matrix:
    from cannenv import matrix

    paths = (ctx.obj or {}).get("matrix_paths") or None
    return matrix.load(list(paths) if paths else None)


def _product_answer(prod: Any, *, as_json: bool) -> int:
    """``query --product ID`` alone: what the vendor states this product requires (its first CANN and
    the HDK paired with it), each minimum with its statement; unknown where nothing states one."""
    parts = []
    if prod.cann_from:
        parts.append(f"CANN >= {prod.cann_from} ({prod.cann_from_statement or 'stated'})")
    if prod.hdk_from:
        parts.append(f"Ascend HDK >= {prod.hdk_from} ({prod.hdk_from_statement or 'stated'})")
    said = "; ".join(parts) if parts else "no statement names a first CANN or HDK for this product (unknown)"
    line = f"{prod.id} ({prod.title}, family {prod.family}): {said} [{', '.join(prod.sources)}]"
    answer = [line] + ([f"  note: {prod.note}"] if prod.note else [])
    if as_json:
        _echo_json(
            {
                "answer": answer,
                "product": prod.id,
                "family": prod.family,
                "cann_from": prod.cann_from,
                "hdk_from": prod.hdk_from,
                "sources": list(prod.sources),
            }
        )
    else:
        for text in answer:
            click.echo(_line(text))
    return 0 if parts else int(ExitCode.NOT_FOUND)


def _echo_json(data: Any) -> None:
    from cannenv.values import to_json

    click.echo(to_json(data))


def _pins(values: tuple[str, ...], option: str) -> dict[str, str]:
    from cannenv.matrix import CORE_COMPONENTS

    out: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not value.strip():
            raise InputError(
                f"{option} {item!r} is not KEY=VERSION",
                hint=f"e.g. {option} driver=24.1.rc2; keys: " + ", ".join(CORE_COMPONENTS),
            )
        out[key] = value.strip()
    return out


@click.group("matrix")
@click.option(
    "--matrix",
    "matrix_paths",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="Matrix file or folder to use instead of the shipped matrices (repeatable).",
)
@click.pass_context
def matrix(ctx: click.Context, matrix_paths: tuple[Path, ...]) -> None:
    """Validated version matrices: stacks, rules, queries and resolution."""
    ctx.ensure_object(dict)
    ctx.obj["matrix_paths"] = matrix_paths


# ---------------------------------------------------------------------------------------------


def _stack_row(s: Stack) -> dict[str, Any]:
    from cannenv.matrix import CORE_COMPONENTS

    return {
        "id": s.id,
        "family": s.family,
        "arches": list(s.arches),
        "status": s.status,
        **{k: s.version(k) for k in CORE_COMPONENTS},
    }


@matrix.command("list")
@click.option("--family", help="a2, a3, 310p, 910, 310b or 950 (also 'Atlas A2', '910b').")
@click.option("--arch", type=click.Choice(["aarch64", "x86_64"]))
@click.option("--status", type=click.Choice(["published", "certified", "deprecated", "eol"]))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def list_cmd(
    ctx: click.Context, family: str | None, arch: str | None, status: str | None, as_json: bool
) -> int:
    """List the stacks of the matrix."""
    from cannenv.soc import normalize_family

    m = _matrix(ctx)
    fam = normalize_family(family) if family else None
    stacks = [s for s in m.find_stacks(family=fam, arch=arch) if status is None or s.status == status]
    if as_json:
        _echo_json({"matrix_digest": m.digest, "stacks": [_stack_row(s) for s in stacks]})
        return 0
    from rich.table import Table

    table = Table(title=f"{len(stacks)} stacks  (matrix {m.digest[:19]}…)")
    for col in ("id", "status", "arches", "driver", "cann", "torch", "torch_npu", "python"):
        table.add_column(col)
    for s in stacks:
        _row(
            table,
            s.id,
            s.status,
            ",".join(s.arches),
            *(s.version(k) or "-" for k in ("driver", "cann", "torch", "torch_npu", "python")),
        )
    _console().print(table)
    return 0


@matrix.command("show")
@click.argument("stack_id")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def show(ctx: click.Context, stack_id: str, as_json: bool) -> int:
    """Show one stack: every component, its files, sources and rule evidence."""
    m = _matrix(ctx)
    s = m.stack(stack_id)
    problems = m.stack_problems(s)
    cann = s.version("cann")
    req = m.driver_requirement(cann, s.family, s.product) if cann else None
    gaps = {
        a.file: gap
        for key in ("cann", "ops", "nnal")
        if key in s.components
        for a in s.components[key].artifacts.values()
        if a.sha256 is None and (gap := m.digest_gap(a.file)) is not None
    }
    if as_json:
        from cannenv.values import dump

        data = dump(s)
        data["matrix_digest"] = m.digest
        data["driver_requirement"] = req.to_json() if req else None
        data["problems"] = problems
        data["lifecycle"] = m.stack_notes(s)
        data["python_limits"] = m.python_limit_lines(s)[1]
        data["vendor_archives"] = {  # installer file -> the vendor's .zip download and its sha256
            a.file: {"file": z.file, "sha256": z.sha256, "url": z.url, "sources": list(z.sources)}
            for comp in s.components.values()
            for a in comp.artifacts.values()
            if (z := m.vendor_archive(a.file)) is not None and z.file != a.file
        }
        data["no_vendor_digest"] = gaps  # installer file -> why no vendor sha256 is known for it
        _echo_json(data)
        return 0
    from rich.table import Table

    from cannenv.soc import family_title

    con = _console()
    _say(
        con,
        "bold",
        s.id,
        f" {family_title(s.family)} · {', '.join(s.arches)} · {', '.join(s.os) or '-'} · {s.status}",
    )
    table = Table()
    for col in ("component", "version", "package", "files (sha256)", "sources"):
        table.add_column(col)

    def digest(file: str, sha256: str | None) -> str:
        if sha256:
            return sha256[:12] + "…"
        zipped = m.vendor_archive(file)  # the vendor's .zip download of it (image --artifacts)
        if zipped is not None:
            return f"{zipped.file}: {zipped.sha256[:12]}… {', '.join(zipped.sources)}"
        return "sha256 unknown"

    for key, comp in s.components.items():
        files = "\n".join(
            f"{arch}: {a.file} ({digest(a.file, a.sha256)})" for arch, a in comp.artifacts.items()
        )
        _row(table, key, comp.version, comp.package or "-", files or "-", ", ".join(comp.sources))
    con.print(table)
    for gap in dict.fromkeys(gaps.values()):
        _say(con, "yellow", "no vendor sha256:", gap)
    if req:
        con.print(f"driver requirement: {req.range} ({req.evidence}; {', '.join(req.sources)}) — {req.note}")
    if s.note:
        con.print(f"note: {s.note}")
    con.print(f"sources: {', '.join(s.sources)}")
    for note in m.stack_notes(s):
        con.print(f"support policy: {note}")
    for note in m.python_limit_lines(s)[1]:
        click.echo(_line(f"note: {note}"))
    for p in problems:
        _say(con, "red", "rule broken:", p)
    return 0


@matrix.command("lint")
@click.argument("files", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True)
def lint(files: tuple[Path, ...], as_json: bool) -> int:
    """Validate matrix files (default: the shipped ones) and check stacks against the rules.

    All problems are reported in one pass with file:line, entry and field. Exit 2 when a file is
    invalid, 1 when a stack breaks a rule, 0 when clean.
    """
    from cannenv import matrix as mx

    try:
        m = mx.load(list(files) if files else None)
    except mx.MatrixError as exc:
        if as_json:
            _echo_json({"ok": False, "problems": [p.to_json() for p in exc.problems], "rules": []})
        else:
            for p in exc.problems:
                click.echo(_line(str(p)))
            click.echo(f"{len(exc.problems)} problem(s)", err=True)
        return int(ExitCode.BAD_INPUT)
    rules = m.lint_problems()
    if as_json:
        _echo_json({"ok": not rules, "problems": [], "rules": rules, "matrix_digest": m.digest})
    else:
        for r in rules:
            click.echo(_line(r))
        click.echo(
            f"{len(m.files)} file(s), {len(m.stacks)} stacks, {len(m.torch_npu)} torch_npu rows, "
            f"{len(m.hdk)} HDK rows: " + ("ok" if not rules else f"{len(rules)} rule problem(s)")
        )
    return int(ExitCode.CHECKS_FAILED) if rules else 0


@matrix.command("query")
@click.option("--cann", help="CANN toolkit version, e.g. 8.3.RC1")
@click.option("--torch", help="PyTorch version, e.g. 2.7.1")
@click.option("--torch-npu", "torch_npu", help="torch_npu version")
@click.option("--python", help="Python version, e.g. 3.11")
@click.option("--driver", help="driver/HDK version, e.g. 24.1.rc2")
@click.option("--family", help="a2, a3, 310p, 910, 310b or 950")
@click.option("--product", help="a product with its own HDK line, e.g. atlas-350 (implies its family)")
@click.option("--arch", type=click.Choice(["aarch64", "x86_64"]))
@click.option("--vllm-ascend", "vllm_ascend", help="a vllm-ascend release, e.g. 0.18.0: the stack it names")
@click.option("--mindie", help="a MindIE release, e.g. 2.2.RC1")
@click.option("--mindie-motor", "mindie_motor", help="a MindIE Motor release, e.g. 3.1.0")
@click.option("--mindspeed", help="a MindSpeed release, e.g. 2.1.0")
@click.option("--mindspeed-llm", "mindspeed_llm", help="a MindSpeed-LLM release, e.g. 26.1.0")
@click.option("--triton-ascend", "triton_ascend", help="a Triton-Ascend release, e.g. 3.2.1")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def query(
    ctx: click.Context,
    cann: str | None,
    torch: str | None,
    torch_npu: str | None,
    python: str | None,
    driver: str | None,
    family: str | None,
    product: str | None,
    arch: str | None,
    vllm_ascend: str | None,
    mindie: str | None,
    mindie_motor: str | None,
    mindspeed: str | None,
    mindspeed_llm: str | None,
    triton_ascend: str | None,
    as_json: bool,
) -> int:
    """Ask the rules: which torch_npu, which HDK, which CANN accepts a driver, which Python.

    The first lines answer what was asked; the statements behind the answer follow.

    \b
    cannenv matrix query --cann 8.3.RC1 --torch 2.7.1 --python 3.11   # which torch_npu
    cannenv matrix query --cann 8.2.RC1 --family a2                   # which HDK (driver/firmware)
    cannenv matrix query --cann 9.1.0 --product atlas-350             # which HDK for one product
    cannenv matrix query --driver 24.1.rc2 [--family a2]              # which CANN accept this driver
    cannenv matrix query --torch 2.7.1                                # Python support, torch_npu rows
    cannenv matrix query --vllm-ascend 0.18.0                         # the stack a component release names
    cannenv matrix query --mindie 2.2.RC1 | --triton-ascend 3.2.1 | --mindspeed-llm 26.1.0
    """
    from cannenv.soc import FAMILY_IDS, normalize_family

    m = _matrix(ctx)
    fam = normalize_family(family) if family else None
    if product:
        prod = m.product(product.strip().lower())
        if fam and fam != prod.family:
            raise InputError(
                f"--product {prod.id} is a {prod.family} product, not {fam}",
                hint=f"drop --family or use --family {prod.family}",
            )
        product, fam = prod.id, prod.family
    asked_components = {
        name: v
        for name, v in (
            ("vllm-ascend", vllm_ascend),
            ("mindie", mindie),
            ("mindie-motor", mindie_motor),
            ("mindspeed", mindspeed),
            ("mindspeed-llm", mindspeed_llm),
            ("triton-ascend", triton_ascend),
        )
        if v
    }
    if product and not any((cann, torch, torch_npu, python, driver)) and not asked_components:
        return _product_answer(m.product(product), as_json=as_json)
    if not any((cann, torch, torch_npu, python, driver)) and not asked_components:
        raise InputError(
            "query needs at least one of --cann, --torch, --torch-npu, --python, --driver or a component "
            "(--vllm-ascend, --mindie, --mindie-motor, --mindspeed, --mindspeed-llm, --triton-ascend)",
            hint="e.g. cannenv matrix query --cann 8.3.RC1 --torch 2.7.1 --python 3.11",
        )
    from cannenv.values import dump

    if asked_components:
        comp_result = {name: _component_answer(m, name, v) for name, v in asked_components.items()}
        if not any((cann, torch, torch_npu, python, driver)):
            lines = [line for c in comp_result.values() for line in c["answer"]]
            if as_json:
                _echo_json({"answer": lines, "components": comp_result})
            else:
                for line in lines:
                    click.echo(_line(line))
            return 0 if all(c["rows"] for c in comp_result.values()) else int(ExitCode.NOT_FOUND)

    def targets(cann_v: str) -> list[tuple[str, str | None]]:
        """(family, product) pairs to ask: per product where the family numbers HDKs per product."""
        fams = [fam] if fam else [f for f in FAMILY_IDS if m.driver_requirement(cann_v, f) is not None]
        out: list[tuple[str, str | None]] = []
        for f in fams:
            prods = m.products_of(f) if m.own_hdk_line(f) and product is None else ()
            out.extend([(f, p.id) for p in prods] or [(f, product)])
        return out

    result: dict[str, Any] = {"answer": []}
    answer: list[str] = result["answer"]
    if product:
        result["product"] = product
    if cann and driver:
        verdicts = [m.hdk_verdict(cann, driver, f, p) for f, p in targets(cann)]
        result["verdict"] = [v.to_json() for v in verdicts]
        answer.extend(f"{v.level}: {v.subject}: {v.statement}" for v in verdicts)
        if not verdicts:
            answer.append(f"no HDK statement for CANN {cann}" + (f" on {fam}" if fam else ""))
    if torch_npu and cann:
        tv = m.torch_npu_verdict(torch_npu, cann, torch=torch)
        result["torch_npu_verdict"] = tv.to_json()
        answer.append(
            f"{tv.level}: {tv.subject}: {tv.statement}" + (f"; but {tv.caveat}" if tv.caveat else "")
        )
    torch_asked = bool(torch or torch_npu or python)
    if cann or torch or torch_npu:
        rows = m.torch_npu_rows(cann=cann, torch=torch, torch_npu=torch_npu, python=python)
        if torch_npu and not m.torch_npu_rows(torch_npu=torch_npu, include_superseded=True):
            result["torch_npu_unpaired"] = m.unpaired_note(torch_npu)
            if not cann:  # with --cann the verdict above already says it
                answer.append(result["torch_npu_unpaired"])
        result["torch_npu"] = [
            {
                **dump(r, exclude_none=True),
                **({"wheel_published": m.wheel_published(r.torch_npu, python, arch=arch)} if python else {}),
            }
            for r in rows
        ]
        # the answer names only builds that exist for the asked Python (and arch): a row whose wheel
        # the index does not have for that Python stays in the JSON (wheel_published: false), never
        # in the answer line
        usable = [
            r for r in rows if not python or m.wheel_published(r.torch_npu, python, arch=arch) is not False
        ]
        published = _published_for(m, torch=torch, torch_npu=torch_npu, python=python, arch=arch)
        if published:
            result["published"] = published
        if torch_asked and not (torch_npu and cann):
            if usable:
                first = usable[0]
                answer.append(
                    f"torch_npu {first.label or first.torch_npu} (torch {first.torch}, CANN {first.cann}): "
                    + _evidence_words(first)
                    + (f"; wheel published for Python {python}" if python else "")
                    + f" [{', '.join(first.sources)}]"
                    + (f"; {len(usable) - 1} more row(s) below" if len(usable) > 1 else "")
                )
            elif rows:
                names = ", ".join(dict.fromkeys(r.torch_npu for r in rows))
                where = f"Python {python}" + (f" on {arch}" if arch else "")
                line = f"no published wheel for {where} of the validated torch_npu {names}"
                if published:
                    line += f"; for {where}: " + _published_words(m, published)
                answer.append(line)
            elif published and not cann:
                answer.append(_published_words(m, published))
            elif "torch_npu_unpaired" not in result:
                asked = ", ".join(
                    f"{k} {v}" for k, v in (("CANN", cann), ("torch", torch), ("Python", python)) if v
                )
                answer.append(f"no torch_npu row matches {asked}")
    if torch:
        ps = m.python_support(torch)
        result["python_support"] = {
            "torch": torch,
            "current": list(ps.current),
            "older": [list(o) for o in ps.older],
            "sources": sorted({s for r in ps.rows for s in r.sources}),
        }
        not_yet = m.torch_not_yet(torch)
        if not_yet:
            result["not_yet"] = not_yet
            answer.insert(0, not_yet)
        if python and not ps.rows:
            answer.append(f"no statement records which Python torch {torch} supports")
    if python and not (cann or torch or torch_npu):
        from packaging.version import Version

        from cannenv.matrix.model import same_python_line

        stated = [
            r
            for r in m.python_rows
            if r.statement == "current" and any(same_python_line(p, python) for p in r.python)
        ]
        torches = sorted({t for r in stated for t in r.torch}, key=Version)
        srcs = sorted({s for r in stated for s in r.sources})
        if torches:
            result["torch_for_python"] = {"python": python, "torch": torches, "sources": srcs}
        answer.append(
            f"Python {python} is supported by torch {', '.join(torches)} [{', '.join(srcs)}]"
            if torches
            else f"no statement records a torch line for Python {python}"
        )
    if cann:
        reqs = [r for f, p in targets(cann) if (r := m.driver_requirement(cann, f, p)) is not None]
        result["driver_requirement"] = [r.to_json() for r in reqs]
        result["hdk_pairs"] = [
            dump(r, exclude_none=True) for r in m.hdk_pairs(cann, family=fam, product=product)
        ]
        uncovered = m.cann_not_covered(cann)
        if uncovered:
            result["torch_npu_uncovered"] = uncovered
        if not driver and not torch_asked:
            for r in reqs:
                answer.append(_hdk_answer(m, r))
            if not reqs:
                answer.append(
                    f"no HDK statement for CANN {cann}" + (f" on {fam}" if fam else "") + ": unknown"
                )
        if fam and arch:
            try:
                ops = m.ops_package(cann, fam, arch)
                result["ops_package"] = {
                    "package": ops.package,
                    "file": ops.file,
                    "sources": list(ops.sources),
                }
            except NotFoundError:
                result["ops_package"] = None
    if driver and not cann:
        accepting = m.cann_accepting_driver(driver, family=fam, product=product)
        result["cann_accepting_driver"] = [
            {**r.to_json(), "verdict": m.hdk_verdict(r.cann, driver, r.family, r.product).to_json()}
            for r in accepting
        ]
        if accepting:
            answer.append(
                f"driver {driver} is paired with or stated compatible with CANN "
                + ", ".join(
                    dict.fromkeys(
                        r.cann + (f" ({m.product(r.product).title})" if r.product else "") for r in accepting
                    )
                )
            )
        else:
            answer.append(f"no CANN release is paired with or stated compatible with driver {driver}")
    if as_json:
        _echo_json(result)
    else:
        _render_query(result, torch_asked=torch_asked)
    found = {k: v for k, v in result.items() if k not in ("answer", "product")}
    return 0 if any(found.values()) else int(ExitCode.NOT_FOUND)


_REQ_LABEL = {
    "cann": "CANN",
    "torch_npu": "torch_npu",
    "torchnpu": "TorchNPU",
    "torch": "PyTorch",
    "python": "Python",
    "hdk": "Ascend HDK",
    "triton-ascend": "Triton-Ascend",
    "vllm": "vLLM",
    "vllm-ascend": "vLLM Ascend",
    "mindcluster": "MindCluster",
    "mindspeed-core": "MindSpeed Core",
    "megatron": "Megatron",
    "mindspeed-llm": "MindSpeed-LLM",
}


def _component_answer(m: Matrix, name: str, version: str) -> dict[str, Any]:
    """What each source says release ``version`` of component ``name`` needs: one line per
    statement (values as written, with the evidence kind), and the keys the sources disagree on."""
    from cannenv.errors import did_you_mean
    from cannenv.values import dump

    rows = m.component_rows(name, version)
    out: dict[str, Any] = {
        "component": name,
        "version": version,
        "rows": [dump(r, exclude_none=True) for r in rows],
    }
    if not rows:
        known = m.component_versions(name)
        hint = did_you_mean(version, known) or (f"known: {', '.join(known)}" if known else "none recorded")
        out["answer"] = [f"{name} {version}: no statement in the matrix names its stack ({hint})"]
        return out
    lines = []
    for r in rows:
        needs = "; ".join(f"{_REQ_LABEL.get(k, k)} {', '.join(v)}" for k, v in r.requires.items())
        kind = {"downstream": "validated downstream", "declared": "declared compatible"}.get(
            r.evidence, "validated by the vendor"
        )
        lines.append(f"{name} {r.version}: {needs} ({kind}: {r.statement}) [{', '.join(r.sources)}]")
    from cannenv.matrix.query import _component_key

    want = _component_key(version)
    named_by = [
        r
        for r in m.components
        if r.component != name and any(_component_key(v) == want for v in r.requires.get(name, ()))
    ]
    for r in named_by:
        with_ = "; ".join(
            f"{_REQ_LABEL.get(k, k)} {', '.join(v)}" for k, v in r.requires.items() if k != name
        )
        lines.append(
            f"{name} {version} is named by {r.component} {r.version} with {with_} ({r.statement}) "
            f"[{', '.join(r.sources)}]"
        )
    out["named_by"] = [dump(r, exclude_none=True) for r in named_by]
    said: dict[str, dict[tuple[str, ...], list[str]]] = {}
    for r in [*rows, *named_by]:
        if r.evidence == "declared":
            continue  # a compatibility set is not a pin: it does not contradict one
        for k, v in r.requires.items():
            if k == name or (r in named_by and k not in ("cann",)):
                continue  # another component's own pins (its torch, its Python) are not this one's
            label = r.statement if r in rows else f"{r.component} {r.version}"
            said.setdefault(k, {}).setdefault(tuple(v), []).append(label)
    disagree = {k: {", ".join(v): st for v, st in vals.items()} for k, vals in said.items() if len(vals) > 1}
    for k, vals in disagree.items():
        each = " / ".join(f"{v} ({'; '.join(st)})" for v, st in vals.items())
        lines.append(
            f"{name} {version}: the sources disagree on {_REQ_LABEL.get(k, k)}: {each} (both recorded)"
        )
    out["disagree"] = disagree
    out["answer"] = lines
    return out


def _evidence_words(row: Any) -> str:
    """The evidence kind of a torch_npu row, in the answer's words."""
    if row.evidence == "recommended" and row.status == "current":
        return "validated: a vendor table states the pair"
    if row.evidence == "downstream":
        return "validated downstream (not a vendor table)" + (f": {row.note}" if row.note else "")
    kind = {"prerelease": "pre-release", "superseded": "superseded", "conflict": "conflicting"}.get(
        row.status
    )
    return f"{row.evidence}" + (f", {kind} row" if kind else "")


def _published_for(
    m: Matrix, *, torch: str | None, torch_npu: str | None, python: str | None, arch: str | None
) -> list[dict[str, Any]]:
    """Published wheels (the index's files and their METADATA) that fit what was asked: torch_npu
    builds whose Requires-Dist pins ``torch`` (or the asked torch_npu's line), for the Python/arch."""
    from cannenv.matrix.model import _pep

    if torch:
        versions = m.published_for_torch(torch)
    elif torch_npu:
        line = _pep(torch_npu).release[:3]
        versions = sorted(
            {w.version for w in m.wheel_metadata if _pep(w.version).release[:3] == line}, key=_pep
        )
    else:
        return []
    out = []
    for v in versions:
        wheels = m.wheel_requires(v, python=python, arch=arch)
        if not wheels:
            continue
        out.append(
            {
                "torch_npu": v,
                "torch": wheels[0].torch,
                "builds": sorted({f"cp{w.python.replace('.', '')}-{w.arch}" for w in wheels}),
                "requires_python": sorted({w.requires_python for w in wheels if w.requires_python}),
                "sources": sorted({s for w in wheels for s in w.sources}),
            }
        )
    return out


def _published_words(m: Matrix, published: list[dict[str, Any]]) -> str:
    newest = published[-1]
    pinned = f" (Requires-Dist torch{newest['torch']})" if newest.get("torch") else ""
    others = [p["torch_npu"] for p in published[:-1]]
    rows = m.torch_npu_rows(torch_npu=newest["torch_npu"], include_superseded=True)
    paired = (
        "a row names it with CANN " + ", ".join(sorted({f"{r.cann} ({r.evidence})" for r in rows}))
        if rows
        else "no vendor table pairs it with a CANN"
    )
    return (
        f"published: torch_npu {newest['torch_npu']}{pinned}, a wheel on the package index; {paired} "
        "(published, not validated)"
        + (f"; also published: {', '.join(others)}" if others else "")
        + f" [{', '.join(newest['sources'])}]"
    )


def _hdk_answer(m: Matrix, r: Any) -> str:
    """One line: which HDK for this CANN on this family (and product), as the statements say."""
    where = r.family + (f" ({m.product(r.product).title})" if r.product else "")
    drivers = r.recommended_drivers
    if len(drivers) > 1:
        head = (
            f"recommended driver {' or '.join(drivers)} (the sources name different HDKs; each is recorded)"
        )
    elif drivers:
        head = f"recommended HDK {r.hdk or drivers[0]}" + (f", firmware {r.firmware}" if r.firmware else "")
    elif r.validated or any(row.evidence == "validated" for row in r.rows):
        said = dict.fromkeys(
            d for row in (*r.validated, *r.rows) if row.evidence == "validated" for d in row.driver
        )
        head = f"no recommended HDK stated; validated with driver {', '.join(said)}"
    else:
        head = "no recommended HDK stated"
    parts = [f"CANN {r.cann} on {where}: {head}"]
    if r.compatible_series:
        parts.append("compatible " + ", ".join(r.compatible_series))
    if r.incompatible_series:
        parts.append("not compatible " + ", ".join(r.incompatible_series))
    return "; ".join(parts) + (f" [{', '.join(r.sources)}]" if r.sources else "")


def _render_query(result: dict[str, Any], *, torch_asked: bool = True) -> None:
    from rich.table import Table

    con = _console()
    for line in result.get("answer", []):
        click.echo(_line(line))
    if result.get("torch_npu") and torch_asked and len(result["torch_npu"]) > 1:
        t = Table(title="torch_npu ↔ PyTorch ↔ CANN")
        asked_py = any("wheel_published" in r for r in result["torch_npu"])
        cols = ["torch_npu", "torch", "CANN", "branch", "status", "evidence", "Python (stated)"]
        for col in (*cols, *(["wheel"] if asked_py else []), "sources"):
            t.add_column(col)
        for r in result["torch_npu"]:
            wheel = {True: "published", False: "none", None: "unknown"}[r.get("wheel_published")]
            _row(
                t,
                r.get("label") or r["torch_npu"],
                r["torch"],
                r["cann"],
                r.get("branch", ""),
                r["status"],
                r["evidence"],
                ", ".join(r.get("python") or []),
                *([wheel] if asked_py else []),
                ", ".join(r["sources"]),
            )
        con.print(t)
    if "torch_npu_verdict" in result:
        v = result["torch_npu_verdict"]
        # torch_npu_verdict names no alternative equal to the asked build (a substring test here
        # hid 2.7.1 behind "2.7.1.post4")
        if v.get("recommended") and v.get("level") != "recommended":
            con.print(f"  recommended instead: {v['recommended']}")
        elif v.get("no_recommended"):
            click.echo(_line(f"  no recommended alternative: {v['no_recommended']}"))
        if v.get("settle"):
            con.print(f"  would settle it: {v['settle']}")
    if torch_asked and result.get("torch_npu_uncovered"):
        click.echo(_line(result["torch_npu_uncovered"]))
    for v in result.get("verdict", []):
        if v.get("recommended"):
            con.print(f"  recommended instead: {v['recommended']}")
        if v.get("settle"):
            con.print(f"  would settle it: {v['settle']}")
    ps = result.get("python_support")
    if ps and ps["current"]:
        older = "; ".join(", ".join(o) for o in ps["older"] if o)
        con.print(
            f"torch {ps['torch']} supports Python {', '.join(ps['current'])}"
            + (f" (older statements: {older})" if older else "")
            + (f" [{', '.join(ps['sources'])}]" if ps["sources"] else "")
        )
    if torch_asked:
        return
    seen: set[str] = set()
    for r in result.get("driver_requirement", []):
        for st in r["statements"]:
            line = (
                f"  {'Y' if st['compatible'] else 'N'} {', '.join(st['hdk'])}: {st['statement']} "
                f"[{', '.join(st['sources'])}]"
            )
            if line not in seen:
                seen.add(line)
                click.echo(_line(line))
    for row in result.get("hdk_pairs", []):
        drivers = ", ".join(row.get("driver", [])) or row.get("driver_range") or ""
        where = ",".join(row.get("families") or ["families not stated"])
        if row.get("products"):
            where += " (" + ", ".join(row["products"]) + ")"
        click.echo(
            _line(
                f"  evidence {row['evidence']}: {where}"
                + (f", driver {drivers}" if drivers else "")
                + (f", firmware {row['firmware']}" if row.get("firmware") else "")
                + f" [{', '.join(row['sources'])}]"
                + (f" — {row['note']}" if row.get("note") else "")
            )
        )
    if result.get("ops_package"):
        ops = result["ops_package"]
        con.print(f"ops/kernels package: {ops['package']} → {ops['file']} [{', '.join(ops['sources'])}]")
    rows = result.get("cann_accepting_driver")
    if rows:
        t = Table(title="CANN releases the vendor pairs or states compatible with this driver")
        for col in ("CANN", "family", "product", "verdict", "statement", "sources"):
            t.add_column(col)
        for r in rows:
            v = r["verdict"]
            _row(
                t,
                r["cann"],
                r["family"],
                r.get("product") or "",
                v["level"],
                v["statement"],
                ", ".join(v["sources"]),
            )
        con.print(t)
        con.print("HDKs no vendor statement names are not listed (unknown, not assumed compatible)")


def _render_verdict(con: Console, v: dict[str, Any]) -> None:
    colour = {"recommended": "green", "compatible": "green", "incompatible": "red"}.get(v["level"], "yellow")
    _say(con, colour, f"{v['level']}:", f"{v['subject']}: {v['statement']} [{', '.join(v['sources'])}]")
    if v.get("recommended"):
        con.print(f"  recommended instead: {v['recommended']}")
    elif v.get("no_recommended"):
        click.echo(_line(f"  no recommended alternative: {v['no_recommended']}"))
    if v.get("settle"):
        con.print(f"  would settle it: {v['settle']}")


@matrix.command("resolve")
@click.option("--keep", multiple=True, help="KEY=VERSION that must stay (e.g. driver=24.1.rc2). Repeatable.")
@click.option("--want", multiple=True, help="KEY=VERSION wanted (e.g. torch=2.6.0). Repeatable.")
@click.option("--family", help="a2, a3, 310p, 910, 310b or 950")
@click.option("--python", help="Python version line, e.g. 3.11")
@click.option(
    "--limit",
    type=click.IntRange(0),
    default=10,
    show_default=True,
    help="Show at most this many stacks (0 = all).",
)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def resolve_cmd(
    ctx: click.Context,
    keep: tuple[str, ...],
    want: tuple[str, ...],
    family: str | None,
    python: str | None,
    limit: int,
    as_json: bool,
) -> int:
    """Valid stacks that keep what is pinned, nearest first; or which rule blocks the request.

    Works over the listed stacks and over the rules. Exit 3 when nothing is valid.
    """
    from cannenv.resolve import resolve
    from cannenv.soc import normalize_family

    m = _matrix(ctx)
    fam = normalize_family(family) if family else None
    res = resolve(
        m,
        keep=_pins(keep, "--keep"),
        want=_pins(want, "--want"),
        family=fam,
        python=python,
        limit=limit or None,
    )
    if as_json:
        data = res.to_json()
        data["matrix_digest"] = m.digest
        _echo_json(data)
    else:
        _render_resolution(res)
    return 0 if res.ok else int(ExitCode.NOT_FOUND)


def _render_resolution(res: Resolution) -> None:
    from rich.table import Table

    con = _console()
    if res.ok:
        t = Table(title="valid stacks, nearest first")
        for col in (
            "id",
            "listed",
            "status",
            "driver needs",
            "evidence",
            "cann",
            "torch",
            "torch_npu",
            "python",
        ):
            t.add_column(col)
        for c in res.candidates:
            _row(
                t,
                c.id,
                "yes" if c.listed else "rules",
                c.status,
                c.driver.range,
                c.driver.evidence,
                c.cann,
                c.torch,
                c.torch_npu,
                c.python,
            )
        con.print(t)
        return
    _say(
        con,
        "red",
        "no valid stack",
        "for " + ", ".join(f"{k} {v}" for k, v in {**res.want, **res.keep}.items()),
    )
    for b in res.blockers:
        con.print(f"blocked: {b}")
    for ch in res.changes:
        con.print(f"nearest valid change: {ch.message}")
        if ch.candidates:
            con.print("  e.g. " + ", ".join(c.id for c in ch.candidates[:3]))


@matrix.command("schema")
@click.option(
    "--write",
    "write",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the schema to this file (e.g. matrices/schema.json) instead of printing it.",
)
def schema(write: Path | None) -> int:
    """Print the JSON Schema of a matrix file (generated from the model)."""
    from cannenv.matrix import json_schema

    text = json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"
    if write:
        from cannenv.fsutil import atomic_write_text

        atomic_write_text(write, text)
        click.echo(f"wrote {write}")
    else:
        click.echo(text, nl=False)
    return 0


@matrix.command("import-torch-npu")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--merge",
    "merge",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Add rows missing from this matrix file (the wheel is named as their source).",
)
@click.option("--json", "as_json", is_flag=True)
def import_torch_npu(path: Path, merge: Path | None, as_json: bool) -> int:
    """Read the "Ascend Auxiliary Software" table from a torch_npu wheel or METADATA file."""
    from cannenv.torch_npu_import import merge_rows, read_table

    table = read_table(path)
    added: list[dict[str, Any]] = []
    if merge is not None:
        added = merge_rows(merge, table)
    if as_json:
        _echo_json({**table.to_json(), **({"merged_into": str(merge), "added": added} if merge else {})})
        return 0
    from rich.table import Table

    t = Table(title=_text(f"{table.source_title}: {len(table.rows)} rows"))
    for col in ("CANN", "PyTorch", "torch_npu", "branch", "as written"):
        t.add_column(col)
    for r in table.rows:
        _row(t, r.cann, r.torch, r.torch_npu, r.branch or "-", r.raw_torch_npu)
    con = _console()
    con.print(t)
    for w in table.warnings:
        _say(con, "yellow", "warning:", w)
    if merge is not None:
        con.print(f"added {len(added)} row(s) to {merge}")
    return 0


@matrix.command("import-deployer")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print every fact with its source.")
@click.option(
    "--write-to",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the facts of all PATHS as one matrix file (e.g. matrices/deployer.json).",
)
def import_deployer(paths: tuple[Path, ...], as_json: bool, write_to: Path | None) -> int:
    """Read ascend-deployer releases (wheels or folders): CANN -> HDK, installers + sha256, torch_npu -> CANN.

    Several releases merge into one file: a fact they state alike cites each of them; where they
    disagree (a file listed with two digests) both statements are kept.

    \b
    pip download --no-deps ascend-deployer==26.0.0 -d DIR
    cannenv matrix import-deployer DIR/ascend_deployer-*.whl
    """
    from collections import Counter

    from cannenv.matrix import deployer

    imps = sorted((deployer.read_deployer(p) for p in paths), key=lambda i: deployer.release_key(i.version))
    if write_to is not None:
        from cannenv.fsutil import atomic_write_text
        from cannenv.matrix.refresh import _dump

        label = ", ".join(i.version for i in imps)
        atomic_write_text(write_to, _dump(deployer.matrix_doc(imps), f"ascend-deployer {label}"))
    if as_json:
        _echo_json(
            {
                "package": deployer.PACKAGE,
                "releases": [
                    {
                        "version": imp.version,
                        "sha256": imp.sha256,
                        "facts": [f.to_json() for f in imp.facts],
                        "warnings": imp.warnings,
                        "skipped": imp.skipped,
                    }
                    for imp in imps
                ],
            }
        )
        return 0
    con = _console()
    for imp in imps:
        kinds = Counter(f.kind for f in imp.facts)
        con.print(
            f"ascend-deployer {imp.version} (sha256 {imp.sha256 or 'folder'}): "
            + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
        )
        for f in imp.facts:
            if f.kind in ("hdk", "torch_npu"):
                label = "requires HDK" if f.kind == "hdk" else "goes with CANN"
                con.print(f"  {f.key[0]} {label} {f.key[1]}  [{f.provenance.path}]")
        for w in imp.warnings:
            _say(con, "yellow", "warning:", w)
    if write_to is not None:
        con.print(f"wrote {write_to}")
    return 0


@matrix.command("import-index")
@click.option(
    "--listing",
    "listings",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A saved index JSON document (curl -o torch-npu.json https://pypi.org/pypi/torch-npu/json). "
    "Repeatable; without it the index is asked (network).",
)
@click.option(
    "--package", "packages", multiple=True, help="Packages to ask the index for (default: torch-npu, torch)."
)
@click.option("--json", "as_json", is_flag=True)
@click.option(
    "--write-to",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the exact version sets as a matrix file (e.g. matrices/index.json).",
)
def import_index(
    listings: tuple[Path, ...], packages: tuple[str, ...], as_json: bool, write_to: Path | None
) -> int:
    """Record the torch-npu / torch versions the package index publishes, per Python and arch (exact)."""
    from cannenv.matrix import index

    if listings:
        imports = [index.read_listing(p) for p in listings]
    else:
        imports = [
            index.parse_listing(index.fetch_listing(p), name=index.INDEX_URL.format(package=p))
            for p in packages or index.PACKAGES
        ]
    doc = index.matrix_doc(imports)
    if write_to is not None:
        from cannenv.fsutil import atomic_write_text
        from cannenv.matrix.refresh import _dump

        atomic_write_text(write_to, _dump(doc, "package index listings"))
    if as_json:
        _echo_json({"wheels": doc["wheels"], "sources": doc["sources"]})
        return 0
    con = _console()
    for row in doc["wheels"]:
        con.print(
            f"{row['package']} Python {row['python']} {'/'.join(row['arches'])}: "
            f"{len(row['versions'])} versions, newest {row['versions'][-1]}"
        )
    if write_to is not None:
        con.print(f"wrote {write_to}")
    return 0


@matrix.command("refresh")
@click.option(
    "--from",
    "folder",
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Folder with ascend_deployer-*.whl, torch_npu-*.whl and index listings (*.json).",
)
@click.option("--write", is_flag=True, help="Apply: rewrite the importers' files and add missing rows.")
@click.option(
    "--matrix-dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="The matrix folder to compare with and write to (default: the shipped one).",
)
@click.option("--json", "as_json", is_flag=True)
def refresh(folder: Path, write: bool, matrix_dir: Path | None, as_json: bool) -> int:
    """Run every importer over downloaded artefacts and print a reviewable diff against the matrix.

    Exit 0 when every imported fact is in the matrix (conflicts recorded with both sources), 1 when
    there is something to review (added, changed, unrecorded conflicts).
    """
    from cannenv.matrix import loader
    from cannenv.matrix import refresh as rf
    from cannenv.resources import matrices_dir

    mdir = matrix_dir or matrices_dir()
    r = rf.gather(folder)
    m = loader.load_files(loader.matrix_files([mdir]))
    rf.compare(r, m)
    written: list[str] = []
    if write:
        written = rf.write(r, mdir)
    if as_json:
        _echo_json({**r.to_json(), "written": written, "kept_releases": r.kept})
    else:
        _render_refresh(r, written)
    return int(ExitCode.CHECKS_FAILED) if r.unexplained and not write else 0


@matrix.command("fetch-metadata")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--package", default="torch-npu", show_default=True, help="the distribution on the index")
@click.option("--version", "versions", multiple=True, help="only these versions' METADATA (repeatable)")
@QUIET
def fetch_metadata(folder: Path, package: str, versions: tuple[str, ...], quiet: bool) -> int:
    """Save the index listing and every wheel's METADATA into FOLDER/wheel_metadata/ (network).

    Then `cannenv matrix refresh --from FOLDER` imports them: Requires-Dist torch, Requires-Python
    and the cpXY x platform builds of every wheel.
    """
    from cannenv.matrix import wheel_metadata
    from cannenv.progress import Progress

    n = wheel_metadata.fetch(
        folder / wheel_metadata.FOLDER,
        package=package,
        versions=set(versions) or None,
        progress=Progress.for_cli(quiet),
    )
    click.echo(f"wrote {folder / wheel_metadata.FOLDER}: the listing and {n} wheels' METADATA")
    return 0


@matrix.command("save-release-notes")
@click.argument("git_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
def save_release_notes(git_dir: Path, folder: Path) -> int:
    """Save every revision of the TorchNPU release note that a branch or tag of GIT_DIR (a clone of
    Ascend/pytorch, bare or not) holds into FOLDER/torchnpu_release_notes/, with refs.json.

    Then `cannenv matrix refresh --from FOLDER` imports them. Runs `git` only (no network: fetch the
    clone first, `git clone --mirror https://gitcode.com/Ascend/pytorch.git`).
    """
    from cannenv.matrix import torchnpu_notes

    out = folder / torchnpu_notes.FOLDER
    entries = torchnpu_notes.save_from_git(git_dir, out)
    refs = sum(len(e["refs"]) for e in entries)
    click.echo(_line(f"wrote {out}: {len(entries)} release notes held by {refs} refs, and refs.json"))
    return 0


@matrix.command("save-component-notes")
@click.argument("git_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("repository")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
def save_component_notes(git_dir: Path, repository: str, folder: Path) -> int:
    """Save every revision of the version-table documents that a branch or tag of GIT_DIR (a clone
    of REPOSITORY: Ascend/MindSpeed-LLM, Ascend/MindSpeed, Ascend/triton-ascend, Ascend/MindIE-Motor
    or Ascend/MindIE-LLM) holds into FOLDER/component_notes/<owner>+<repo>/, with refs.json.

    Then `cannenv matrix refresh --from FOLDER` imports them. Runs `git` only (no network).
    """
    from cannenv.matrix import component_notes

    out = folder / component_notes.FOLDER
    entries = component_notes.save_from_git(git_dir, repository, out)
    refs = sum(len(e["refs"]) for e in entries)
    click.echo(
        _line(
            f"wrote {out / repository.replace('/', '+')}: {len(entries)} documents with version tables "
            f"held by {refs} refs, and refs.json"
        )
    )
    return 0


def _render_refresh(r: Any, written: list[str]) -> None:
    from rich.table import Table

    con = _console()
    t = Table(title="refresh: imported facts against the matrix")
    for col in ("source", "imported", "same", "added", "changed", "conflict (recorded)"):
        t.add_column(col)
    for label, c in r.counts().items():
        _row(
            t,
            label,
            str(c["imported"]),
            str(c["same"]),
            str(c["added"]),
            str(c["changed"]),
            f"{c['conflict']} ({c['recorded_conflict']})",
        )
    con.print(t)
    for c in r.changes:
        if c.status == "same":
            continue
        mark = {"added": "+", "changed": "~", "conflict": "!"}[c.status]
        rec = " (both recorded)" if c.status == "conflict" and c.recorded else ""
        con.print(f"{mark} {c.kind} {c.key}: {c.detail}{rec}  [{c.source}]")
    for w in r.warnings:
        _say(con, "yellow", "note:", w)
    if r.kept:
        con.print(
            f"kept: ascend-deployer {', '.join(r.kept)} (recorded before, not in --from: their facts stay)"
        )
    for path in written:
        con.print(f"wrote {path}")
    con.print(f"{len(r.unexplained)} unexplained difference(s)")


COMMANDS: list[click.Command] = [matrix]
