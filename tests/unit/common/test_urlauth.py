"""HTTP basic-auth credentials put into URLs and redacted, as Salt 3007's git modules show them."""

import pytest

from briny.common.urlauth import add_http_basic_auth, redact_http_basic_auth


def test_add_puts_user_and_password_percent_encoded():
    assert add_http_basic_auth("https://h/x.git", "u", "p") == "https://u:p@h/x.git"
    assert add_http_basic_auth("https://h:8443/x", "a@b", "p:w/d") == "https://a%40b:p%3Aw%2Fd@h:8443/x"
    assert add_http_basic_auth("https://h/x", "u") == "https://u@h/x"


def test_add_without_credentials_leaves_any_url():
    assert add_http_basic_auth("file:///srv/x.git") == "file:///srv/x.git"
    assert add_http_basic_auth("git@h:x.git", https_only=True) == "git@h:x.git"


def test_add_refuses_other_schemes_when_https_only():
    with pytest.raises(ValueError, match="^Basic Auth only supported for HTTPS$"):
        add_http_basic_auth("http://h/x", "u", "p", https_only=True)
    assert add_http_basic_auth("http://h/x", "u", "p") == "http://u:p@h/x"


def test_redact_hides_credentials_in_urls_and_messages():
    assert redact_http_basic_auth("https://u:p@h/x") == "https://<redacted>@h/x"
    assert redact_http_basic_auth("HTTP://u@h/x") == "HTTP://<redacted>@h/x"
    msg = "Command 'git clone -- https://u:s3cret@h/x /t' failed: fatal"
    assert redact_http_basic_auth(msg) == "Command 'git clone -- https://<redacted>@h/x /t' failed: fatal"
    assert "s3cret" not in redact_http_basic_auth("a\nhttps://u:s3cret@h/x\nb")


def test_redact_leaves_the_rest():
    assert redact_http_basic_auth("ssh://git@h/x") == "ssh://git@h/x"
    assert redact_http_basic_auth(None) is None
    assert redact_http_basic_auth(["https://u:p@h"]) == ["https://u:p@h"]
