"""The shared ``-c/--config-dir`` option and what a missing folder means (``common/cliargs.py``)."""

from __future__ import annotations

import argparse

import pytest

from briny.common.cliargs import DEFAULT_CONFIG_DIR, add_config_dir, config_dir
from briny.common.exceptions import ConfigError


def test_option_and_its_default(monkeypatch):
    monkeypatch.delenv("BRINY_CONFIG_DIR", raising=False)
    p = argparse.ArgumentParser()
    add_config_dir(p, "minion")
    assert p.parse_args([]).config_dir == DEFAULT_CONFIG_DIR == "/etc/briny"
    assert p.parse_args(["-c", "/x"]).config_dir == "/x"
    assert "'minion' config file" in p.format_help()
    monkeypatch.setenv("BRINY_CONFIG_DIR", "/from/env")
    p = argparse.ArgumentParser()
    add_config_dir(p, "master")
    assert p.parse_args([]).config_dir == "/from/env"


def test_config_dir(tmp_path, monkeypatch):
    from briny.common import cliargs

    assert config_dir(str(tmp_path)) == str(tmp_path)
    with pytest.raises(ConfigError, match="does not exist .use -c DIR."):
        config_dir(str(tmp_path / "nope"))
    missing_default = str(tmp_path / "etc-briny")
    monkeypatch.setattr(cliargs, "DEFAULT_CONFIG_DIR", missing_default)
    assert config_dir(missing_default) is None  # the default folder may be missing: built-in defaults
    with pytest.raises(ConfigError):
        config_dir(missing_default, required=True)
