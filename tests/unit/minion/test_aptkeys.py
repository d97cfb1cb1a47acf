"""Repository keys (briny.minion.host.aptkeys) with the real gpg, on key files in a temporary directory."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from briny.common.exceptions import CommandExecutionError
from briny.minion.host import aptkeys

GOLDEN_KEY = Path(__file__).resolve().parents[2] / "golden" / "debian" / "cases" / "files" / "brinygolden.asc"
KEYID = "872FA09EAC20A6C8"

pytestmark = pytest.mark.skipif(shutil.which("gpg") is None, reason="needs gpg")


def run(cmd: list[str], **kwargs: Any) -> dict[str, Any]:
    p = subprocess.run(cmd, input=kwargs.get("stdin"), capture_output=True, text=True, timeout=60, check=False)
    return {"retcode": p.returncode, "stdout": p.stdout, "stderr": p.stderr}


def test_show_and_parse_keys() -> None:
    keys = aptkeys.show_keys(run, str(GOLDEN_KEY))
    assert list(keys) == [KEYID]
    assert keys[KEYID]["fingerprint"] == "7CB71D6E9C2FE6660B9C0466872FA09EAC20A6C8"
    assert keys[KEYID]["uid"].startswith("briny golden test key")
    assert keys[KEYID]["bits"] == 255 and keys[KEYID]["date_expiration"] is None


def test_install_key_file(tmp_path: Path) -> None:
    ring = tmp_path / "keyrings"
    ring.mkdir()
    aptkeys.install_key_file(run, str(GOLDEN_KEY), str(ring / "a.gpg"))
    data = (ring / "a.gpg").read_bytes()
    assert not data.startswith(b"-----") and (ring / "a.gpg").stat().st_mode & 0o777 == 0o644  # dearmored
    aptkeys.install_key_file(run, str(GOLDEN_KEY), str(ring / "a.asc"))
    assert (ring / "a.asc").read_bytes() == GOLDEN_KEY.read_bytes()  # .asc: as it was
    (tmp_path / "junk").write_text("<html>not a key</html>")
    with pytest.raises(CommandExecutionError, match="is not an OpenPGP key"):
        aptkeys.install_key_file(run, str(tmp_path / "junk"), str(ring / "junk.gpg"))
    with pytest.raises(CommandExecutionError, match="does not exist"):
        aptkeys.install_key_file(run, str(GOLDEN_KEY), str(tmp_path / "nope" / "k.gpg"))
    assert sorted(os.listdir(ring)) == ["a.asc", "a.gpg"]
    assert list(aptkeys.get_repo_keys(run, aptkey=False, keydir=str(ring))) == [KEYID]
    # the repo's own signed-by file goes first, then by name
    assert (
        aptkeys.del_repo_key(run, KEYID[-8:], aptkey=False, keydir=str(ring), prefer=str(ring / "a.gpg")) == KEYID[-8:]
    )
    assert os.listdir(ring) == ["a.asc"]
    assert aptkeys.del_repo_key(run, "12345", aptkey=False, keydir=str(ring)) is False  # 8 or 16 characters


def test_add_repo_key_from_a_file_and_text(tmp_path: Path) -> None:
    ring = tmp_path / "keyrings"
    ring.mkdir()
    cache = lambda path, saltenv="base": path
    assert aptkeys.add_repo_key(run, cache, path=str(GOLDEN_KEY), aptkey=False, keydir=str(ring), keyfile="g.gpg")
    assert aptkeys.add_repo_key(
        run, cache, text=GOLDEN_KEY.read_text(), aptkey=False, keydir=str(ring), keyfile="t.asc"
    )
    assert sorted(os.listdir(ring)) == ["g.gpg", "t.asc"]
    assert aptkeys.add_repo_key(run, cache, keyid=KEYID, keyserver="hkp://127.0.0.1:1", aptkey=False, keydir=str(ring))
    assert not aptkeys.add_repo_key(run, cache, path=str(GOLDEN_KEY), aptkey=False, keydir=str(tmp_path / "missing"))
