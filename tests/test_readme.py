"""Every code block of README.md, docs/guide.md and docs/cli.md (DOCUMENTS) runs as written, from the repository
root (so that ``../shared/data`` resolves): each ```python block alone, in a fresh namespace (a block that used a
name from an earlier one would fail: a reader copies one block, not the page), and ```sh blocks command by
command.

Each block is a test case of its own, named by its file, its number and its first line, so a failure names the
block; a block added to one of these files is picked up without editing this file. What the tests change in the
commands to keep them short and off the user's files is listed here, in full:

- ``/tmp/...`` paths become paths in a temporary directory, one per file: a shell block can read what an
  earlier block of the same file wrote (cli.md's ``plboost evaluate`` reads the model its ``plboost train``
  saved, ``plboost summarize`` the results of the ``compare`` before it), so the blocks of a file run in order;
- the numbers of boosting rounds, tuning trials, repeats, folds and the demo's queries shrink (REWRITES);
- ``plboost`` runs as ``python -m plboost`` with this interpreter, ``python`` as this interpreter;
- ``make`` and ``pip`` lines are not run (SKIPPED_COMMANDS says why).

Languages other than python and sh (text, toml, ...) are not code to run; their blocks are reported as skipped.
A ```toml block whose first line is a comment naming a file of the repository (``# docs/examples/compare.toml:
...``) must be that file, byte for byte, so that the command run on the file runs what the page shows.
"""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: the files whose code blocks run, relative to the repository root
DOCUMENTS = ("README.md", "docs/guide.md", "docs/cli.md")

PYTHON_LANGUAGES = {"python", "py", "python3"}
SHELL_LANGUAGES = {"sh", "bash", "shell", "console"}

#: (pattern, replacement, languages): the documents' long runs cut short. Visible numbers only; each rule must
#: still match somewhere in DOCUMENTS (test_every_rewrite_still_applies), so that a reworded example cannot
#: silently run at full length.
REWRITES = [
    (r"(?m)^rounds = \d+$", "rounds = 3", PYTHON_LANGUAGES),  # boosting rounds of the Python examples
    (r"--rounds \d+", "--rounds 3", SHELL_LANGUAGES),
    (r"--tune \d+", "--tune 2", SHELL_LANGUAGES),
    (r"--repeats \d+", "--repeats 2", SHELL_LANGUAGES),
    # one fold of the five where a comparison has a single dataset (several datasets have no split name in common)
    (r"plboost compare ../shared/data/MQ2008 --", "plboost compare ../shared/data/MQ2008 --folds Fold1 --",
     SHELL_LANGUAGES),
    # and where it has several, MQ2008's Fold1 directory as the dataset (a dataset of one split, named Fold1)
    (r"plboost compare ../shared/data/MQ2008 ../", "plboost compare ../shared/data/MQ2008/Fold1 ../",
     SHELL_LANGUAGES),
    (r"(?m)^plboost demo$", "plboost demo --queries 100 --rounds 3", SHELL_LANGUAGES),
]

#: commands of the documents that this file does not run, and why
SKIPPED_COMMANDS = {
    "make": "sets up a virtual environment and runs the demo, the suite itself or the notebooks (the demo runs in "
            "test_cli.py, the notebooks in test_notebooks.py)",
    "pip": "installs packages into the environment the tests run in",
}

TIMEOUT_S = 300  # per shell command


def readme_blocks(text: str, name: str = "README.md") -> list[tuple[int, str, str]]:
    """(number from 1, language, code) of each fenced code block of ``text`` (the file ``name``), in order."""
    blocks, language, lines = [], None, []
    for line in text.splitlines():
        fence = re.match(r"^\s*```(.*)$", line)
        if language is None and fence:
            language, lines = fence.group(1).strip().lower(), []
        elif language is not None and fence and not fence.group(1).strip():
            blocks.append((len(blocks) + 1, language, "\n".join(lines) + "\n"))
            language = None
        elif language is not None:
            lines.append(line)
    assert language is None, f"{name}: a code block is not closed"
    return blocks


#: (document, number, language, code) of every block of DOCUMENTS, a file's blocks in order
BLOCKS = [(document, *block) for document in DOCUMENTS
          for block in readme_blocks((REPO / document).read_text(encoding="utf-8"), document)]


def block_id(block) -> str:
    document, number, language, code = block
    first = next((line.strip() for line in code.splitlines() if line.strip()), "")
    first = re.sub(r"[^A-Za-z0-9_.,:=@+-]+", "_", first)[:50].strip("_")
    return f"{document}-{number}-{language or 'plain'}-{first}"


def rewritten(code: str, language: str, tmp: Path) -> str:
    """``code`` as the test runs it: REWRITES applied and /tmp/ moved to ``tmp``."""
    for pattern, replacement, languages in REWRITES:
        if language in languages:
            code = re.sub(pattern, replacement, code)
    return code.replace("/tmp/", f"{tmp}/")


def shell_commands(code: str) -> list[str]:
    """The commands of a shell block: ``\\``-continued lines joined, comment lines and blank lines dropped
    (a comment after a command is left to bash)."""
    commands, current = [], ""
    for line in code.splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            current += line.strip()[:-1].strip() + " "
            continue
        commands.append(current + line.strip())
        current = ""
    assert not current, f"a continued line ends the block: {current!r}"
    return commands


def as_run(command: str) -> tuple[str | None, str]:
    """(the reason it is skipped or None, the command for bash): ``plboost`` and ``python`` run with this
    interpreter."""
    words = shlex.split(command, comments=True)
    program = words[0] if words else ""
    if program in SKIPPED_COMMANDS:
        return SKIPPED_COMMANDS[program], command
    python = shlex.quote(sys.executable)
    if program == "plboost":
        command = f"{python} -m plboost" + command[len("plboost"):]
    elif program in ("python", "python3"):
        command = python + command[len(program):]
    return None, command


#: a temporary directory per document, made when its first block runs
TMP_DIRS: dict[str, Path] = {}


@pytest.fixture
def document_tmp(tmp_path_factory, request) -> Path:
    """Where a document's /tmp/ paths go: one directory per file, shared by its blocks."""
    document = request.node.callspec.params["block"][0]
    if document not in TMP_DIRS:
        TMP_DIRS[document] = tmp_path_factory.mktemp(re.sub(r"\W+", "-", document))
    return TMP_DIRS[document]


def run_python(document: str, number: int, code: str, tmp: Path) -> None:
    """``code`` alone, in a fresh namespace, as ``python file.py`` would run it."""
    exec(compile(rewritten(code, "python", tmp), f"{document} block {number}", "exec"), {"__name__": "__main__"})


@pytest.mark.engine
@pytest.mark.parametrize("block", BLOCKS, ids=block_id)
def test_readme_block_runs(block, document_tmp, monkeypatch):
    document, number, language, code = block
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    if language in PYTHON_LANGUAGES:
        run_python(document, number, code, document_tmp)
    elif language in SHELL_LANGUAGES:
        skipped, ran = {}, 0
        for command in shell_commands(rewritten(code, language, document_tmp)):
            reason, to_run = as_run(command)
            if reason:
                skipped.setdefault(reason, []).append(command.split("#")[0].strip())
                print(f"{document} block {number}: not run: {command} ({reason})")
                continue
            print(f"{document} block {number}: {to_run}")  # shown with the test's output when it fails
            completed = subprocess.run(["bash", "-c", to_run], capture_output=True, text=True, timeout=TIMEOUT_S,
                                       env={**os.environ, "MPLBACKEND": "Agg"})
            assert completed.returncode == 0, (
                f"{document} block {number}: exit status {completed.returncode} of\n{to_run}\n"
                f"--- stdout (end)\n{completed.stdout[-3000:]}\n--- stderr (end)\n{completed.stderr[-3000:]}")
            ran += 1
        if not ran:
            pytest.skip("; ".join(f"{', '.join(commands)}: {reason}" for reason, commands in skipped.items()))
    else:
        pytest.skip(f"a {language or 'plain'} block is not code to run")


@pytest.mark.parametrize("document", DOCUMENTS)
def test_each_document_has_blocks_to_run(document):
    languages = {language for name, _, language, _ in BLOCKS if name == document}
    assert languages & (PYTHON_LANGUAGES | SHELL_LANGUAGES), f"{document}: no python or sh block"


def test_the_readme_has_blocks_of_both_kinds():
    languages = {language for name, _, language, _ in BLOCKS if name == "README.md"}
    assert languages & PYTHON_LANGUAGES and languages & SHELL_LANGUAGES


def test_every_rewrite_still_applies():
    """A rule that no longer matches in any of DOCUMENTS would let a reworded example run at full length."""
    for pattern, _, languages in REWRITES:
        assert any(re.search(pattern, code) for _, _, language, code in BLOCKS if language in languages), pattern


def test_python_blocks_run_alone():
    """Each Python block gets a namespace of its own: a name defined by an earlier block is not there."""
    run_python("test", 1, "shared = 1\n", Path("/t"))
    with pytest.raises(NameError):
        run_python("test", 2, "shared\n", Path("/t"))


def test_toml_blocks_are_the_files_they_name():
    """A TOML block that names a repository file in its first line shows that file as it is."""
    named = 0
    for document, number, language, code in BLOCKS:
        first = re.match(r"#\s*([\w./-]+\.toml)\b", code)
        if language == "toml" and first and (REPO / first.group(1)).is_file():
            assert (REPO / first.group(1)).read_text(encoding="utf-8") == code, (
                f"{document} block {number} differs from {first.group(1)}")
            named += 1
    assert named, "no TOML block names its file (docs/cli.md shows docs/examples/compare.toml)"


def test_commands_are_split_as_bash_reads_them():
    code = "# a comment\nplboost train --train a \\\n    --rounds 300   # trailing\n\nmake demo\n"
    assert shell_commands(code) == ["plboost train --train a --rounds 300   # trailing", "make demo"]
    assert as_run("make demo  # set-up")[0] == SKIPPED_COMMANDS["make"]
    reason, command = as_run("plboost demo --rounds 3")
    assert reason is None and command == f"{shlex.quote(sys.executable)} -m plboost demo --rounds 3"
    assert rewritten("x --rounds 300 --out /tmp/a", "sh", Path("/t")) == "x --rounds 3 --out /t/a"
    assert rewritten("rounds = 500\n", "python", Path("/t")) == "rounds = 3\n"
