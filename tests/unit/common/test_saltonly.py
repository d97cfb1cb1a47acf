"""common/saltonly.py: every option Salt 3007's ``salt``, ``salt-call``, ``salt-run``, ``salt-key`` and
``salt-cp`` take is either the briny command's own or refused by name (exit 2), never "unrecognized
arguments"."""

from __future__ import annotations

import pytest

from briny.common import saltonly
from briny.common.exceptions import UsageError
from briny.master import cpcli, keycli, opcli, runcli
from briny.minion import call

# The option strings of Salt 3007.17's --help (names only), per command.
SALT_OPTIONS = {
    "salt": """--args-separator --args-stdin --async --auth --batch --batch-safe-limit --batch-safe-size
--batch-size --batch-wait --compound --config-dir --config-dump --delimiter --doc --documentation --eauth
--executor-opts --external-auth --failhard --force-color --force-colour --grain --grain-pcre --hard-crash
--hide-timeout --hosts --ipcidr --list --log-file --log-file-level --log-level --make-token --metadata
--module-executors --no-color --no-colour --no-parse --nodegroup --out --out-file --out-file-append --out-indent
--output --output-diff --output-file --output-file-append --output-indent --password --pcre --pillar
--pillar-pcre --preview-target --progress --range --return --return_config --return_kwargs --saltfile --show-jid
--state-output --state-verbose --state_output --state_verbose --static --subset --summary --timeout --username
--verbose -C -E -G -H -I -J -L -N -P -R -S -T -a -b -c -d -l -p -s -t -v""",
    "salt-call": """--args-stdin --cachedir --config-dir --doc --documentation --enable-profiling --executor-opts
--file-root --force-color --force-colour --grains --hard-crash --id --local --log-file --log-file-level
--log-level --master --metadata --module-dirs --module-executors --no-color --no-colour --no-parse
--no-return-event --out --out-file --out-file-append --out-indent --output --output-diff --output-file
--output-file-append --output-indent
--pillar-root --priv --profiling-path --proxyid --refresh-grains-cache --retcode-passthrough --return --saltfile
--set-metadata --skip-grains --state-output --state-verbose --state_output --state_verbose --states-dir --timeout
-c -d -g -l -m -t""",
    "salt-run": """--args-stdin --async --auth --config-dir --doc --documentation --eauth --enable-profiling
--external-auth --force-color --force-colour --hard-crash --jid --log-file --log-file-level --log-level
--make-token --no-color --no-colour --no-parse --out --out-file --out-file-append --out-indent --output
--output-file --output-file-append --output-indent --password --profiling-path --quiet --saltfile --skip-grains --timeout --username -T -a -c -d -l
-t""",
    "salt-key": """--accept --accept-all --auth --auto-create --config-dir --delete --delete-all --eauth
--external-auth --finger --finger-all --force-color --force-colour --gen-keys --gen-keys-dir --gen-signature
--hard-crash --include-accepted --include-all --include-denied --include-rejected --keysize --list --list-all
--log-file --log-file-level --log-level --make-token --no-color --no-colour --out --out-file --out-file-append
--out-indent --output --output-file --output-file-append --output-indent --password --preserve-minions --print
--print-all --priv --pub --quiet --reject --reject-all --rotate-aes-key --saltfile --signature-path --state-output
--state-verbose --state_output --state_verbose --user --username --yes -A -D -F -L -P -R -T -a -c -d -f -l -p -q
-r -u -y""",
    "salt-cp": """--chunked --config-dir --delimiter --force-color --force-colour --grain --grain-pcre --hard-crash
--hosts --list --log-file --log-file-level --log-level --no-color --no-colour --no-compression --nodegroup --out
--out-file --out-file-append --out-indent --output --output-file --output-file-append --output-indent --pcre
--range --saltfile --state-output --state-verbose --state_output --state_verbose --timeout -C -E -G -H -L -N -P
-R -c -l -n -t""",
}
PARSERS = {
    "salt": opcli.build_parser,
    "salt-call": call.build_parser,
    "salt-run": runcli.build_parser,
    "salt-key": keycli.build_parser,
    "salt-cp": cpcli.build_parser,
}


@pytest.mark.parametrize("command", sorted(SALT_OPTIONS))
def test_every_salt_option_is_the_command_s_own_or_refused_by_name(command):
    parser = PARSERS[command]()
    known = {flag: action for action in parser._actions for flag in action.option_strings}
    missing = sorted(flag for flag in SALT_OPTIONS[command].split() if flag not in known)
    assert missing == [], f"{command}: Salt options briny's parser would call unrecognized"


def test_refuse_names_each_option_and_its_value():
    parser = opcli.build_parser()
    ns = parser.parse_intermixed_args(["--return", "mysql", "-T", "*", "test.ping"])
    with pytest.raises(UsageError) as info:
        saltonly.refuse("briny", ns, "nothing was sent")
    assert str(info.value) == (
        "briny: --make-token (external auth tokens), --return mysql (returners) are Salt options briny does not "
        "support yet; nothing was sent (docs/not-yet.md)"
    )
    saltonly.refuse("briny", parser.parse_intermixed_args(["*", "test.ping"]), "nothing was sent")  # none given


def test_each_command_s_list_names_known_options():
    for names in (saltonly.BRINY, saltonly.BRINY_CALL, saltonly.BRINY_RUN, saltonly.BRINY_KEY, saltonly.BRINY_CP):
        assert set(names) <= set(saltonly.OPTIONS)


def test_briny_key_refuses_gen_keys_by_name(tmp_path):
    import io

    (tmp_path / "master").write_text(f"root_dir: {tmp_path}\n")
    out, err = io.StringIO(), io.StringIO()
    assert keycli.run(["-c", str(tmp_path), "--gen-keys", "web1"], out=out, err=err) == 2
    assert err.getvalue() == (
        "briny-key: --gen-keys web1 (generating key pairs with the key command) is a Salt option briny does not "
        "support yet; no key was changed (docs/not-yet.md)\n"
    )
    assert not (tmp_path / "web1.pem").exists()


def test_briny_cp_refuses_hosts_by_name():
    import io

    err = io.StringIO()
    assert cpcli.run(["-H", "*", "/etc/hostname", "/tmp/x"], stdout=io.StringIO(), stderr=err) == 2
    assert err.getvalue().startswith("briny-cp: --hosts (salt-cloud hosts) is a Salt option briny does not support yet")
