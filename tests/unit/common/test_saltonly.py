"""common/saltonly.py: every option Salt 3007's ``salt``, ``salt-call`` and ``salt-run`` take is
either the briny command's own or refused by name (exit 2), never "unrecognized arguments"."""

from __future__ import annotations

import pytest

from briny.common import saltonly
from briny.common.exceptions import UsageError
from briny.master import opcli, runcli
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
}
PARSERS = {"salt": opcli.build_parser, "salt-call": call.build_parser, "salt-run": runcli.build_parser}


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
    for names in (saltonly.BRINY, saltonly.BRINY_CALL, saltonly.BRINY_RUN):
        assert set(names) <= set(saltonly.OPTIONS)
