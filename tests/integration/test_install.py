"""deploy/install.sh into a temporary prefix and root, with no package index: the venv it makes
runs ``briny-call --local test.ping``, the units it installs point at it (and pass
``systemd-analyze verify``), a rerun upgrades in place without replacing the operator's config,
and nothing but briny's own files appears (Salt's stay as they were)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import wheelhouse

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
INSTALL = REPO / "deploy" / "install.sh"
UNITS = ("briny-master.service", "briny-minion.service")


def offline_env() -> dict[str, str]:
    """This environment without any pip configuration: no index, no extra find-links."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    return env


def run_install(*args: str | Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["bash", str(INSTALL), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env=offline_env(),
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, f"install.sh failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("install")
    wheels = base / "wheels"
    # briny's wheel from this checkout (pip's build, with the build requirements tests/run.sh's
    # install needed), its dependencies repacked from this interpreter: no index from here on
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    wheelhouse.build("briny", wheels)
    (wheel,) = wheels.glob("briny-*.whl")
    root, prefix = base / "root", base / "opt" / "briny"
    salt_minion = root / "etc" / "salt" / "minion"  # a host that runs Salt
    salt_minion.parent.mkdir(parents=True)
    salt_minion.write_text("master: salt.example\n")
    out = run_install("--prefix", prefix, "--root", root, "--wheel", wheel, "--wheelhouse", wheels)
    assert "briny 0.1.0 installed in" in out.stdout
    return {"base": base, "root": root, "prefix": prefix, "wheel": wheel, "wheels": wheels}


def briny_call_ping(installed: dict[str, Path]) -> subprocess.CompletedProcess[str]:
    conf = installed["base"] / "conf"
    conf.mkdir(exist_ok=True)
    (conf / "minion").write_text(f"id: installed\nfile_client: local\nroot_dir: {installed['base'] / 'host'}\n")
    return subprocess.run(
        [str(installed["prefix"] / "bin" / "briny-call"), "--local", "-c", str(conf), "test.ping", "--out", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(installed["base"])},
        cwd=installed["base"],
    )


def test_the_installed_briny_call_answers_test_ping(installed):
    done = briny_call_ping(installed)
    assert (done.returncode, json.loads(done.stdout)) == (0, {"local": True}), done.stderr
    # the venv's own Python runs it, not this checkout's
    shebang = (installed["prefix"] / "bin" / "briny-call").read_text().splitlines()[0]
    assert shebang == f"#!{installed['prefix']}/bin/python"


def test_only_brinys_files_are_installed_and_salts_are_untouched(installed):
    root = installed["root"]
    found = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() or p.is_symlink())
    assert found == [
        "etc/briny/master",
        "etc/briny/minion",
        "etc/logrotate.d/briny",
        "etc/salt/minion",
        "etc/systemd/system/briny-api.service",
        "etc/systemd/system/briny-master.service",
        "etc/systemd/system/briny-minion.service",
        "usr/local/bin/briny",
        "usr/local/bin/briny-api",
        "usr/local/bin/briny-call",
        "usr/local/bin/briny-cp",
        "usr/local/bin/briny-key",
        "usr/local/bin/briny-master",
        "usr/local/bin/briny-minion",
        "usr/local/bin/briny-run",
    ]
    assert (root / "etc/salt/minion").read_text() == "master: salt.example\n"
    assert (root / "usr/local/bin/briny-call").resolve() == installed["prefix"] / "bin" / "briny-call"
    assert (root / "etc/logrotate.d/briny").read_text() == (REPO / "deploy/logrotate/briny").read_text()


def test_the_units_point_at_the_prefix_and_their_documentation_exists(installed):
    for unit in UNITS:
        text = (installed["root"] / "etc/systemd/system" / unit).read_text()
        fields = [line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#")]
        values = {k: v for k, v in fields}
        assert values["Type"] == "notify", unit
        daemon = unit.removesuffix(".service")
        assert values["ExecStart"] == f"{installed['prefix']}/bin/{daemon} -c /etc/briny", unit
        assert os.access(values["ExecStart"].split()[0], os.X_OK), unit
        docs = values["Documentation"].split()
        assert docs, unit
        for url in docs:
            assert url.startswith("file://"), url
            assert Path(url.removeprefix("file://")).is_file(), url


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_analyze_verifies_the_installed_units(installed):
    units = [str(installed["root"] / "etc/systemd/system" / unit) for unit in UNITS]
    done = subprocess.run(
        ["systemd-analyze", "verify", *units], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    # verify's own complaints name the unit file; others (the host's units) are not ours to judge
    ours = [line for line in done.stderr.splitlines() if "briny-" in line]
    assert ours == [], done.stderr


def test_a_rerun_upgrades_in_place_and_keeps_the_operators_config(installed):
    root, prefix = installed["root"], installed["prefix"]
    minion_conf = root / "etc/briny/minion"
    minion_conf.write_text("master: briny1.example\n")
    site = Path(
        subprocess.run(
            [
                str(prefix / "bin/python"),
                "-c",
                "import briny.common, os; print(os.path.dirname(briny.common.__file__))",
            ],
            capture_output=True,
            text=True,
            check=True,
            cwd=installed["base"],  # not this checkout, whose briny/ would shadow the installed one
        ).stdout.strip()
    )
    (site / "sdnotify.py").unlink()  # an older install's files: the rerun writes the new ones
    run_install("--prefix", prefix, "--root", root, "--wheel", installed["wheel"], "--wheelhouse", installed["wheels"])
    assert (site / "sdnotify.py").is_file()
    assert minion_conf.read_text() == "master: briny1.example\n"
    assert (root / "etc/briny/minion.example").read_text() == (REPO / "deploy/config/minion").read_text()
    done = briny_call_ping(installed)
    assert (done.returncode, json.loads(done.stdout)) == (0, {"local": True}), done.stderr


def test_bad_arguments_are_refused_with_a_clear_error(tmp_path):
    for args, message in (
        (["--prefix", "relative/briny"], "--prefix must be an absolute path"),
        (["--wheel", str(tmp_path / "none.whl")], "no wheel at"),
        (["--frobnicate"], "unknown argument: --frobnicate"),
    ):
        done = subprocess.run(["bash", str(INSTALL), *args], capture_output=True, text=True, timeout=30)
        assert done.returncode == 2, args
        assert message in done.stderr, (args, done.stderr)
