"""The ``service`` execution modules: the sysvinit provider over init scripts
and rc links in a temporary directory (real processes, nothing under /etc),
and the systemd provider over a fake ``systemctl`` that records its calls."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from briny.common import loader

SCRIPT = textwrap.dedent("""\
    #!/bin/sh
    ### BEGIN INIT INFO
    # Provides:          {name}
    # Default-Start:     2 3 4 5
    # Default-Stop:      0 1 6
    ### END INIT INFO
    echo "$1" >> {log}
    case "$1" in
      start) touch {flag} ;;
      stop) rm -f {flag} ;;
      restart|reload|force-reload) [ -f {flag} ] || exit 7 ;;
      status) [ -f {flag} ] && exit 0; exit 3 ;;
      *) exit 2 ;;
    esac
    exit 0
    """)

FAKE_UPDATE_RC = textwrap.dedent("""\
    #!/bin/sh
    # fake update-rc.d over {rc}: defaults / enable / disable for runlevel 2 only
    echo "$@" >> {log}
    case "$2" in
      defaults) ls {rc}/rc2.d | grep -q "$1\\$" || ln -s ../init.d/$1 {rc}/rc2.d/S01$1 ;;
      enable) rm -f {rc}/rc2.d/K01$1; ln -sf ../init.d/$1 {rc}/rc2.d/S01$1 ;;
      disable) rm -f {rc}/rc2.d/S01$1; ln -sf ../init.d/$1 {rc}/rc2.d/K01$1 ;;
    esac
    """)


@pytest.fixture
def sysv(tmp_path: Path):
    """(module, salt loader, root): the sysvinit provider over tmp_path/etc."""
    etc = tmp_path / "etc"
    (etc / "init.d").mkdir(parents=True)
    for level in "0123456S":
        (etc / f"rc{level}.d").mkdir()
    for name in ("web-1", "db"):
        script = etc / "init.d" / name
        script.write_text(SCRIPT.format(name=name, log=tmp_path / f"{name}.log", flag=tmp_path / f"{name}.up"))
        script.chmod(0o755)
    (etc / "init.d" / "README").write_text("not a service\n")
    (etc / "init.d" / "notexec").write_text("#!/bin/sh\n")
    opts = {"id": "t", "test": False, "providers": {"service": "sysvinit"}}
    salt = loader.minion_mods(opts)
    mod = salt.module("service")
    assert mod is not None and mod.__name__.split(".")[-1].startswith("sysvinit_service")
    mod.INIT_DIR = str(etc / "init.d")
    mod.RC_ROOT = str(etc)
    mod.UPDATE_RC_D = str(tmp_path / "no-update-rc.d")
    mod.RUNLEVEL = str(tmp_path / "no-runlevel")
    return mod, salt, tmp_path


def test_discovery(sysv) -> None:
    mod, salt, _ = sysv
    assert salt["service.get_all"]() == ["db", "web-1"]
    assert salt["service.available"]("web-1") is True
    assert salt["service.available"]("notexec") is False
    assert salt["service.available"]("../../bin/sh") is False
    assert salt["service.missing"]("nope") is True


def test_start_stop_status_via_script(sysv) -> None:
    mod, salt, tmp = sysv
    assert salt["service.status"]("web-1") is False
    assert salt["service.start"]("web-1") is True
    assert salt["service.status"]("web-1") is True
    assert salt["service.status"]("web-*") == {"web-1": True}
    assert salt["service.reload"]("web-1") is True
    assert salt["service.restart"]("web-1") is True
    assert salt["service.full_restart"]("web-1") is True
    assert salt["service.stop"]("web-1") is True
    assert salt["service.reload"]("web-1") is False  # the script refuses: not running
    log = (tmp / "web-1.log").read_text().split()
    assert log == ["status", "start", "status", "status", "reload", "restart", "stop", "start", "stop", "reload"]


def test_status_by_signature(sysv) -> None:
    import subprocess
    import sys
    import time

    _, salt, _ = sysv
    marker = f"briny-sig-{os.getpid()}"
    proc = subprocess.Popen([sys.executable, "-c", "import time, sys; time.sleep(30)", marker])
    try:
        found = False
        for _ in range(50):  # the child may need a moment before its command line shows
            found = salt["service.status"]("anything", sig=f"{marker}|nothing-else")
            if found:
                break
            time.sleep(0.1)
        cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes() if proc.poll() is None else None
        assert found is True, f"child alive={proc.poll() is None} cmdline={cmdline!r}"
    finally:
        proc.kill()
        proc.wait(5)
    assert salt["service.status"]("anything", sig=marker) is False
    assert salt["service.status"]("anything", sig="briny-no-such-process-[x]yz") is False


def test_enable_disable_with_links(sysv) -> None:
    """No update-rc.d: links come from the LSB header; names with digits work."""
    mod, salt, tmp = sysv
    rc = tmp / "etc"
    assert salt["service.enabled"]("web-1") is False
    assert salt["service.enable"]("web-1") is True
    assert sorted(os.listdir(rc / "rc2.d")) == ["S01web-1"]
    assert os.readlink(rc / "rc0.d" / "K01web-1") == "../init.d/web-1"
    assert salt["service.enabled"]("web-1") is True and salt["service.get_enabled"]() == ["web-1"]
    assert salt["service.disable"]("web-1") is True
    assert sorted(os.listdir(rc / "rc2.d")) == ["K01web-1"]
    assert salt["service.enabled"]("web-1") is False and salt["service.disabled"]("web-1") is True
    assert salt["service.get_disabled"]() == ["db", "web-1"]


def test_enable_disable_with_update_rc_d(sysv) -> None:
    mod, salt, tmp = sysv
    fake = tmp / "update-rc.d"
    fake.write_text(FAKE_UPDATE_RC.format(rc=tmp / "etc", log=tmp / "urc.log"))
    fake.chmod(0o755)
    mod.UPDATE_RC_D = str(fake)
    assert salt["service.enable"]("db") is True
    assert salt["service.disable"]("db") is True
    assert (tmp / "urc.log").read_text().splitlines() == ["db defaults", "db enable", "db disable"]


def test_runlevel_fallbacks(sysv) -> None:
    mod, salt, tmp = sysv
    assert mod._runlevel() == "2"
    fake = tmp / "runlevel"
    fake.write_text("#!/bin/sh\necho 'N 3'\n")
    fake.chmod(0o755)
    mod.RUNLEVEL = str(fake)
    assert mod._runlevel() == "3"
    (tmp / "etc" / "rc3.d" / "S02db").symlink_to("../init.d/db")
    assert salt["service.enabled"]("db") is True


FAKE_SYSTEMCTL = textwrap.dedent("""\
    #!/bin/sh
    echo "$@" >> {log}
    case "$1" in
      is-active) [ "$3" = "up.service" ] && exit 0; exit 3 ;;
      is-enabled) case "$2" in up.service) echo enabled ;; nope.service) echo "Failed" >&2; exit 1 ;;
                  *) echo disabled; exit 1 ;; esac ;;
      show) [ "$3" = "nope.service" ] && echo LoadState=not-found || echo LoadState=loaded ;;
      list-unit-files) printf 'up.service enabled enabled\\ndown.service disabled enabled\\ngetty@.service static -\\n' ;;
      list-units) printf '  up.service loaded active running Up\\n' ;;
      start|stop|restart|reload|enable|disable) exit 0 ;;
      *) exit 1 ;;
    esac
    """)


def _fake_systemctl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> Path:
    """Put ``script`` on PATH as ``systemctl``; its calls go to the returned log."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "systemctl").write_text(script)
    (bindir / "systemctl").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ.get('PATH', '')}")
    return tmp_path / "systemctl.log"


@pytest.fixture
def systemd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    _fake_systemctl(tmp_path, monkeypatch, FAKE_SYSTEMCTL.format(log=tmp_path / "systemctl.log"))
    salt = loader.minion_mods({"id": "t", "test": False, "providers": {"service": "systemd"}})
    mod = salt.module("service")
    assert mod is not None and mod.__name__.split(".")[-1].startswith("systemd_service")
    return salt, tmp_path / "systemctl.log"


def test_systemd_provider(systemd) -> None:
    salt, log = systemd
    assert salt["service.get_all"]() == ["down", "up"]
    assert salt["service.available"]("up") is True
    assert salt["service.available"]("nope") is False
    assert salt["service.status"]("up") is True and salt["service.status"]("down") is False
    assert salt["service.enabled"]("up") is True and salt["service.enabled"]("down") is False
    assert salt["service.start"]("down") is True
    assert salt["service.reload"]("up.service") is True
    assert salt["service.enable"]("down") is True
    assert salt["service.full_restart"]("up") is True
    calls = log.read_text().splitlines()
    for expected in (
        "start down.service",
        "reload up.service",
        "enable down.service",
        "stop up.service",
        "start up.service",
    ):
        assert expected in calls


def test_provider_choice_follows_config() -> None:
    salt = loader.minion_mods({"id": "t", "providers": {"service": "upstart"}})
    assert "service.start" not in salt


MASKING_SYSTEMCTL = textwrap.dedent("""\
    #!/bin/sh
    # fake systemctl: mask / unmask [--runtime] UNIT as links under {etc} and {run}
    echo "$@" >> {log}
    verb=$1 dir={etc} unit=$2
    [ "$2" = "--runtime" ] && dir={run} && unit=$3
    case "$verb" in
      mask) mkdir -p "$dir" && ln -sf /dev/null "$dir/$unit" ;;
      unmask) [ "$unit" = "stuck.service" ] && {{ echo "Failed to unmask: Access denied"; exit 1; }}; rm -f "$dir/$unit" ;;
      *) exit 1 ;;
    esac
    """)


@pytest.fixture
def masking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """(tmp, log): a fake systemctl on PATH; briny.minion.host.systemd looks under tmp/etc and tmp/run."""
    from briny.minion.host import systemd as sd

    etc, run = tmp_path / "etc" / "systemd" / "system", tmp_path / "run" / "systemd" / "system"
    log = _fake_systemctl(
        tmp_path, monkeypatch, MASKING_SYSTEMCTL.format(log=tmp_path / "systemctl.log", etc=etc, run=run)
    )
    monkeypatch.setattr(sd, "ETC_DIR", str(etc))
    monkeypatch.setattr(sd, "RUN_DIR", str(run))
    return tmp_path, log


def test_offline_mode_carries_the_systemd_extras(masking) -> None:
    """systemctl installed, systemd not PID 1: the sysvinit provider, plus Salt's systemd extras."""
    tmp, log = masking
    salt = loader.minion_mods({"id": "t", "test": False})
    assert salt.module("service").__name__.split(".")[-1].startswith("sysvinit_service")
    assert salt["service.offline"]() is True
    assert salt["service.masked"]("web") is False
    assert salt["service.mask"]("web") is True
    assert os.readlink(tmp / "etc" / "systemd" / "system" / "web.service") == "/dev/null"
    assert salt["service.masked"]("web") is True and salt["service.masked"]("web", runtime=True) is False
    assert salt["service.unmask"]("web") is True
    assert salt["service.masked"]("web") is False
    assert salt["service.unmask"]("web") is True  # nothing to do: systemctl is not called
    assert log.read_text().splitlines() == ["mask web.service", "unmask web.service"]
    # a runtime mask would create /run/systemd/system and make the host look booted: refused
    with pytest.raises(Exception, match="a runtime mask needs systemd running as PID 1"):
        salt["service.mask"]("web", runtime=True)
    assert not (tmp / "run").exists()


def test_offline_extras_only_without_a_chosen_provider(masking, monkeypatch: pytest.MonkeyPatch) -> None:
    salt = loader.minion_mods({"id": "t", "test": False, "providers": {"service": "debian"}})
    assert "service.start" in salt and "service.offline" not in salt and "service.mask" not in salt
    monkeypatch.setenv("PATH", "/nonexistent")  # no systemctl: no offline mode
    salt = loader.minion_mods({"id": "t", "test": False})
    assert "service.start" in salt and "service.masked" not in salt


def test_systemd_provider_masks(masking) -> None:
    tmp, log = masking
    (tmp / "run" / "systemd" / "system").mkdir(parents=True)  # systemd "runs"
    salt = loader.minion_mods({"id": "t", "test": False})
    assert salt.module("service").__name__.split(".")[-1].startswith("systemd_service")
    assert salt["service.offline"]() is False
    assert salt["service.mask"]("db.socket", runtime=True) is True
    assert salt["service.masked"]("db.socket", runtime=True) is True
    assert salt["service.masked"]("db.socket") is False
    (tmp / "etc" / "systemd" / "system").mkdir(parents=True)
    (tmp / "etc" / "systemd" / "system" / "stuck.service").symlink_to("/dev/null")
    with pytest.raises(Exception, match="Failed to unmask service 'stuck': Failed to unmask: Access denied"):
        salt["service.unmask"]("stuck")
    (tmp / "etc" / "systemd" / "system" / "plain.service").write_text("[Unit]\n")
    assert salt["service.masked"]("plain") is False  # a unit file, not a mask
    assert log.read_text().splitlines() == ["mask --runtime db.socket", "unmask stuck.service"]
