"""Files plboost writes for a user are written whole or not at all (issue 38: a size-limited disk left a truncated
results.json behind an error)."""

import errno
import os
import subprocess
import sys

import pytest

from plboost._writing import write_atomic, write_text


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "results.json"
    path.write_text("old")

    def fails_halfway(handle):
        handle.write(b"new, but only ha")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError, match="No space left on device") as caught:
        write_atomic(path, fails_halfway)
    assert caught.value.filename == str(path)  # the path asked for, not the temporary file
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


def test_a_file_size_limit_leaves_no_truncated_file(tmp_path):
    path = tmp_path / "out.json"
    code = ("import resource, sys\n"
            "resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))\n"
            "from plboost._writing import write_text\n"
            "try:\n"
            f"    write_text({str(path)!r}, 'x' * 10000)\n"
            "except OSError as error:\n"
            "    print(error.errno, error.filename)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.split() == [str(errno.EFBIG), str(path)], result.stderr
    assert list(tmp_path.iterdir()) == []


def test_permissions_are_those_of_the_old_file_or_of_a_plain_open(tmp_path):
    mask = os.umask(0o027)
    try:
        fresh = write_text(tmp_path / "fresh.txt", "a")
        assert fresh.stat().st_mode & 0o777 == 0o640
        kept = tmp_path / "kept.txt"
        kept.write_text("old")
        kept.chmod(0o604)
        write_text(kept, "new")
        assert kept.stat().st_mode & 0o777 == 0o604 and kept.read_text() == "new"
    finally:
        os.umask(mask)


def test_a_symbolic_link_is_written_through_and_a_device_directly(tmp_path):
    target = tmp_path / "target.txt"
    target.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_text(link, "new")
    assert link.is_symlink() and target.read_text() == "new"
    if os.path.exists("/dev/full"):
        with pytest.raises(OSError) as caught:
            write_text("/dev/full", "x")
        assert caught.value.errno == errno.ENOSPC and caught.value.filename == "/dev/full"
