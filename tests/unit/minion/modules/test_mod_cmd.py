"""``cmd`` module: return values, errors and python_shell defaults as Salt 3007.17 has them."""

from __future__ import annotations

import logging
import os

import pytest

from briny.common.exceptions import CommandExecutionError, SaltInvocationError

from tests.waiting import wait_until

FAIL = "echo out; echo err >&2; exit 3"


def test_python_shell_default_off_for_cross_module_calls(loader):
    # from a template / another module: split with shlex, no shell
    assert loader["cmd.run"]("echo a | tr a b") == "a | tr a b"
    assert loader["cmd.run"]("echo $HOME") == "$HOME"
    assert loader["cmd.run"]('echo "a b"   c') == "a b c"


def test_python_shell_default_on_for_direct_calls(loader):
    assert loader["cmd.run"]("echo a | tr a b", __pub_jid="20260101000000000000") == "b"
    assert loader["cmd.run"]("echo a | tr a b", python_shell=True) == "b"
    assert loader["cmd.run"]("echo a | tr a b", __pub_jid="1", python_shell=False) == "a | tr a b"
    assert loader["cmd.shell"]("echo a | tr a b") == "b"


def test_cmd_safe_false_turns_shell_on(loader):
    loader.pack["__opts__"]["cmd_safe"] = False
    assert loader["cmd.run"]("echo a | tr a b") == "b"


def test_run_merges_stderr_and_sets_retcode(loader, caplog):
    with caplog.at_level(logging.ERROR):
        assert loader["cmd.run"](FAIL, python_shell=True) == "out\nerr"
    assert loader.pack["__context__"]["retcode"] == 3
    assert "failed with return code: 3" in caplog.text


def test_run_without_redirect(loader):
    assert loader["cmd.run"]("echo a; echo b >&2", python_shell=True, redirect_stderr=False) == "a"


def test_run_all_stdout_stderr_retcode(loader):
    ret = loader["cmd.run_all"](FAIL, python_shell=True)
    assert set(ret) == {"pid", "retcode", "stdout", "stderr"}
    assert (ret["retcode"], ret["stdout"], ret["stderr"]) == (3, "out", "err")
    assert isinstance(ret["pid"], int) and ret["pid"] > 0
    merged = loader["cmd.run_all"]("echo a; echo b >&2", python_shell=True, redirect_stderr=True)
    assert (merged["stdout"], merged["stderr"]) == ("a\nb", "")
    assert loader["cmd.run_stdout"](FAIL, python_shell=True) == "out"
    assert loader["cmd.run_stderr"](FAIL, python_shell=True) == "err"
    assert loader["cmd.retcode"](FAIL, python_shell=True) == 3
    assert loader["cmd.retcode"]("true") == 0


def test_ignore_retcode(loader, caplog):
    with caplog.at_level(logging.ERROR):
        assert loader["cmd.run"]("exit 3", python_shell=True, ignore_retcode=True) == ""
    assert "retcode" not in loader.pack["__context__"]
    assert "failed with return code" not in caplog.text


def test_rstrip(loader):
    assert loader["cmd.run"]('printf "a  \\n\\n"', python_shell=True) == "a"
    assert loader["cmd.run"]('printf "a  \\n"', python_shell=True, rstrip=False) == "a  \n"


def test_missing_executable(loader):
    with pytest.raises(CommandExecutionError, match="Unable to run command"):
        loader["cmd.run_all"]("nonexistent_cmd_xyz arg")
    with pytest.raises(CommandExecutionError, match="nonexistent_cmd_xyz"):
        loader["cmd.retcode"]("nonexistent_cmd_xyz")
    # through a shell it is the shell's 127, not an error
    ret = loader["cmd.run_all"]("nonexistent_cmd_xyz arg", python_shell=True)
    assert ret["retcode"] == 127 and "not found" in ret["stderr"]


def test_empty_command(loader):
    with pytest.raises(SaltInvocationError):
        loader["cmd.run"]("")
    with pytest.raises(SaltInvocationError):
        loader["cmd.run_all"]("   ", python_shell=True)


def test_bad_quotes(loader):
    with pytest.raises(SaltInvocationError, match="Cannot split"):
        loader["cmd.run"]('echo "unclosed')


def test_cwd(loader, tmp_path):
    assert loader["cmd.run"]("pwd", cwd=str(tmp_path)) == str(tmp_path)
    assert loader["cmd.run"]("pwd") == os.path.expanduser("~")
    with pytest.raises(CommandExecutionError, match="either not absolute or does not exist"):
        loader["cmd.run_all"]("pwd", cwd="/nonexistent")
    with pytest.raises(CommandExecutionError, match="either not absolute"):
        loader["cmd.run_all"]("pwd", cwd="relative/dir")


def test_timeout(loader):
    ret = loader["cmd.run_all"]("sleep 60", timeout=0.3)
    assert ret["retcode"] == 1
    assert ret["stdout"] == "sleep 60 : Timed out after 0.3 seconds"
    assert ret["stderr"] == ""


def _running(argv: list[str]) -> list[int]:
    """The pids of this host's processes whose command line is ``argv``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    if fh.read().split(b"\0")[:-1] == [a.encode() for a in argv]:
                        found.append(int(entry))
            except OSError:
                continue
    return found


def test_timeout_kills_children(loader):
    # a child left running keeps the output pipe open: the call would last its whole 60 s; the
    # children are gone when it returns (its duration: bench/timebounds.py)
    marker = ["sleep", "60.123"]  # a command line no other process has
    ret = loader["cmd.run_all"]("sleep 60.123 & sleep 60.123; wait", python_shell=True, timeout=0.3)
    assert ret["retcode"] == 1
    wait_until(lambda: not _running(marker), timeout=5, what="the timed-out command's children to end")


def test_env(loader):
    assert loader["cmd.run"]("echo $FOO", python_shell=True, env={"FOO": "bar"}) == "bar"
    assert loader["cmd.run"]("echo $FOO", python_shell=True, env=[{"FOO": "x"}]) == "x"
    assert loader["cmd.run"]("echo ${A-unset}", python_shell=True, env=["A"]) == ""
    out = loader["cmd.run"]("env", clean_env=True)
    names = {line.split("=", 1)[0] for line in out.splitlines()}
    assert "HOME" not in names and "LC_CTYPE" in names
    assert loader["cmd.run"]("echo $LC_CTYPE", python_shell=True) == "C"
    assert loader["cmd.run"]("echo $LC_CTYPE", python_shell=True, reset_system_locale=False) == os.environ.get(
        "LC_CTYPE", ""
    )
    with pytest.raises(SaltInvocationError, match="env must be a dict"):
        loader["cmd.run"]("true", env="FOO=bar")


def test_prepend_path(loader):
    out = loader["cmd.run"]("echo $PATH", python_shell=True, prepend_path="/opt/x")
    assert out.startswith("/opt/x:")


def test_stdin(loader):
    assert loader["cmd.run"]("cat", stdin="hello") == "hello"
    assert loader["cmd.run"]("echo hello", stdin="x") == "hello"


def test_umask(loader):
    assert loader["cmd.run"]("umask", python_shell=True, umask="077") == "0077"
    with pytest.raises(CommandExecutionError, match="Invalid umask: '999'"):
        loader["cmd.run_all"]("true", umask="999")


def test_success_retcodes(loader):
    ret = loader["cmd.run_all"]("exit 2", python_shell=True, success_retcodes=[2])
    assert ret["retcode"] == 0
    assert loader["cmd.run_all"]("exit 2", python_shell=True, success_retcodes=2)["retcode"] == 0
    assert loader["cmd.run_all"]("exit 3", python_shell=True, success_retcodes=[2])["retcode"] == 3
    assert loader["cmd.run_all"]("echo ok; exit 4", python_shell=True, success_stdout=["ok"])["retcode"] == 0


def test_raise_err(loader):
    with pytest.raises(CommandExecutionError) as info:
        loader["cmd.run"]("echo nope; exit 2", python_shell=True, raise_err=True)
    assert info.value.info["retcode"] == 2
    assert loader["cmd.run"]("echo fine", raise_err=True) == "fine"


def test_hide_output(loader):
    assert loader["cmd.run"]("echo hi", hide_output=True) == ""
    ret = loader["cmd.run_all"]("echo hi", hide_output=True)
    assert ret["stdout"] == "" and ret["retcode"] == 0


def test_list_command(loader):
    assert loader["cmd.run"](["echo", "a b", "c"]) == "a b c"
    assert loader["cmd.run"](["echo", "a|b"], python_shell=True) == "a|b"


def test_non_utf8_output(loader, caplog):
    with caplog.at_level(logging.ERROR):
        out = loader["cmd.run"](r'printf "\377\376abc"', python_shell=True)
    assert out.endswith("abc") and "\ufffd" in out
    assert "non-decodable" in caplog.text


def test_runas(loader):
    with pytest.raises(CommandExecutionError, match="User 'nouserxx' is not available"):
        loader["cmd.run_all"]("whoami", runas="nouserxx")
    import pwd

    me = pwd.getpwuid(os.geteuid()).pw_name
    assert loader["cmd.run"]("whoami", runas=me) == me


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root")
def test_runas_other_user_as_root(loader):
    import pwd

    try:
        pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no nobody user")
    assert loader["cmd.run"]("whoami", runas="nobody", cwd="/tmp") == "nobody"
    assert loader["cmd.run"]("id -u", runas="nobody", cwd="/tmp") == str(pwd.getpwnam("nobody").pw_uid)


def test_which_and_has_exec(loader):
    assert loader["cmd.which"]("sh").endswith("/sh")
    assert loader["cmd.which"]("nonex_zz") is None
    assert loader["cmd.has_exec"]("sh") is True
    assert loader["cmd.has_exec"]("nonex_zz") is False
    assert loader["cmd.which_bin"](["nonex_zz", "sh"]).endswith("/sh")


def test_run_bg(loader, tmp_path):
    marker = tmp_path / "done"
    ret = loader["cmd.run_bg"](f"touch {marker}")
    assert isinstance(ret["pid"], int)
    wait_until(marker.exists, 10, "the background command to run")
    with pytest.raises(CommandExecutionError):
        loader["cmd.run_bg"]("nonexistent_cmd_xyz")


def test_exec_code(loader):
    assert loader["cmd.exec_code"]("sh", "echo from-code") == "from-code"


def test_positional_arguments_follow_salt_order(loader, tmp_path):
    assert loader["cmd.run"]("pwd", str(tmp_path)) == str(tmp_path)
    assert loader["cmd.run_all"]("pwd", str(tmp_path))["stdout"] == str(tmp_path)
    assert loader["cmd.run_stdout"]("cat", None, "in") == "in"
    assert loader["cmd.retcode"]("pwd", str(tmp_path)) == 0
    with pytest.raises(SaltInvocationError, match="given twice"):
        loader["cmd.run_all"]("pwd", str(tmp_path), cwd="/")
